/* yaml_scalar.c: PyYAML's YAML 1.1 implicit resolvers (null, bool, int, float) as plain C. */
#include "codec/yaml_scalar.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* text is one of words (its first byte compared first: every scalar read or written asks). */
static int text_is(const char *text, size_t len, const char *const *words)
{
    char first = len ? text[0] : '\0';
    for (; *words; words++)
        if ((*words)[0] == first && strlen(*words) == len && memcmp(*words, text, len) == 0)
            return 1;
    return 0;
}

static int is_digit_in(char c, int base)
{
    if (base == 2)
        return c == '0' || c == '1';
    if (base == 8)
        return c >= '0' && c <= '7';
    if (base == 10)
        return c >= '0' && c <= '9';
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* [digits of base or _]+ over [p, end); at least one character. */
static int all_digits(const char *p, const char *end, int base)
{
    if (p >= end)
        return 0;
    for (; p < end; p++)
        if (*p != '_' && !is_digit_in(*p, base))
            return 0;
    return 1;
}

/* (:[0-5]?[0-9])+ over [p, end) */
static int sexagesimal_tail(const char *p, const char *end)
{
    if (p >= end)
        return 0;
    while (p < end) {
        const char *q;
        if (*p != ':')
            return 0;
        q = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p - q == 0 || p - q > 2 || (p - q == 2 && *q > '5'))
            return 0;
    }
    return 1;
}

/* [1-9][0-9_]* followed by a sexagesimal tail, over [p, end) */
static int sexagesimal(const char *p, const char *end)
{
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (!colon || *p < '1' || *p > '9' || !all_digits(p, colon, 10))
        return 0;
    return sexagesimal_tail(colon, end);
}

static int is_int(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    if (p < end && (*p == '-' || *p == '+'))
        p++;
    if (end - p >= 2 && p[0] == '0' && p[1] == 'b')
        return all_digits(p + 2, end, 2);
    if (end - p >= 2 && p[0] == '0' && p[1] == 'x')
        return all_digits(p + 2, end, 16);
    if (end - p >= 2 && p[0] == '0')
        return all_digits(p + 1, end, 8);
    if (end - p == 1 && p[0] == '0')
        return 1;
    if (p < end && *p >= '1' && *p <= '9' && all_digits(p, end, 10))
        return 1;
    return sexagesimal(p, end);
}

/* [eE][-+][0-9]+ over [p, end), or nothing */
static int exponent_ok(const char *p, const char *end)
{
    if (p == end)
        return 1;
    if (end - p < 3 || (*p != 'e' && *p != 'E') || (p[1] != '-' && p[1] != '+'))
        return 0;
    for (p += 2; p < end; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* [0-9_]* then an optional exponent, over [p, end) */
static int fraction_ok(const char *p, const char *end)
{
    while (p < end && (*p == '_' || (*p >= '0' && *p <= '9')))
        p++;
    return exponent_ok(p, end);
}

static int is_float(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    const char *dot = memchr(text, '.', len);
    if (!dot)
        return 0;
    if (p == dot) /* \.[0-9_]+ exponent? */
        return end - p > 1 && (p[1] == '_' || (p[1] >= '0' && p[1] <= '9')) &&
               fraction_ok(p + 1, end);
    if (*p == '-' || *p == '+')
        p++;
    if (p >= dot || *p < '0' || *p > '9')
        return 0;
    if (all_digits(p, dot, 10))
        return fraction_ok(dot + 1, end);
    if (sexagesimal(p, dot)) {
        for (const char *q = dot + 1; q < end; q++)
            if (*q != '_' && (*q < '0' || *q > '9'))
                return 0;
        return 1;
    }
    return 0;
}

enum yaml_scalar_kind yaml_scalar_kind(const char *text, size_t len)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const bools[] = {"yes",  "Yes",  "YES",   "no",    "No",    "NO", "true",
                                        "True", "TRUE", "false", "False", "FALSE", "on", "On",
                                        "ON",   "off",  "Off",   "OFF",   NULL};
    static const char *const specials[] = {".inf",  ".Inf",  ".INF",  "+.inf", "+.Inf",
                                           "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
                                           ".NaN",  ".NAN",  NULL};
    if (len <= 4 && text_is(text, len, nulls))
        return YAML_SCALAR_NULL;
    if (len == 0 || !strchr("-+0123456789.yYnNtTfFoO", text[0]))
        return YAML_SCALAR_STRING;
    if (len <= 5 && text_is(text, len, bools))
        return YAML_SCALAR_BOOL;
    if (len >= 4 && len <= 5 && text_is(text, len, specials))
        return YAML_SCALAR_SPECIAL_FLOAT;
    if (is_int(text, len))
        return YAML_SCALAR_INT;
    if (is_float(text, len))
        return YAML_SCALAR_FLOAT;
    return YAML_SCALAR_STRING;
}

/* Copies text without underscores into out (size outsize); 0, or -1 when it does not fit. */
static int strip_underscores(char *out, size_t outsize, const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '_')
            continue;
        if (n + 1 >= outsize)
            return -1;
        out[n++] = text[i];
    }
    out[n] = '\0';
    return 0;
}

