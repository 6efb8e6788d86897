/* selector.c: parsing and evaluating Kubernetes label selectors. */
#include "resource/selector.h"

#include <ctype.h>
#include <string.h>

/* 1 when the n bytes at s are a label name: 1-63 alphanumerics, '-', '_', '.' inside. */
static int label_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
            return 0;
    return 1;
}

/* A DNS subdomain: dot-separated labels of lower-case alphanumerics and '-', at most 253. */
static int prefix_ok(const char *s, size_t n)
{
    size_t start = 0;
    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            size_t len = i - start;
            if (len == 0 || len > 63 || s[start] == '-' || s[i - 1] == '-')
                return 0;
            start = i + 1;
        } else if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-')) {
            return 0;
        }
    }
    return 1;
}

static int key_ok(const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return label_name_ok(key, strlen(key));
    return prefix_ok(key, (size_t)(slash - key)) && label_name_ok(slash + 1, strlen(slash + 1));
}

int selector_label_check(const char *where, const char *key, const char *value,
                         struct purser_error *err)
{
    if (!key_ok(key))
        return purser_error_set(err, PURSER_EINVAL,
                                "%s: key '%.80s' is not a label key (an optional DNS prefix and "
                                "'/', then 1 to 63 letters, digits, '-', '_' or '.', beginning "
                                "and ending with a letter or digit)",
                                where, key);
    if (value && *value && !label_name_ok(value, strlen(value)))
        return purser_error_set(err, PURSER_EINVAL,
                                "%s: value '%.80s' of key '%.80s' is not a label value (empty, "
                                "or 1 to 63 letters, digits, '-', '_' or '.', beginning and "
                                "ending with a letter or digit)",
                                where, value, key);
    return 0;
}

/* ---- parsing ---- */

struct scan {
    struct arena *arena;
    const char *text, *p;
    struct purser_error *err;
};

static void skip_space(struct scan *s)
{
    while (*s->p == ' ' || *s->p == '\t')
        s->p++;
}

static int is_word(char c)
{
    return isalnum((unsigned char)c) || strchr("-_./", c);
}

/* A key or value at s->p (may be empty), in the arena. */
static const char *word(struct scan *s)
{
    const char *start = s->p;
    while (*s->p && is_word(*s->p))
        s->p++;
    return arena_strndup(s->arena, start, (size_t)(s->p - start));
}

static int fault(struct scan *s, const char *what)
{
    return purser_error_set(s->err, PURSER_EINVAL, "labels: %s at character %zu of '%.100s'", what,
                            (size_t)(s->p - s->text) + 1, s->text);
}

/* "(a, b, c)" at s->p. */
static int value_set(struct scan *s, struct selector_requirement *r)
{
    size_t cap = 4;
    skip_space(s);
    if (*s->p != '(')
        return fault(s, "expected '(' to open the set of values");
    s->p++;
    if (!(r->values = arena_alloc(s->arena, cap * sizeof(*r->values))))
        return purser_error_set(s->err, PURSER_EINTERNAL, "out of memory");
    for (;;) {
        const char *v;
        skip_space(s);
        v = word(s);
        if (!v)
            return purser_error_set(s->err, PURSER_EINTERNAL, "out of memory");
        if (r->count == cap) {
            const char **more = arena_alloc(s->arena, 2 * cap * sizeof(*more));
            if (!more)
                return purser_error_set(s->err, PURSER_EINTERNAL, "out of memory");
            memcpy(more, r->values, cap * sizeof(*more));
            r->values = more;
            cap *= 2;
        }
        r->values[r->count++] = v;
        if (selector_label_check("labels", "x", v, s->err))
            return s->err->code;
        skip_space(s);
        if (*s->p == ')') {
            s->p++;
            return 0;
        }
        if (*s->p != ',')
            return fault(s, "expected ',' or ')' in the set of values");
        s->p++;
    }
}

static int requirement(struct scan *s, struct selector_requirement *r)
{
    int negated = 0;
    skip_space(s);
    if (*s->p == '!') {
        negated = 1;
        s->p++;
        skip_space(s);
    }
    r->key = word(s);
    if (!r->key)
        return purser_error_set(s->err, PURSER_EINTERNAL, "out of memory");
    if (!*r->key)
        return fault(s, "expected a label key");
    if (selector_label_check("labels", r->key, NULL, s->err))
        return s->err->code;
    skip_space(s);
    if (negated) {
        r->op = SELECTOR_NOT_EXISTS;
        return 0;
    }
    if (*s->p == '\0' || *s->p == ',') {
        r->op = SELECTOR_EXISTS;
        return 0;
    }
    if (*s->p == '=' || (s->p[0] == '!' && s->p[1] == '=')) {
        const char *v;
        r->op = *s->p == '!' ? SELECTOR_NE : SELECTOR_EQ;
        s->p += *s->p == '!' || s->p[1] == '=' ? 2 : 1;
        skip_space(s);
        if (!(v = word(s)) || !(r->values = arena_alloc(s->arena, sizeof(*r->values))))
            return purser_error_set(s->err, PURSER_EINTERNAL, "out of memory");
        r->values[0] = v;
        r->count = 1;
        return selector_label_check("labels", r->key, v, s->err);
    }
    if (strncmp(s->p, "in", 2) == 0 && !is_word(s->p[2])) {
        r->op = SELECTOR_IN;
        s->p += 2;
        return value_set(s, r);
    }
    if (strncmp(s->p, "notin", 5) == 0 && !is_word(s->p[5])) {
        r->op = SELECTOR_NOTIN;
        s->p += 5;
        return value_set(s, r);
    }
    return fault(s, "expected '=', '==', '!=', 'in', 'notin', ',' or the end");
}

int selector_parse(struct arena *arena, const char *text, struct selector *out,
                   struct purser_error *err)
{
    struct scan s = {.arena = arena, .text = text, .p = text, .err = err};
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (!(out->items = arena_calloc(arena, SELECTOR_MAX_REQUIREMENTS, sizeof(*out->items))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    skip_space(&s);
    /* a requirement, then the end or a ',' and the next (one is due after a ',') */
    for (int more = *s.p != '\0'; more;) {
        if (out->count == SELECTOR_MAX_REQUIREMENTS)
            rc = purser_error_set(err, PURSER_EINVAL, "labels: more than %d requirements",
                                  SELECTOR_MAX_REQUIREMENTS);
        if (!rc)
            rc = requirement(&s, &out->items[out->count++]);
        if (!rc)
            skip_space(&s);
        if (!rc && *s.p && *s.p != ',')
            rc = fault(&s, "expected ',' between requirements");
        more = !rc && *s.p;
        if (more)
            s.p++;
    }
    return rc;
}

/* ---- evaluating ---- */

static int in_set(const struct selector_requirement *r, const char *value)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->values[i], value) == 0)
            return 1;
    return 0;
}

int selector_matches(const struct selector *s, const json_t *labels)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct selector_requirement *r = &s->items[i];
        const char *v = json_string_value(json_object_get(labels, r->key));
        int ok;
        switch (r->op) {
        case SELECTOR_EQ:
        case SELECTOR_IN: ok = v && in_set(r, v); break;
        case SELECTOR_NE:
        case SELECTOR_NOTIN: ok = !v || !in_set(r, v); break;
        case SELECTOR_EXISTS: ok = v != NULL; break;
        default: ok = v == NULL; break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}
