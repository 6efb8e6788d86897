/* jsonschema.c: JSON Schema draft 4: compiling schemas into nodes, and validating with them. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "codec/jsonschema.h"

#include "base/arena.h"
#include "base/buf.h"

#include <math.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_URI "http://json-schema.org/draft-04/schema"

/* The draft 4 meta-schema (json-schema.org/draft-04/schema), for "$ref" to it. */
static const char meta_schema_text[] =
    "{\"id\":\"http://json-schema.org/draft-04/schema#\","
    "\"$schema\":\"http://json-schema.org/draft-04/schema#\","
    "\"description\":\"Core schema meta-schema\","
    "\"definitions\":{"
    "\"schemaArray\":{\"type\":\"array\",\"minItems\":1,\"items\":{\"$ref\":\"#\"}},"
    "\"positiveInteger\":{\"type\":\"integer\",\"minimum\":0},"
    "\"positiveIntegerDefault0\":{\"allOf\":[{\"$ref\":\"#/definitions/positiveInteger\"},"
    "{\"default\":0}]},"
    "\"simpleTypes\":{\"enum\":[\"array\",\"boolean\",\"integer\",\"null\",\"number\",\"object\","
    "\"string\"]},"
    "\"stringArray\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,"
    "\"uniqueItems\":true}},"
    "\"type\":\"object\","
    "\"properties\":{"
    "\"id\":{\"type\":\"string\"},\"$schema\":{\"type\":\"string\"},"
    "\"title\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"},\"default\":{},"
    "\"multipleOf\":{\"type\":\"number\",\"minimum\":0,\"exclusiveMinimum\":true},"
    "\"maximum\":{\"type\":\"number\"},\"exclusiveMaximum\":{\"type\":\"boolean\",\"default\":false},"
    "\"minimum\":{\"type\":\"number\"},\"exclusiveMinimum\":{\"type\":\"boolean\",\"default\":false},"
    "\"maxLength\":{\"$ref\":\"#/definitions/positiveInteger\"},"
    "\"minLength\":{\"$ref\":\"#/definitions/positiveIntegerDefault0\"},"
    "\"pattern\":{\"type\":\"string\",\"format\":\"regex\"},"
    "\"additionalItems\":{\"anyOf\":[{\"type\":\"boolean\"},{\"$ref\":\"#\"}],\"default\":{}},"
    "\"items\":{\"anyOf\":[{\"$ref\":\"#\"},{\"$ref\":\"#/definitions/schemaArray\"}],"
    "\"default\":{}},"
    "\"maxItems\":{\"$ref\":\"#/definitions/positiveInteger\"},"
    "\"minItems\":{\"$ref\":\"#/definitions/positiveIntegerDefault0\"},"
    "\"uniqueItems\":{\"type\":\"boolean\",\"default\":false},"
    "\"maxProperties\":{\"$ref\":\"#/definitions/positiveInteger\"},"
    "\"minProperties\":{\"$ref\":\"#/definitions/positiveIntegerDefault0\"},"
    "\"required\":{\"$ref\":\"#/definitions/stringArray\"},"
    "\"additionalProperties\":{\"anyOf\":[{\"type\":\"boolean\"},{\"$ref\":\"#\"}],"
    "\"default\":{}},"
    "\"definitions\":{\"type\":\"object\",\"additionalProperties\":{\"$ref\":\"#\"},"
    "\"default\":{}},"
    "\"properties\":{\"type\":\"object\",\"additionalProperties\":{\"$ref\":\"#\"},"
    "\"default\":{}},"
    "\"patternProperties\":{\"type\":\"object\",\"additionalProperties\":{\"$ref\":\"#\"},"
    "\"default\":{}},"
    "\"dependencies\":{\"type\":\"object\",\"additionalProperties\":{\"anyOf\":[{\"$ref\":\"#\"},"
    "{\"$ref\":\"#/definitions/stringArray\"}]}},"
    "\"enum\":{\"type\":\"array\",\"minItems\":1,\"uniqueItems\":true},"
    "\"type\":{\"anyOf\":[{\"$ref\":\"#/definitions/simpleTypes\"},{\"type\":\"array\","
    "\"items\":{\"$ref\":\"#/definitions/simpleTypes\"},\"minItems\":1,\"uniqueItems\":true}]},"
    "\"format\":{\"type\":\"string\"},"
    "\"allOf\":{\"$ref\":\"#/definitions/schemaArray\"},"
    "\"anyOf\":{\"$ref\":\"#/definitions/schemaArray\"},"
    "\"oneOf\":{\"$ref\":\"#/definitions/schemaArray\"},"
    "\"not\":{\"$ref\":\"#\"}},"
    "\"dependencies\":{\"exclusiveMaximum\":[\"maximum\"],\"exclusiveMinimum\":[\"minimum\"]},"
    "\"default\":{}}";