static int bad_value(struct purser_error *err, const char *what, const char *text, size_t len)
{
    int shown = len > 40 ? 40 : (int)len;
    return purser_error_set(err, PURSER_EINVAL, "%s: '%.*s%s'", what, shown, text,
                            len > 40 ? "..." : "");
}

/* Base-60 digits "a:b:c" of a non-negative number into *out; -1 on overflow. */
static int sexagesimal_value(const char *digits, long double *out)
{
    long double value = 0;
    const char *p = digits;
    while (*p) {
        char *next;
        unsigned long part = strtoul(p, &next, 10);
        value = value * 60 + part;
        p = *next == ':' ? next + 1 : next;
        if (*next == '.') {
            value += strtold(next, NULL);
            break;
        }
    }
    *out = value;
    return 0;
}

static int int_from_text(json_t **out, const char *text, size_t len, struct purser_error *err)
{
    char digits[128];
    const char *p = digits;
    int negative = 0, base = 10;
    unsigned long long magnitude;
    char *end;

    if (strip_underscores(digits, sizeof(digits), text, len) || !is_int(text, len))
        return bad_value(err, "not an integer", text, len);
    if (*p == '-' || *p == '+')
        negative = *p++ == '-';
    if (strchr(p, ':')) {
        long double v;
        sexagesimal_value(p, &v);
        if (v > (long double)LLONG_MAX)
            return bad_value(err, "integer out of range", text, len);
        magnitude = (unsigned long long)v;
    } else {
        if (p[0] == '0' && p[1] == 'b')
            base = 2, p += 2;
        else if (p[0] == '0' && p[1] == 'x')
            base = 16, p += 2;
        else if (p[0] == '0' && p[1])
            base = 8, p += 1;
        errno = 0;
        magnitude = strtoull(p, &end, base);
        if (errno == ERANGE || *end)
            return bad_value(err, "integer out of range", text, len);
    }
    if (magnitude > (unsigned long long)LLONG_MAX + (negative ? 1 : 0))
        return bad_value(err, "integer out of range", text, len);
    *out = json_integer(negative ? (json_int_t)(0 - magnitude) : (json_int_t)magnitude);
    return *out ? 0 : PURSER_EINTERNAL;
}

static int float_from_text(json_t **out, const char *text, size_t len, struct purser_error *err)
{
    char digits[512];
    const char *p = digits;
    double value;
    int negative = 0;

    /* An explicit !!float also takes integer text ("1" is 1.0), as PyYAML does. */
    if (strip_underscores(digits, sizeof(digits), text, len) ||
        !(is_float(text, len) || is_int(text, len)))
        return bad_value(err, "not a float", text, len);
    if (*p == '-' || *p == '+')
        negative = *p++ == '-';
    if (strchr(p, ':')) {
        long double v;
        sexagesimal_value(p, &v);
        value = (double)v;
    } else {
        value = strtod(p, NULL);
    }
    if (!isfinite(value))
        return bad_value(err, "float out of range", text, len);
    *out = json_real(negative ? -value : value);
    return *out ? 0 : PURSER_EINTERNAL;
}

