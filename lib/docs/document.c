/* document.c: checking posted Deckhand documents, their defaults, identities and hashes. */
#include "docs/document.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "base/utf8.h"
#include "codec/yaml_codec.h"
#include "docs/dataschema.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checks of one document: faults go to messages as D001 entries. */
struct check {
    json_t *messages;
    size_t index; /* 1-based position in the stream */
    const char *schema, *name, *layer;
};

static void fault(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as quoted in a message: at most 64 bytes, cut on a character boundary and marked. */
static const char *quoted(const char *s, char out[72])
{
    size_t n = strlen(s);
    if (n <= 64)
        return s;
    n = utf8_prefix(s, n, 64);
    memcpy(out, s, n);
    memcpy(out + n, "\xe2\x80\xa6", 4); /* "…" and the NUL */
    return out;
}

static void fault(struct check *c, const char *fmt, ...)
{
    char what[200], message[PURSER_ERROR_MESSAGE_SIZE + 64], schema[72], name[72];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(message, sizeof(message), "document %zu [%s] %s: %s", c->index,
             c->schema ? quoted(c->schema, schema) : "?", c->name ? quoted(c->name, name) : "?",
             what);
    json_array_append_new(c->messages,
                          document_message("D001", message, c->schema ? c->schema : "",
                                           c->name ? c->name : "", c->layer ? c->layer : ""));
}

json_t *document_message(const char *code, const char *message, const char *schema,
                         const char *name, const char *layer)
{
    return json_pack("{s:s, s:b, s:s, s:[{s:s, s:s, s:s}], s:s, s:s}", "message", message, "error",
                     1, "name", code, "documents", "schema", schema, "name", name, "layer", layer,
                     "level", "Error", "kind", "ValidationMessage");
}

/* namespace/Kind/vN or vN.0 (Deckhand's base schema: ^[A-Za-z]+/[A-Za-z]+/v\d+(.0)?$). */
static int schema_well_formed(const char *s)
{
    for (int section = 0; section < 2; section++) {
        const char *start = s;
        while (isalpha((unsigned char)*s))
            s++;
        if (s == start || *s++ != '/')
            return 0;
    }
    if (*s++ != 'v' || !isdigit((unsigned char)*s))
        return 0;
    while (isdigit((unsigned char)*s))
        s++;
    if (*s == '\0')
        return 1;
    return s[1] == '0' && s[2] == '\0';
}

int document_name_check(const char *what, const char *name, struct purser_error *err)
{
    size_t bytes = strlen(name);
    if (!bytes || utf8_count(name, bytes) > DOCUMENT_NAME_MAX)
        return purser_error_set(err, PURSER_EINVAL, "%s must have 1 to %d characters", what,
                                DOCUMENT_NAME_MAX);
    if (utf8_has_control(name, bytes))
        return purser_error_set(err, PURSER_EINVAL, "%s must not contain a control character",
                                what);
    return 0;
}

/* A string member no longer than DOCUMENT_NAME_MAX, or NULL (with a fault when present or
 * required). */
static const char *string_field(struct check *c, const json_t *obj, const char *key,
                                const char *where, int required)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            fault(c, "%s%s is required", where, key);
        return NULL;
    }
    if (!json_is_string(v) || json_string_length(v) == 0) {
        fault(c, "%s%s must be a non-empty string", where, key);
        return NULL;
    }
    {
        const char *text = json_string_value(v);
        size_t bytes = json_string_length(v);
        if (memchr(text, '\0', bytes)) { /* it would be stored cut at the NUL */
            fault(c, "%s%s must not contain a NUL character", where, key);
            return NULL;
        }
        if (utf8_has_control(text, bytes)) {
            fault(c, "%s%s must not contain a control character", where, key);
            return NULL;
        }
        if (utf8_count(text, bytes) > DOCUMENT_NAME_MAX) { /* the columns count characters */
            fault(c, "%s%s is longer than %d characters", where, key, DOCUMENT_NAME_MAX);
            return NULL;
        }
        return text;
    }
}