enum { T_NULL = 1, T_BOOL = 2, T_INT = 4, T_NUM = 8, T_STR = 16, T_ARR = 32, T_OBJ = 64 };

struct node;

struct named {
    const char *name;
    struct node *node;
    const json_t *list; /* dependencies given as property names */
    pcre2_code *re;     /* patternProperties */
};

struct node {
    const json_t *json;
    const char *base;  /* the base URI in effect */
    const char *spath; /* "#/properties/a" */
    const char *ref;   /* absolute "$ref", or NULL */
    struct node *target;
    unsigned types;
    const json_t *enum_values, *required, *minimum, *maximum;
    struct named *props, *patterns, *deps;
    size_t nprops, npatterns, ndeps;
    int no_additional, no_additional_items, unique, excl_min, excl_max;
    struct node *additional, *items, *additional_items, *not;
    struct node **tuple, **all, **any, **one;
    size_t ntuple, nall, nany, none;
    long min_props, max_props, min_items, max_items, min_len, max_len;
    double multiple_of;
    pcre2_code *pattern;
};

/* An identified document or location: "uri" (no fragment) with the JSON that pointers walk,
 * or "uri#name" for a location-independent id. */
struct known {
    struct known *next;
    const char *uri, *base;
    json_t *root;
    struct node *node;
};

struct seen {
    struct seen *next;
    const json_t *json;
    struct node *node;
};

#define SEEN_BUCKETS 256

struct jsonschema {
    struct arena *arena;
    json_t *doc, *meta;
    struct node *root;
    struct known *known;
    struct seen *seen[SEEN_BUCKETS];
    struct purser_error *err;
};

static void free_code(void *code)
{
    pcre2_code_free(code);
}

/* ---- URIs ---- */

static int has_scheme(const char *s)
{
    const char *c = s;
    while ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
           *c == '+' || *c == '-' || *c == '.')
        c++;
    return c > s && *c == ':';
}

/* ref resolved against base (RFC 3986, the cases schemas use), in arena memory. */
static char *resolve(struct arena *arena, const char *base, const char *ref)
{
    size_t base_len = strcspn(base, "#");
    if (has_scheme(ref) || !*base)
        return arena_strdup(arena, ref);
    if (ref[0] == '#')
        return arena_sprintf(arena, "%.*s%s", (int)base_len, base, ref);
    if (ref[0] == '/') {
        const char *authority = strstr(base, "://");
        const char *path = authority ? strchr(authority + 3, '/') : NULL;
        size_t keep = path ? (size_t)(path - base) : base_len;
        return arena_sprintf(arena, "%.*s%s", (int)keep, base, ref);
    }
    while (base_len && base[base_len - 1] != '/')
        base_len--;
    return arena_sprintf(arena, "%.*s%s", (int)base_len, base, ref);
}

static struct known *find_known(struct jsonschema *s, const char *uri)
{
    for (struct known *k = s->known; k; k = k->next)
        if (strcmp(k->uri, uri) == 0)
            return k;
    return NULL;
}

static void add_known(struct jsonschema *s, const char *uri, const char *base, json_t *root,
                      struct node *node)
{
    struct known *k = arena_calloc(s->arena, 1, sizeof(*k));
    size_t n = strlen(uri);
    if (!k)
        return;
    k->uri = n && uri[n - 1] == '#' ? arena_strndup(s->arena, uri, n - 1) : uri;
    k->base = base;
    k->root = root;
    k->node = node;
    k->next = s->known;
    s->known = k;
}

