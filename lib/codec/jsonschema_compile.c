/* jsonschema_compile.c: JSON Schema draft 4: compiling schemas into nodes (ids, $ref and base
 * URIs, the built-in meta-schema, PCRE2 patterns). */
#include "codec/jsonschema_private.h"

#include "base/buf.h"

#include <math.h>
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
    "\"maximum\":{\"type\":\"number\"},\"exclusiveMaximum\":{\"type\":\"boolean\",\"default\":"
    "false},"
    "\"minimum\":{\"type\":\"number\"},\"exclusiveMinimum\":{\"type\":\"boolean\",\"default\":"
    "false},"
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
    const char *spath =
        arena_sprintf(s->arena, "%s/%s%s%s", n->spath, key, more ? "/" : "", more ? more : "");
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
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &offset, NULL);
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
    } types[] = {{"null", T_NULL},  {"boolean", T_BOOL}, {"integer", T_INT}, {"number", T_NUM},
                 {"string", T_STR}, {"array", T_ARR},    {"object", T_OBJ}};
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
    json_array_foreach (type, i, t)
        n->types |= json_is_string(t) ? type_bit(json_string_value(t)) : 0;
    if (!n->types)
        return bad(s, n->spath, "type names no JSON Schema type");
    return 0;
}

static long count_of(const json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        return (long)json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) >= 0 &&
        floor(json_real_value(v)) == json_real_value(v))
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
        json_object_foreach ((json_t *)v, key, p) {
            n->props[n->nprops].name = key;
            if (!(n->props[n->nprops++].node = sub(s, n, p, "properties", key)))
                return -1;
        }
    }
    if ((v = json_object_get(j, "patternProperties"))) {
        json_t *p;
        n->patterns = arena_calloc(s->arena, json_object_size(v) + 1, sizeof(*n->patterns));
        json_object_foreach ((json_t *)v, key, p) {
            struct named *e = &n->patterns[n->npatterns++];
            e->name = key;
            if (!(e->re = regex(s, n->spath, key)) ||
                !(e->node = sub(s, n, p, "patternProperties", key)))
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
        json_object_foreach ((json_t *)v, key, d) {
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
        json_object_foreach ((json_t *)v, key, d) {
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
    if (!(n = arena_calloc(s->arena, 1, sizeof(*n))) ||
        !(seen = arena_calloc(s->arena, 1, sizeof(*seen)))) {
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
    add_known(
        s,
        json_is_string(id) && !json_object_get(schema, "$ref")
            ? arena_strndup(s->arena, json_string_value(id), strcspn(json_string_value(id), "#"))
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

struct node *jsonschema_resolve_ref(struct jsonschema *s, struct node *n)
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