static void check_type(struct check *c, const json_t *v, json_type type, const char *where)
{
    static const char *names[] = {"a mapping", "a list",    "a string",  "an integer",
                                  "a number",  "a boolean", "a boolean", "null"};
    int ok;
    if (!v)
        return;
    ok = json_typeof(v) == type || (type == JSON_TRUE && json_is_boolean(v));
    if (!ok)
        fault(c, "%s must be %s", where, names[type]);
}

const char *const document_actions[DOCUMENT_ACTION_COUNT] = {
    [DOCUMENT_MERGE] = "merge",
    [DOCUMENT_REPLACE] = "replace",
    [DOCUMENT_DELETE] = "delete",
};

int document_action_find(const char *method)
{
    for (int i = 0; i < DOCUMENT_ACTION_COUNT; i++)
        if (strcmp(document_actions[i], method) == 0)
            return i;
    return -1;
}

void document_action_names(char *out, size_t size)
{
    size_t used = 0;
    if (size)
        out[0] = '\0';
    for (size_t i = 0; i < DOCUMENT_ACTION_COUNT && used < size; i++) {
        const char *before = i == 0 ? "" : i + 1 < DOCUMENT_ACTION_COUNT ? ", " : " or ";
        used += (size_t)snprintf(out + used, size - used, "%s%s", before, document_actions[i]);
    }
}

static void check_actions(struct check *c, const json_t *actions)
{
    size_t i;
    const json_t *a;
    check_type(c, actions, JSON_ARRAY, "metadata.layeringDefinition.actions");
    json_array_foreach (actions, i, a) {
        const char *method;
        char where[80];
        snprintf(where, sizeof(where), "metadata.layeringDefinition.actions[%zu].", i);
        if (!json_is_object(a)) {
            fault(c, "%.*s must be a mapping", (int)strlen(where) - 1, where);
            continue;
        }
        method = string_field(c, a, "method", where, 1);
        string_field(c, a, "path", where, 1);
        if (method && document_action_find(method) < 0) {
            char methods[64];
            document_action_names(methods, sizeof(methods));
            fault(c, "%smethod must be %s, not '%s'", where, methods, method);
        }
    }
}

static void check_string_map(struct check *c, const json_t *map, const char *where)
{
    const char *key;
    const json_t *v;
    check_type(c, map, JSON_OBJECT, where);
    json_object_foreach ((json_t *)map, key, v) {
        if (json_is_object(v) || json_is_array(v))
            fault(c, "%s.%s must be a scalar", where, key);
    }
}

/* 1 when pattern compiles and may match an empty string (PCRE2's least match length is 0).
 * A pattern that does not compile is the renderer's to report. */
static int pattern_matches_empty(const char *pattern)
{
    int code;
    PCRE2_SIZE offset;
    uint32_t least = 1;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &offset, NULL);
    if (!re)
        return 0;
    pcre2_pattern_info(re, PCRE2_INFO_MINLENGTH, &least);
    pcre2_code_free(re);
    return least == 0;
}

static void check_dest(struct check *c, const json_t *dest, const char *where)
{
    const json_t *recurse;
    if (!json_is_object(dest)) {
        fault(c, "%s must be a mapping", where);
        return;
    }
    string_field(c, dest, "path", "substitutions dest.", 1);
    if (json_object_get(dest, "pattern")) {
        const char *pattern = string_field(c, dest, "pattern", "substitutions dest.", 0);
        if (pattern && pattern_matches_empty(pattern))
            fault(c,
                  "%s.pattern '%s' can match the empty string (the value would be written "
                  "between every character)",
                  where, pattern);
    }
    recurse = json_object_get(dest, "recurse");
    if (recurse && !json_is_integer(json_object_get(recurse, "depth")))
        fault(c, "%s.recurse.depth must be an integer", where);
}