/* ---- compiling ---- */

static int bad(struct jsonschema *s, const char *spath, const char *what)
{
    return purser_error_set(s->err, PURSER_EINVAL, "schema %s: %s", spath, what);
}

static struct node *compile(struct jsonschema *s, const json_t *json, const char *base,
                            const char *spath);

static struct node *sub(struct jsonschema *s, struct node *n, const json_t *json, const char *key,
                        const char *more)
{
    const char *spath = arena_sprintf(s->arena, "%s/%s%s%s", n->spath, key, more ? "/" : "",
                                      more ? more : "");
    return spath ? compile(s, json, n->base, spath) : NULL;
}

static struct node **sub_list(struct jsonschema *s, struct node *n, const json_t *list,
                              const char *key, size_t *count)
{
    size_t size = json_array_size(list);
    struct node **out = arena_calloc(s->arena, size ? size : 1, sizeof(*out));
    if (!json_is_array(list) || !out) {
        bad(s, n->spath, "a list of schemas is expected");
        return NULL;
    }
    for (size_t i = 0; i < size; i++) {
        char index[24];
        snprintf(index, sizeof(index), "%zu", i);
        if (!(out[i] = sub(s, n, json_array_get(list, i), key, index)))
            return NULL;
    }
    *count = size;
    return out;
}

static pcre2_code *regex(struct jsonschema *s, const char *spath, const char *pattern)
{
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code,
                                   &offset, NULL);
    if (!re) {
        bad(s, spath, "a pattern that is not a valid regular expression");
        return NULL;
    }
    arena_add_cleanup(s->arena, free_code, re);
    return re;
}

static unsigned type_bit(const char *name)
{
    static const struct {
        const char *name;
        unsigned bit;
    } types[] = {{"null", T_NULL},    {"boolean", T_BOOL}, {"integer", T_INT}, {"number", T_NUM},
                 {"string", T_STR},   {"array", T_ARR},    {"object", T_OBJ}};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(name, types[i].name) == 0)
            return types[i].bit;
    return 0;
}

static int compile_type(struct jsonschema *s, struct node *n, const json_t *type)
{
    size_t i;
    const json_t *t;
    if (json_is_string(type))
        n->types = type_bit(json_string_value(type));
    json_array_foreach(type, i, t) n->types |= json_is_string(t) ? type_bit(json_string_value(t)) : 0;
    if (!n->types)
        return bad(s, n->spath, "type names no JSON Schema type");
    return 0;
}

static long count_of(const json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        return (long)json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) >= 0 && floor(json_real_value(v)) == json_real_value(v))
        return (long)json_real_value(v);
    return -2;
}

/* The keywords of objects: properties, patternProperties, additionalProperties, required,
 * min/maxProperties, dependencies. */
static int compile_object(struct jsonschema *s, struct node *n, const json_t *j)
{
    const json_t *v;
    const char *key;
    if ((v = json_object_get(j, "properties"))) {
        json_t *p;
        n->props = arena_calloc(s->arena, json_object_size(v) + 1, sizeof(*n->props));
        json_object_foreach((json_t *)v, key, p) {
            n->props[n->nprops].name = key;
            if (!(n->props[n->nprops++].node = sub(s, n, p, "properties", key)))
                return -1;
        }
    }
    if ((v = json_object_get(j, "patternProperties"))) {
        json_t *p;
        n->patterns = arena_calloc(s->arena, json_object_size(v) + 1, sizeof(*n->patterns));
        json_object_foreach((json_t *)v, key, p) {
            struct named *e = &n->patterns[n->npatterns++];
            e->name = key;
            if (!(e->re = regex(s, n->spath, key)) || !(e->node = sub(s, n, p, "patternProperties", key)))
                return -1;
        }
    }
    if ((v = json_object_get(j, "additionalProperties"))) {
        if (json_is_false(v))
            n->no_additional = 1;
        else if (json_is_object(v) && !(n->additional = sub(s, n, v, "additionalProperties", NULL)))
            return -1;
    }
    if ((v = json_object_get(j, "required")) && !json_is_array(v))
        return bad(s, n->spath, "required must be a list of names");
    n->required = v;
    if ((v = json_object_get(j, "dependencies"))) {
        json_t *d;
        n->deps = arena_calloc(s->arena, json_object_size(v) + 1, sizeof(*n->deps));
        json_object_foreach((json_t *)v, key, d) {
            struct named *e = &n->deps[n->ndeps++];
            e->name = key;
            if (json_is_array(d))
                e->list = d;
            else if (!(e->node = sub(s, n, d, "dependencies", key)))
                return -1;
        }
    }
    n->min_props = (v = json_object_get(j, "minProperties")) ? count_of(v) : -1;
    n->max_props = (v = json_object_get(j, "maxProperties")) ? count_of(v) : -1;
    return n->min_props == -2 || n->max_props == -2
               ? bad(s, n->spath, "min/maxProperties must be non-negative integers")
               : 0;
}

