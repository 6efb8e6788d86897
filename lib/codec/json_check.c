/* json_check.c: a JSON syntax check in one pass, without allocating. */
#include "codec/json_check.h"

#include "base/utf8.h"

#include <ctype.h>
#include <string.h>

struct scan {
    const unsigned char *p, *end;
    int depth;
};

static void space(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int literal(struct scan *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return 0;
    s->p += n;
    return 1;
}

static int digits(struct scan *s)
{
    const unsigned char *start = s->p;
    while (s->p < s->end && isdigit(*s->p))
        s->p++;
    return s->p > start;
}

static int number(struct scan *s)
{
    if (s->p < s->end && *s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (!digits(s))
        return 0;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!digits(s))
            return 0;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!digits(s))
            return 0;
    }
    return 1;
}

static int string(struct scan *s)
{
    s->p++; /* the opening quote */
    while (s->p < s->end) {
        unsigned char c = *s->p;
        if (c == '"') {
            s->p++;
            return 1;
        }
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            if (++s->p >= s->end)
                return 0;
            if (*s->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (s->p + i >= s->end || !isxdigit(s->p[i]))
                        return 0;
                s->p += 5;
            } else if (strchr("\"\\/bfnrt", *s->p) && *s->p) {
                s->p++;
            } else {
                return 0;
            }
            continue;
        }
        if (c < 0x80) {
            s->p++;
        } else {
            int n = utf8_sequence(s->p, (size_t)(s->end - s->p));
            if (!n)
                return 0;
            s->p += n;
        }
    }
    return 0;
}

static int value(struct scan *s);

static int members(struct scan *s, int object)
{
    char close = object ? '}' : ']';
    if (++s->depth > 512)
        return 0;
    s->p++;
    space(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        s->depth--;
        return 1;
    }
    for (;;) {
        space(s);
        if (object) {
            if (s->p >= s->end || *s->p != '"' || !string(s))
                return 0;
            space(s);
            if (s->p >= s->end || *s->p++ != ':')
                return 0;
        }
        if (!value(s))
            return 0;
        space(s);
        if (s->p >= s->end)
            return 0;
        if (*s->p == ',') {
            s->p++;
            continue;
        }
        if (*s->p++ != close)
            return 0;
        s->depth--;
        return 1;
    }
}

static int value(struct scan *s)
{
    space(s);
    if (s->p >= s->end)
        return 0;
    switch (*s->p) {
    case '{': return members(s, 1);
    case '[': return members(s, 0);
    case '"': return string(s);
    case 't': return literal(s, "true");
    case 'f': return literal(s, "false");
    case 'n': return literal(s, "null");
    default: return number(s);
    }
}

int json_text_valid(const char *text, size_t n)
{
    struct scan s = {(const unsigned char *)text, (const unsigned char *)text + n, 0};
    if (!text || !value(&s))
        return 0;
    space(&s);
    return s.p == s.end;
}