static void check_substitutions(struct check *c, const json_t *subs)
{
    size_t i;
    const json_t *s;
    check_type(c, subs, JSON_ARRAY, "metadata.substitutions");
    json_array_foreach (subs, i, s) {
        char where[80];
        const json_t *src, *dest;
        snprintf(where, sizeof(where), "metadata.substitutions[%zu]", i);
        if (!json_is_object(s)) {
            fault(c, "%s must be a mapping", where);
            continue;
        }
        src = json_object_get(s, "src");
        dest = json_object_get(s, "dest");
        if (!json_is_object(src))
            fault(c, "%s.src must be a mapping with schema, name and path", where);
        else {
            string_field(c, src, "schema", "substitutions src.", 1);
            string_field(c, src, "name", "substitutions src.", 1);
            string_field(c, src, "path", "substitutions src.", 1);
        }
        if (json_is_array(dest) && json_array_size(dest) > 0) {
            size_t j;
            const json_t *d;
            json_array_foreach (dest, j, d)
                check_dest(c, d, where);
        } else
            check_dest(c, dest, where);
    }
}

/* metadata/Document/v1: fills the defaults and reads layer and abstract. */
static void check_document_metadata(struct check *c, json_t *meta, struct document *d)
{
    json_t *policy = json_object_get(meta, "storagePolicy"), *ld;
    const json_t *abstract;

    if (!policy || json_is_null(policy))
        json_object_set_new(meta, "storagePolicy", json_string("cleartext"));
    else if (!json_is_string(policy) || (strcmp(json_string_value(policy), "cleartext") &&
                                         strcmp(json_string_value(policy), "encrypted")))
        fault(c, "metadata.storagePolicy must be cleartext or encrypted");
    d->encrypted = json_is_string(policy) && strcmp(json_string_value(policy), "encrypted") == 0;
    ld = json_object_get(meta, "layeringDefinition");
    if (!ld) {
        ld = json_object();
        json_object_set_new(meta, "layeringDefinition", ld);
    }
    if (!json_is_object(ld)) {
        fault(c, "metadata.layeringDefinition must be a mapping");
        return;
    }
    if (json_object_get(ld, "layer"))
        d->layer = string_field(c, ld, "layer", "metadata.layeringDefinition.", 0);
    c->layer = d->layer;
    abstract = json_object_get(ld, "abstract");
    if (!abstract)
        json_object_set_new(ld, "abstract", json_false());
    check_type(c, abstract, JSON_TRUE, "metadata.layeringDefinition.abstract");
    d->abstract = json_is_true(abstract);
    if (json_object_get(ld, "parentSelector"))
        check_string_map(c, json_object_get(ld, "parentSelector"),
                         "metadata.layeringDefinition.parentSelector");
    if (json_object_get(ld, "actions"))
        check_actions(c, json_object_get(ld, "actions"));
    if (json_object_get(meta, "substitutions"))
        check_substitutions(c, json_object_get(meta, "substitutions"));
    if (!json_object_get(meta, "replacement"))
        json_object_set_new(meta, "replacement", json_false());
    check_type(c, json_object_get(meta, "replacement"), JSON_TRUE, "metadata.replacement");
}

static void check_validation_policy(struct check *c, const json_t *data)
{
    const json_t *list = json_object_get(data, "validations"), *v;
    size_t i;
    if (!json_is_array(list)) {
        fault(c, "data.validations must be a list");
        return;
    }
    json_array_foreach (list, i, v) {
        const json_t *expires = json_object_get(v, "expiresAfter");
        if (!json_is_string(json_object_get(v, "name")))
            fault(c, "data.validations[%zu].name must be a string", i);
        if (expires && !json_is_null(expires) &&
            (!json_is_string(expires) || document_duration_seconds(json_string_value(expires)) < 0))
            fault(c,
                  "data.validations[%zu].expiresAfter must be an ISO 8601 duration (P1W, "
                  "PT12H)",
                  i);
    }
}