static int compile_array(struct jsonschema *s, struct node *n, const json_t *j)
{
    const json_t *v;
    if ((v = json_object_get(j, "items"))) {
        if (json_is_array(v)) {
            if (!(n->tuple = sub_list(s, n, v, "items", &n->ntuple)))
                return -1;
        } else if (!(n->items = sub(s, n, v, "items", NULL)))
            return -1;
    }
    if ((v = json_object_get(j, "additionalItems"))) {
        if (json_is_false(v))
            n->no_additional_items = 1;
        else if (json_is_object(v) &&
                 !(n->additional_items = sub(s, n, v, "additionalItems", NULL)))
            return -1;
    }
    n->unique = json_is_true(json_object_get(j, "uniqueItems"));
    n->min_items = (v = json_object_get(j, "minItems")) ? count_of(v) : -1;
    n->max_items = (v = json_object_get(j, "maxItems")) ? count_of(v) : -1;
    return n->min_items == -2 || n->max_items == -2
               ? bad(s, n->spath, "min/maxItems must be non-negative integers")
               : 0;
}

static int compile_scalar(struct jsonschema *s, struct node *n, const json_t *j)
{
    const json_t *v;
    n->min_len = (v = json_object_get(j, "minLength")) ? count_of(v) : -1;
    n->max_len = (v = json_object_get(j, "maxLength")) ? count_of(v) : -1;
    if (n->min_len == -2 || n->max_len == -2)
        return bad(s, n->spath, "min/maxLength must be non-negative integers");
    if ((v = json_object_get(j, "pattern"))) {
        if (!json_is_string(v))
            return bad(s, n->spath, "pattern must be a string");
        if (!(n->pattern = regex(s, n->spath, json_string_value(v))))
            return -1;
    }
    n->minimum = json_object_get(j, "minimum");
    n->maximum = json_object_get(j, "maximum");
    if ((n->minimum && !json_is_number(n->minimum)) || (n->maximum && !json_is_number(n->maximum)))
        return bad(s, n->spath, "minimum and maximum must be numbers");
    n->excl_min = json_is_true(json_object_get(j, "exclusiveMinimum"));
    n->excl_max = json_is_true(json_object_get(j, "exclusiveMaximum"));
    if ((v = json_object_get(j, "multipleOf"))) {
        if (!json_is_number(v) || json_number_value(v) <= 0)
            return bad(s, n->spath, "multipleOf must be a number above 0");
        n->multiple_of = json_number_value(v);
    }
    return 0;
}

static int compile_combinators(struct jsonschema *s, struct node *n, const json_t *j)
{
    const json_t *v;
    if ((v = json_object_get(j, "allOf")) && !(n->all = sub_list(s, n, v, "allOf", &n->nall)))
        return -1;
    if ((v = json_object_get(j, "anyOf")) && !(n->any = sub_list(s, n, v, "anyOf", &n->nany)))
        return -1;
    if ((v = json_object_get(j, "oneOf")) && !(n->one = sub_list(s, n, v, "oneOf", &n->none)))
        return -1;
    if ((v = json_object_get(j, "not")) && !(n->not = sub(s, n, v, "not", NULL)))
        return -1;
    if ((v = json_object_get(j, "definitions"))) {
        const char *key;
        json_t *d;
        json_object_foreach((json_t *)v, key, d) {
            if (!sub(s, n, d, "definitions", key))
                return -1;
        }
    }
    return 0;
}

