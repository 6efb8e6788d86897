/* jsonschema_validate.c: JSON Schema draft 4: validating an instance with compiled nodes,
 * collecting every failure with its instance path and schema path. */
#include "codec/jsonschema_private.h"

#include "base/buf.h"
#include "base/utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- validating ---- */

/* Where in the instance: a chain up to the root, formatted only for a failure. */
struct where {
    const struct where *up;
    const char *key;
    size_t index;
};

struct check {
    struct jsonschema *s;
    json_t *errors;
    size_t max;
    unsigned depth; /* schemas entered and not yet left: a $ref may lead back to itself */
};

/* Deeper than any instance (YAML's max_depth is 200) needs, through $refs and combinators;
 * a schema that refers to itself without going into the instance stops here. */
#define MAX_DEPTH 2000

static void format_where(struct buf *b, const struct where *w)
{
    if (!w) {
        buf_addc(b, '$');
        return;
    }
    format_where(b, w->up);
    if (w->key)
        buf_printf(b, ".%s", w->key);
    else
        buf_printf(b, "[%zu]", w->index);
}

static int fail(struct check *c, const struct node *n, const struct where *w, const char *keyword,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(struct check *c, const struct node *n, const struct where *w, const char *keyword,
                const char *fmt, ...)
{
    char message[256];
    struct buf path = BUF_INIT, spath = BUF_INIT;
    va_list ap;
    if (!c->errors || (c->max && json_array_size(c->errors) >= c->max))
        return 0;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    format_where(&path, w);
    buf_printf(&spath, "%s/%s", n->spath, keyword);
    json_array_append_new(c->errors,
                          json_pack("{s:s, s:s, s:s}", "path", buf_cstr(&path), "schema_path",
                                    buf_cstr(&spath), "message", message));
    buf_release(&path);
    buf_release(&spath);
    return 0;
}

int jsonschema_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!jsonschema_equal(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        const char *key;
        json_t *v;
        if (json_object_size(a) != json_object_size(b))
            return 0;
        json_object_foreach ((json_t *)a, key, v) {
            const json_t *other = json_object_get(b, key);
            if (!other || !jsonschema_equal(v, other))
                return 0;
        }
        return 1;
    }
    return json_equal(a, b);
}

static unsigned type_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL: return T_NULL;
    case JSON_TRUE:
    case JSON_FALSE: return T_BOOL;
    case JSON_INTEGER: return T_INT | T_NUM;
    case JSON_REAL:
        return floor(json_real_value(v)) == json_real_value(v) && isfinite(json_real_value(v))
                   ? T_INT | T_NUM
                   : T_NUM;
    case JSON_STRING: return T_STR;
    case JSON_ARRAY: return T_ARR;
    default: return T_OBJ;
    }
}

static int valid(struct check *c, struct node *n, const json_t *v, const struct where *w);

/* Validity under a subschema without collecting its failures (anyOf, oneOf, not). */
static int quietly(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    struct check q = {.s = c->s, .depth = c->depth};
    return valid(&q, n, v, w);
}

static int matches(pcre2_code *re, const char *s, size_t len)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc = md ? pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, md, NULL) : -1;
    pcre2_match_data_free(md);
    return rc >= 0;
}

static int valid_number(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    double x = json_number_value(v);
    int ok = 1;
    if (n->minimum) {
        double m = json_number_value(n->minimum);
        if (n->excl_min ? x <= m : x < m)
            ok =
                fail(c, n, w, "minimum", "is less than %s%g", n->excl_min ? "or equal to " : "", m);
    }
    if (n->maximum) {
        double m = json_number_value(n->maximum);
        if (n->excl_max ? x >= m : x > m)
            ok =
                fail(c, n, w, "maximum", "is more than %s%g", n->excl_max ? "or equal to " : "", m);
    }
    if (n->multiple_of > 0) {
        double q = x / n->multiple_of;
        if (!isfinite(q) || fabs(q - nearbyint(q)) > 1e-9 * fmax(1.0, fabs(q)))
            ok = fail(c, n, w, "multipleOf", "is not a multiple of %g", n->multiple_of);
    }
    return ok;
}

static int valid_string(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v), cps = utf8_count(s, len);
    int ok = 1;
    if (n->min_len >= 0 && cps < (size_t)n->min_len)
        ok = fail(c, n, w, "minLength", "shorter than %ld characters", n->min_len);
    if (n->max_len >= 0 && cps > (size_t)n->max_len)
        ok = fail(c, n, w, "maxLength", "longer than %ld characters", n->max_len);
    if (n->pattern && !matches(n->pattern, s, len))
        ok = fail(c, n, w, "pattern", "does not match the pattern %s",
                  json_string_value(json_object_get(n->json, "pattern")));
    return ok;
}

static int valid_array(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    size_t size = json_array_size(v);
    int ok = 1;
    if (n->min_items >= 0 && size < (size_t)n->min_items)
        ok = fail(c, n, w, "minItems", "fewer than %ld items", n->min_items);
    if (n->max_items >= 0 && size > (size_t)n->max_items)
        ok = fail(c, n, w, "maxItems", "more than %ld items", n->max_items);
    for (size_t i = 0; i < size && (ok || c->errors); i++) {
        struct where here = {.up = w, .index = i};
        struct node *item =
            n->tuple ? (i < n->ntuple ? n->tuple[i] : n->additional_items) : n->items;
        if (n->tuple && i >= n->ntuple && n->no_additional_items) {
            ok = fail(c, n, w, "additionalItems", "more than %zu items", n->ntuple);
            break;
        }
        if (item && !valid(c, item, json_array_get(v, i), &here))
            ok = 0;
    }
    for (size_t i = 0; n->unique && i < size; i++)
        for (size_t j = i + 1; j < size; j++)
            if (jsonschema_equal(json_array_get(v, i), json_array_get(v, j))) {
                ok = fail(c, n, w, "uniqueItems", "items %zu and %zu are equal", i, j);
                i = size;
                break;
            }
    return ok;
}