/* The control documents purser itself reads. */
static void check_control_data(struct check *c, const struct document *d, const json_t *data)
{
    if (document_schema_is(d->schema, "deckhand/LayeringPolicy")) {
        const json_t *order = json_object_get(data, "layerOrder"), *layer;
        size_t i;
        if (!json_is_array(order) || json_array_size(order) == 0)
            fault(c, "data.layerOrder must be a non-empty list of layer names");
        json_array_foreach (order, i, layer) {
            if (!json_is_string(layer))
                fault(c, "data.layerOrder[%zu] must be a string", i);
        }
    } else if (document_schema_is(d->schema, "deckhand/ValidationPolicy")) {
        check_validation_policy(c, data);
    } else if (document_schema_is(d->schema, "deckhand/DataSchema")) {
        if (!json_is_object(data))
            fault(c, "data must be a JSON schema (a mapping)");
        if (d->name && dataschema_reserved(d->name)) {
            char name[72];
            fault(c,
                  "metadata.name '%s' is reserved: DataSchema names under deckhand/ and "
                  "metadata/ are Deckhand's own",
                  quoted(d->name, name));
        }
    }
}

static void check_metadata(struct check *c, json_t *meta, struct document *d)
{
    const char *mschema = string_field(c, meta, "schema", "metadata.", 1);
    if (!mschema)
        return;
    if (strcmp(mschema, "metadata/Document/v1") == 0 ||
        strcmp(mschema, "metadata/Document/v1.0") == 0)
        d->kind = DOCUMENT_DOCUMENT;
    else if (strcmp(mschema, "metadata/Control/v1") == 0 ||
             strcmp(mschema, "metadata/Control/v1.0") == 0)
        d->kind = DOCUMENT_CONTROL;
    else if (strcmp(mschema, "metadata/Tombstone/v1") == 0 ||
             strcmp(mschema, "metadata/Tombstone/v1.0") == 0)
        d->kind = DOCUMENT_TOMBSTONE;
    else {
        fault(c,
              "metadata.schema must be metadata/Document/v1, metadata/Control/v1 or "
              "metadata/Tombstone/v1, not '%s'",
              mschema);
        return;
    }
    if (json_object_get(meta, "labels"))
        check_string_map(c, json_object_get(meta, "labels"), "metadata.labels");
    if (d->kind == DOCUMENT_TOMBSTONE) {
        if (json_object_size(meta) > 2 ||
            (json_object_get(meta, "layeringDefinition") && json_object_size(meta) > 3))
            fault(c, "a Tombstone's metadata holds only schema, name (and a layer)");
        return;
    }
    check_document_metadata(c, meta, d);
}

static void check_one(struct check *c, json_t *doc, struct document *d)
{
    json_t *meta, *data;
    const char *key;
    json_t *v;

    memset(d, 0, sizeof(*d));
    d->doc = doc;
    d->layer = "";
    if (!json_is_object(doc)) {
        fault(c, "a document must be a mapping of schema, metadata and data");
        return;
    }
    json_object_foreach (doc, key, v) {
        if (strcmp(key, "schema") && strcmp(key, "metadata") && strcmp(key, "data"))
            fault(c, "unknown top-level key '%s' (only schema, metadata and data)", key);
    }
    meta = json_object_get(doc, "metadata");
    if (json_is_object(meta) && json_is_string(json_object_get(meta, "name")))
        c->name = json_string_value(json_object_get(meta, "name")); /* for messages */
    c->schema = d->schema = string_field(c, doc, "schema", "", 1);
    if (json_is_object(meta))
        c->name = d->name = string_field(c, meta, "name", "metadata.", 1);
    if (d->schema && !schema_well_formed(d->schema))
        fault(c, "schema must look like namespace/Kind/v1");
    if (!json_is_object(meta)) {
        fault(c, "metadata must be a mapping with schema and name");
        return;
    }
    check_metadata(c, meta, d);
    if (!d->layer)
        d->layer = "";
    data = json_object_get(doc, "data");
    if (data && (json_is_real(data) || json_is_boolean(data)))
        fault(c, "data must be null, a string, an integer, a list or a mapping");
    if (d->kind == DOCUMENT_CONTROL)
        check_control_data(c, d, data);
    if (d->kind == DOCUMENT_TOMBSTONE && data && !json_is_null(data))
        fault(c, "a Tombstone has no data");
    if (!data && d->kind != DOCUMENT_TOMBSTONE)
        json_object_set_new(doc, "data", json_object());
}