/* Base64 as YAML's !!binary holds it: the alphabet, whitespace and line breaks anywhere, and
 * at most two '=' at the end of a length that is a multiple of four. */
static int is_base64(const char *text, size_t len)
{
    size_t n = 0, pad = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '=') {
            pad++;
        } else if (pad || !(isalnum(c) || c == '+' || c == '/')) {
            return 0;
        }
        n++;
    }
    return n % 4 == 0 && pad <= 2;
}

/* Digits at *p: how many (at least min, at most max), moving *p past them. */
static size_t digits(const char **p, const char *end, size_t min, size_t max)
{
    size_t n = 0;
    while (*p < end && n < max && isdigit((unsigned char)**p))
        (*p)++, n++;
    return n >= min ? n : 0;
}

static int next_is(const char **p, const char *end, char c)
{
    return *p < end && **p == c ? ((*p)++, 1) : 0;
}

/* YAML 1.1's timestamp: yyyy-m-d, optionally followed by ('T' or spaces) h:mm:ss, a fraction,
 * and spaces then 'Z' or a +h[:mm] offset. */
static int is_timestamp(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    if (!digits(&p, end, 4, 4) || !next_is(&p, end, '-') || !digits(&p, end, 1, 2) ||
        !next_is(&p, end, '-') || !digits(&p, end, 1, 2))
        return 0;
    if (p == end)
        return 1;
    if (!next_is(&p, end, 'T') && !next_is(&p, end, 't')) {
        if (*p != ' ' && *p != '\t')
            return 0;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
    }
    if (!digits(&p, end, 1, 2) || !next_is(&p, end, ':') || !digits(&p, end, 2, 2) ||
        !next_is(&p, end, ':') || !digits(&p, end, 2, 2))
        return 0;
    if (next_is(&p, end, '.'))
        digits(&p, end, 0, len);
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || (next_is(&p, end, 'Z') && p == end))
        return 1;
    if (!next_is(&p, end, '+') && !next_is(&p, end, '-'))
        return 0;
    if (!digits(&p, end, 1, 2))
        return 0;
    if (next_is(&p, end, ':') && !digits(&p, end, 2, 2))
        return 0;
    return p == end;
}

int yaml_scalar_to_json(json_t **out, enum yaml_scalar_kind kind, const char *text, size_t len,
                        struct purser_error *err)
{
    *out = NULL;
    switch (kind) {
    case YAML_SCALAR_STRING: *out = json_stringn(text, len); break;
    case YAML_SCALAR_NULL:
        if (yaml_scalar_kind(text, len) != YAML_SCALAR_NULL)
            return bad_value(err, "not a null", text, len);
        *out = json_null();
        break;
    case YAML_SCALAR_BOOL:
        if (yaml_scalar_kind(text, len) != YAML_SCALAR_BOOL)
            return bad_value(err, "not a boolean", text, len);
        *out = json_boolean(strchr("yYtT", text[0]) || (len == 2 && strchr("oO", text[0])));
        break;
    case YAML_SCALAR_INT: return int_from_text(out, text, len, err);
    case YAML_SCALAR_FLOAT: return float_from_text(out, text, len, err);
    case YAML_SCALAR_SPECIAL_FLOAT:
        return bad_value(err, "infinity and NaN cannot be represented in JSON", text, len);
    case YAML_SCALAR_BINARY:
        if (!is_base64(text, len))
            return bad_value(err, "!!binary value is not base64", text, len);
        *out = json_stringn(text, len);
        break;
    case YAML_SCALAR_TIMESTAMP:
        if (!is_timestamp(text, len))
            return bad_value(err, "!!timestamp value is not a YAML timestamp", text, len);
        *out = json_stringn(text, len);
        break;
    }
    if (!*out)
        return purser_error_set(err, PURSER_EINVAL, "string is not valid UTF-8");
    return 0;
}