static struct seen **seen_slot(struct jsonschema *s, const json_t *json)
{
    return &s->seen[((uintptr_t)json >> 4) % SEEN_BUCKETS];
}

static struct node *compile(struct jsonschema *s, const json_t *json, const char *base,
                            const char *spath)
{
    struct seen **slot = seen_slot(s, json), *seen;
    struct node *n;
    const json_t *id = json_object_get(json, "id"), *ref = json_object_get(json, "$ref");

    for (seen = *slot; seen; seen = seen->next)
        if (seen->json == json)
            return seen->node;
    if (!json_is_object(json)) {
        bad(s, spath, "a schema must be a JSON object");
        return NULL;
    }
    if (!(n = arena_calloc(s->arena, 1, sizeof(*n))) || !(seen = arena_calloc(s->arena, 1, sizeof(*seen)))) {
        purser_error_set(s->err, PURSER_EINTERNAL, "out of memory");
        return NULL;
    }
    seen->json = json;
    seen->node = n;
    seen->next = *slot;
    *slot = seen;
    n->json = json;
    n->spath = spath;
    n->base = base;
    if (json_is_string(ref)) { /* draft 4: $ref replaces the whole schema, id included */
        n->ref = resolve(s->arena, base, json_string_value(ref));
        return n;
    }
    if (json_is_string(id)) {
        n->base = resolve(s->arena, base, json_string_value(id));
        add_known(s, n->base, n->base, (json_t *)json, n);
    }
    if ((json_object_get(json, "type") && compile_type(s, n, json_object_get(json, "type"))) ||
        compile_object(s, n, json) || compile_array(s, n, json) || compile_scalar(s, n, json) ||
        compile_combinators(s, n, json))
        return NULL;
    n->enum_values = json_object_get(json, "enum");
    if (n->enum_values && !json_is_array(n->enum_values)) {
        bad(s, spath, "enum must be a list");
        return NULL;
    }
    return n;
}

int jsonschema_compile(struct jsonschema **out, json_t *schema, struct purser_error *err)
{
    struct jsonschema *s = calloc(1, sizeof(*s));
    const json_t *id;
    *out = NULL;
    if (!s || !(s->arena = arena_new())) {
        free(s);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    s->err = err;
    s->doc = json_incref(schema);
    id = json_object_get(schema, "id");
    add_known(s, json_is_string(id) && !json_object_get(schema, "$ref")
                     ? arena_strndup(s->arena, json_string_value(id),
                                     strcspn(json_string_value(id), "#"))
                     : "",
              "", schema, NULL);
    if (!(s->root = compile(s, schema, "", "#"))) {
        jsonschema_free(s);
        return err ? err->code : PURSER_EINVAL;
    }
    s->err = NULL;
    *out = s;
    return 0;
}

void jsonschema_free(struct jsonschema *s)
{
    if (!s)
        return;
    arena_free(s->arena);
    json_decref(s->doc);
    json_decref(s->meta);
    free(s);
}

/* The JSON at a JSON pointer fragment ("/definitions/a~1b", percent-escapes allowed). */
static json_t *pointer(struct arena *arena, json_t *root, const char *fragment)
{
    char *decoded = arena_strdup(arena, fragment), *o = decoded;
    if (!decoded)
        return NULL;
    for (const char *c = fragment; *c; c++) {
        unsigned v;
        if (*c == '%' && sscanf(c + 1, "%2x", &v) == 1 && c[1] && c[2]) {
            *o++ = (char)v;
            c += 2;
        } else
            *o++ = *c;
    }
    *o = '\0';
    for (char *p = decoded; root && *p == '/';) {
        char *end = strchr(p + 1, '/'), *w = p + 1, *r;
        if (end)
            *end = '\0';
        for (r = p + 1; *r; r++) {
            if (r[0] == '~' && r[1] == '1')
                *w++ = '/', r++;
            else if (r[0] == '~' && r[1] == '0')
                *w++ = '~', r++;
            else
                *w++ = *r;
        }
        *w = '\0';
        if (json_is_array(root)) {
            char *stop;
            unsigned long i = strtoul(p + 1, &stop, 10);
            root = *stop ? NULL : json_array_get(root, i);
        } else
            root = json_object_get(root, p + 1);
        if (!end)
            break;
        p = end;
        *p = '/';
    }
    return root;
}

static struct node *resolve_ref(struct jsonschema *s, struct node *n)
{
    const char *hash = strchr(n->ref, '#');
    const char *fragment = hash ? hash + 1 : "";
    char *doc = arena_strndup(s->arena, n->ref, hash ? (size_t)(hash - n->ref) : strlen(n->ref));
    struct known *k;
    json_t *target;
    struct purser_error ignored;

    if (n->target)
        return n->target;
    if (!doc)
        return NULL;
    if (*fragment && *fragment != '/') { /* a location-independent id: "uri#name" */
        k = find_known(s, n->ref);
        return n->target = k ? k->node : NULL;
    }
    if (!(k = find_known(s, doc)) && strcmp(doc, META_URI) == 0) {
        json_error_t jerr;
        if (!s->meta)
            s->meta = json_loads(meta_schema_text, 0, &jerr);
        s->err = &ignored;
        add_known(s, META_URI, META_URI "#", s->meta, NULL);
        compile(s, s->meta, META_URI "#", META_URI "#");
        s->err = NULL;
        k = find_known(s, META_URI);
    }
    if (!k || !(target = pointer(s->arena, k->root, fragment)))
        return NULL;
    s->err = &ignored;
    n->target = compile(s, target, k->base, n->ref);
    s->err = NULL;
    return n->target;
}

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
};

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
    json_array_append_new(c->errors, json_pack("{s:s, s:s, s:s}", "path", buf_cstr(&path),
                                               "schema_path", buf_cstr(&spath), "message", message));
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
        json_object_foreach((json_t *)a, key, v) {
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
    struct check q = {.s = c->s};
    return valid(&q, n, v, w);
}