char *document_canonical(const json_t *value)
{
    if (!value)
        return strdup("null");
    return json_text(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* The content hash, and the canonical metadata and data kept for storing (one encoding; an
 * encrypted document's data is not kept: it is sealed from its own encoding, then wiped). */
int document_hash(struct arena *arena, struct document *d)
{
    char *meta = document_canonical(json_object_get(d->doc, "metadata"));
    char *data = document_canonical(json_object_get(d->doc, "data"));
    struct buf b = BUF_INIT;
    int rc = -1;

    if (meta && data && !buf_adds(&b, d->schema) && !buf_addc(&b, '\0') &&
        !buf_adds(&b, d->layer) && !buf_addc(&b, '\0') && !buf_adds(&b, d->name) &&
        !buf_addc(&b, '\0') && !buf_adds(&b, meta) && !buf_addc(&b, '\0') && !buf_adds(&b, data) &&
        (d->metadata_json = arena_strdup(arena, meta)) &&
        (d->encrypted || (d->data_json = arena_strdup(arena, data)))) {
        crypto_sha256(d->content_sha256, b.data, b.len);
        rc = 0;
    }
    crypto_free_secret(data); /* an encrypted document's data is a secret */
    free(meta);
    buf_release(&b);
    return rc;
}

/* Identities (schema, layer, name) given twice: PURSER_EEXISTS naming the first. Sorting
 * pointers keeps this O(n log n) for large bundles. */
int document_identity_compare(const char *schema_a, const char *name_a, const char *layer_a,
                              const char *schema_b, const char *name_b, const char *layer_b)
{
    int c = strcmp(schema_a, schema_b);
    if (!c)
        c = strcmp(name_a, name_b);
    if (!c)
        c = strcmp(layer_a, layer_b);
    return c;
}

static int identity_compare(const void *a, const void *b)
{
    const struct document *x = *(const struct document *const *)a;
    const struct document *y = *(const struct document *const *)b;
    return document_identity_compare(x->schema, x->name, x->layer, y->schema, y->name, y->layer);
}

int document_check_duplicates(struct arena *arena, const struct document *const *docs, size_t n,
                              struct purser_error *err)
{
    const struct document **order = arena_alloc(arena, (n ? n : 1) * sizeof(*order));
    if (!order)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    memcpy(order, docs, n * sizeof(*order));
    qsort(order, n, sizeof(*order), identity_compare);
    for (size_t i = 1; i < n; i++)
        if (identity_compare(&order[i - 1], &order[i]) == 0)
            return purser_error_set(err, PURSER_EEXISTS,
                                    "document [%s, %s] %s appears more than once in the payload",
                                    order[i]->schema, order[i]->layer, order[i]->name);
    return 0;
}

void document_check(json_t *doc, size_t index, json_t *faults, struct document *out)
{
    struct check c = {.messages = faults, .index = index + 1};
    check_one(&c, doc, out);
}

int document_faults(json_t *faults, struct purser_error *err)
{
    return purser_error_set(
        err, PURSER_EINVAL, "%zu documents failed schema validation; the first: %s",
        json_array_size(faults),
        json_string_value(json_object_get(json_array_get(faults, 0), "message")));
}

int document_prepare(struct arena *arena, json_t *docs, struct document **out, size_t *count,
                     json_t **messages, struct purser_error *err)
{
    size_t n = json_array_size(docs);
    struct document *list = arena_calloc(arena, n ? n : 1, sizeof(*list));
    const struct document **order = arena_alloc(arena, (n ? n : 1) * sizeof(*order));
    json_t *faults = json_array();
    int rc;

    *out = NULL;
    *messages = NULL;
    if (!list || !order || !faults) {
        json_decref(faults);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        struct check c = {.messages = faults, .index = i + 1};
        check_one(&c, json_array_get(docs, i), &list[i]);
        order[i] = &list[i];
    }
    if (json_array_size(faults)) {
        *messages = faults;
        return document_faults(faults, err);
    }
    json_decref(faults);
    for (size_t i = 0; i < n; i++)
        if (document_hash(arena, &list[i]))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    rc = document_check_duplicates(arena, order, n, err);
    if (!rc) {
        *out = list;
        *count = n;
    }
    return rc;
}

char *document_aad(struct arena *arena, long long org_id, const char *schema, const char *layer,
                   const char *name, size_t *len)
{
    size_t size = 24 + strlen(schema) + strlen(layer) + strlen(name) + 3;
    char *out = arena_alloc(arena, size);
    int n;
    if (!out)
        return NULL;
    n = snprintf(out, size, "%lld", org_id);
    n++;
    memcpy(out + n, schema, strlen(schema) + 1);
    n += (int)strlen(schema) + 1;
    memcpy(out + n, layer, strlen(layer) + 1);
    n += (int)strlen(layer) + 1;
    memcpy(out + n, name, strlen(name));
    n += (int)strlen(name);
    *len = (size_t)n;
    return out;
}

long long document_duration_seconds(const char *text)
{
    static const struct {
        char unit;
        int time_part;
        long long seconds;
    } units[] = {
        {'Y', 0, 365 * 86400LL}, {'M', 0, 30 * 86400LL}, {'W', 0, 7 * 86400LL}, {'D', 0, 86400LL},
        {'H', 1, 3600LL},        {'M', 1, 60LL},         {'S', 1, 1LL}};
    const char *s = text;
    long long total = 0;
    int time_part = 0, any = 0;
    size_t next_unit = 0;

    if (*s++ != 'P')
        return -1;
    while (*s) {
        long long n = 0;
        size_t u;
        if (*s == 'T' && !time_part) {
            time_part = 1;
            s++;
            continue;
        }
        if (!isdigit((unsigned char)*s))
            return -1;
        while (isdigit((unsigned char)*s) && n < 100000000)
            n = n * 10 + (*s++ - '0');
        for (u = next_unit; u < sizeof(units) / sizeof(units[0]); u++)
            if (units[u].unit == *s && units[u].time_part == time_part)
                break;
        if (u == sizeof(units) / sizeof(units[0]))
            return -1;
        total += n * units[u].seconds;
        next_unit = u + 1;
        any = 1;
        s++;
    }
    return any ? total : -1;
}

/* Emits [value] and appends it to out without the leading "---\n". */
static int emit_block(struct buf *out, json_t *value, struct purser_error *err)
{
    struct buf one = BUF_INIT;
    json_t *stream = json_pack("[o]", value);
    int rc = stream ? yaml_codec_emit(&one, stream, err)
                    : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && (one.len < 4 || memcmp(one.data, "---\n", 4) != 0))
        rc = purser_error_set(err, PURSER_EINTERNAL, "unexpected YAML emitted");
    if (!rc && buf_add(out, one.data + 4, one.len - 4))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    json_decref(stream);
    buf_release(&one);
    return rc;
}

int document_yaml(struct buf *out, const char *schema, const json_t *metadata, const json_t *data,
                  struct purser_error *err)
{
    json_t *doc = json_pack("{s:s, s:O, s:O}", "schema", schema, "metadata", metadata, "data",
                            data ? data : json_null());
    return doc ? emit_block(out, doc, err)
               : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}

int document_data_yaml(struct buf *out, const json_t *data, struct purser_error *err)
{
    json_t *wrapped = json_pack("{s:O}", "data", data ? data : json_null());
    return wrapped ? emit_block(out, wrapped, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}

int document_status_yaml(struct buf *out, const char *bucket, long long revision,
                         struct purser_error *err)
{
    json_t *status =
        json_pack("{s:{s:s, s:I}}", "status", "bucket", bucket, "revision", (json_int_t)revision);
    return status ? emit_block(out, status, err)
                  : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}