/* The schemas a property falls under: properties, patternProperties, else additional. */
static int valid_property(struct check *c, struct node *n, const char *key, const json_t *value,
                          const struct where *w)
{
    struct where here = {.up = w, .key = key};
    int ok = 1, covered = 0;
    for (size_t i = 0; i < n->nprops; i++)
        if (strcmp(n->props[i].name, key) == 0) {
            covered = 1;
            ok &= valid(c, n->props[i].node, value, &here);
        }
    for (size_t i = 0; i < n->npatterns; i++)
        if (matches(n->patterns[i].re, key, strlen(key))) {
            covered = 1;
            ok &= valid(c, n->patterns[i].node, value, &here);
        }
    if (!covered && n->no_additional)
        ok = fail(c, n, w, "additionalProperties", "property '%s' is not allowed", key);
    else if (!covered && n->additional)
        ok &= valid(c, n->additional, value, &here);
    return ok;
}

static int valid_object(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    size_t size = json_object_size(v), i;
    const char *key;
    json_t *value;
    const json_t *name;
    int ok = 1;
    if (n->min_props >= 0 && size < (size_t)n->min_props)
        ok = fail(c, n, w, "minProperties", "fewer than %ld properties", n->min_props);
    if (n->max_props >= 0 && size > (size_t)n->max_props)
        ok = fail(c, n, w, "maxProperties", "more than %ld properties", n->max_props);
    json_array_foreach (n->required, i, name) {
        if (json_is_string(name) && !json_object_get(v, json_string_value(name)))
            ok = fail(c, n, w, "required", "property '%s' is required", json_string_value(name));
    }
    json_object_foreach ((json_t *)v, key, value) {
        if ((n->nprops || n->npatterns || n->no_additional || n->additional) &&
            !valid_property(c, n, key, value, w))
            ok = 0;
    }
    for (size_t d = 0; d < n->ndeps; d++) {
        if (!json_object_get(v, n->deps[d].name))
            continue;
        if (n->deps[d].node && !valid(c, n->deps[d].node, v, w))
            ok = 0;
        json_array_foreach (n->deps[d].list, i, name) {
            if (json_is_string(name) && !json_object_get(v, json_string_value(name)))
                ok = fail(c, n, w, "dependencies", "'%s' needs property '%s'", n->deps[d].name,
                          json_string_value(name));
        }
    }
    return ok;
}

static int valid_combinators(struct check *c, struct node *n, const json_t *v,
                             const struct where *w)
{
    int ok = 1;
    size_t passed = 0;
    for (size_t i = 0; i < n->nall; i++)
        ok &= valid(c, n->all[i], v, w);
    for (size_t i = 0; i < n->nany && !passed; i++)
        passed += quietly(c, n->any[i], v, w);
    if (n->nany && !passed)
        ok = fail(c, n, w, "anyOf", "matches none of the schemas");
    passed = 0;
    for (size_t i = 0; i < n->none; i++)
        passed += quietly(c, n->one[i], v, w);
    if (n->none && passed != 1)
        ok = fail(c, n, w, "oneOf", "matches %zu of the schemas, not exactly one", passed);
    if (n->not &&quietly(c, n->not, v, w))
        ok = fail(c, n, w, "not", "matches a schema it must not");
    return ok;
}

static int valid_here(struct check *c, struct node *n, const json_t *v, const struct where *w);

static int valid(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    int ok;
    if (c->depth >= MAX_DEPTH)
        return fail(c, n, w, "$ref", "the schema refers to itself without end");
    c->depth++;
    ok = valid_here(c, n, v, w);
    c->depth--;
    return ok;
}

static int valid_here(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    unsigned type = type_of(v);
    int ok = 1;
    if (n->ref) {
        struct node *target = jsonschema_resolve_ref(c->s, n);
        if (!target)
            return fail(c, n, w, "$ref", "cannot resolve %s", n->ref);
        return valid(c, target, v, w);
    }
    if (n->types && !(n->types & type))
        return fail(c, n, w, "type", "is not of the type the schema names");
    if (n->enum_values) {
        size_t i, found = 0;
        const json_t *e;
        json_array_foreach (n->enum_values, i, e)
            found |= jsonschema_equal(e, v);
        if (!found)
            ok = fail(c, n, w, "enum", "is none of the allowed values");
    }
    if (type & T_NUM)
        ok &= valid_number(c, n, v, w);
    else if (type == T_STR)
        ok &= valid_string(c, n, v, w);
    else if (type == T_ARR)
        ok &= valid_array(c, n, v, w);
    else if (type == T_OBJ)
        ok &= valid_object(c, n, v, w);
    if (ok || c->errors)
        ok &= valid_combinators(c, n, v, w);
    return ok;
}

int jsonschema_validate(struct jsonschema *s, const json_t *instance, json_t *errors,
                        size_t max_errors)
{
    struct check c = {.s = s, .errors = errors, .max = max_errors};
    return valid(&c, s->root, instance, NULL);
}