static size_t code_points(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
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
            ok = fail(c, n, w, "minimum", "is less than %s%g", n->excl_min ? "or equal to " : "", m);
    }
    if (n->maximum) {
        double m = json_number_value(n->maximum);
        if (n->excl_max ? x >= m : x > m)
            ok = fail(c, n, w, "maximum", "is more than %s%g", n->excl_max ? "or equal to " : "", m);
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
    size_t len = json_string_length(v), cps = code_points(s, len);
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
        struct node *item = n->tuple ? (i < n->ntuple ? n->tuple[i] : n->additional_items)
                                     : n->items;
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
    json_array_foreach(n->required, i, name) {
        if (json_is_string(name) && !json_object_get(v, json_string_value(name)))
            ok = fail(c, n, w, "required", "property '%s' is required", json_string_value(name));
    }
    json_object_foreach((json_t *)v, key, value) {
        if ((n->nprops || n->npatterns || n->no_additional || n->additional) &&
            !valid_property(c, n, key, value, w))
            ok = 0;
    }
    for (size_t d = 0; d < n->ndeps; d++) {
        if (!json_object_get(v, n->deps[d].name))
            continue;
        if (n->deps[d].node && !valid(c, n->deps[d].node, v, w))
            ok = 0;
        json_array_foreach(n->deps[d].list, i, name) {
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
    if (n->not && quietly(c, n->not, v, w))
        ok = fail(c, n, w, "not", "matches a schema it must not");
    return ok;
}

static int valid(struct check *c, struct node *n, const json_t *v, const struct where *w)
{
    unsigned type = type_of(v);
    int ok = 1;
    if (n->ref) {
        struct node *target = resolve_ref(c->s, n);
        if (!target)
            return fail(c, n, w, "$ref", "cannot resolve %s", n->ref);
        return valid(c, target, v, w);
    }
    if (n->types && !(n->types & type))
        return fail(c, n, w, "type", "is not of the type the schema names");
    if (n->enum_values) {
        size_t i, found = 0;
        const json_t *e;
        json_array_foreach(n->enum_values, i, e) found |= jsonschema_equal(e, v);
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
