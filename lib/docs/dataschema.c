/* dataschema.c: the built-in schemas of Deckhand's kinds and the DataSchemas of a revision,
 * each compiled once, when a document first needs it. */
#include "docs/dataschema.h"

#include "docs/document.h"

#include <stdlib.h>
#include <string.h>

/* The schemas purser knows without a DataSchema: the data of Deckhand's own kinds. */
static const struct {
    const char *kind;
    const char *schema;
} builtin[] = {
    {"deckhand/Certificate", "{\"type\":\"string\"}"},
    {"deckhand/CertificateKey", "{\"type\":\"string\"}"},
    {"deckhand/CertificateAuthority", "{\"type\":\"string\"}"},
    {"deckhand/CertificateAuthorityKey", "{\"type\":\"string\"}"},
    {"deckhand/PrivateKey", "{\"type\":\"string\"}"},
    {"deckhand/PublicKey", "{\"type\":\"string\"}"},
    {"deckhand/Passphrase", "{\"type\":\"string\"}"},
    {"deckhand/LayeringPolicy",
     "{\"type\":\"object\",\"required\":[\"layerOrder\"],\"properties\":{\"layerOrder\":"
     "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}"},
    {"deckhand/ValidationPolicy",
     "{\"type\":\"object\",\"required\":[\"validations\"],\"properties\":{\"validations\":"
     "{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"name\"],\"properties\":"
     "{\"name\":{\"type\":\"string\"},\"expiresAfter\":{\"type\":\"string\"}}}}}}"},
    {"deckhand/DataSchema", "{\"type\":\"object\"}"},
};

#define BUILTIN_COUNT (sizeof(builtin) / sizeof(builtin[0]))

/* One schema of a set, compiled when first asked for. */
struct dataschema_entry {
    char *name;           /* a DataSchema's metadata.name; NULL for a built-in schema */
    const json_t *source; /* borrowed, or owned (a built-in one, parsed) */
    json_t *owned;
    struct jsonschema *compiled;
    int tried;
    struct purser_error failed; /* why it did not compile (code 0: it did) */
};

struct dataschema_set {
    struct dataschema_entry builtins[BUILTIN_COUNT];
    struct dataschema_entry *added;
    size_t count, cap;
    json_t *by_name; /* {name: index in added} */
};

static int builtin_index(const char *schema)
{
    for (size_t i = 0; i < BUILTIN_COUNT; i++)
        if (document_schema_is(schema, builtin[i].kind))
            return (int)i;
    return -1;
}

int dataschema_builtin(const char *schema)
{
    return builtin_index(schema) >= 0;
}

int dataschema_reserved(const char *name)
{
    if (strncmp(name, "metadata/", 9) == 0)
        return 1;
    return strncmp(name, "deckhand/", 9) == 0 && !dataschema_builtin(name);
}

struct dataschema_set *dataschema_set_new(void)
{
    struct dataschema_set *set = calloc(1, sizeof(*set));
    if (set && !(set->by_name = json_object())) {
        free(set);
        set = NULL;
    }
    return set;
}

static void entry_release(struct dataschema_entry *e)
{
    jsonschema_free(e->compiled);
    json_decref(e->owned);
    free(e->name);
}

void dataschema_set_free(struct dataschema_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < BUILTIN_COUNT; i++)
        entry_release(&set->builtins[i]);
    for (size_t i = 0; i < set->count; i++)
        entry_release(&set->added[i]);
    free(set->added);
    json_decref(set->by_name);
    free(set);
}

int dataschema_set_add(struct dataschema_set *set, const char *name, const json_t *schema)
{
    json_t *known = json_object_get(set->by_name, name);
    struct dataschema_entry *e;
    if (known) { /* the later one replaces it */
        e = &set->added[json_integer_value(known)];
        jsonschema_free(e->compiled);
        e->compiled = NULL;
        e->tried = 0;
        e->source = schema;
        return 0;
    }
    if (set->count == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 8;
        struct dataschema_entry *grown = realloc(set->added, cap * sizeof(*grown));
        if (!grown)
            return -1;
        set->added = grown;
        set->cap = cap;
    }
    e = &set->added[set->count];
    memset(e, 0, sizeof(*e));
    if (!(e->name = strdup(name)) ||
        json_object_set_new_nocheck(set->by_name, name, json_integer((json_int_t)set->count))) {
        free(e->name);
        return -1;
    }
    e->source = schema;
    set->count++;
    return 0;
}

/* The DataSchema for documents of schema: named for it, or for the longest part of it that
 * ends before a '/'. */
static struct dataschema_entry *added_for(const struct dataschema_set *set, const char *schema)
{
    size_t len = strlen(schema);
    while (len > 0) {
        const json_t *at = json_object_getn(set->by_name, schema, len);
        if (at)
            return &set->added[json_integer_value(at)];
        while (len > 0 && schema[--len] != '/')
            ;
    }
    return NULL;
}

static struct dataschema_entry *entry_for(struct dataschema_set *set, const char *schema)
{
    int b = builtin_index(schema);
    return b >= 0 ? &set->builtins[b] : added_for(set, schema);
}

int dataschema_set_applies(const struct dataschema_set *set, const char *schema)
{
    return dataschema_builtin(schema) || added_for(set, schema) != NULL;
}

/* Compiles e once; a failure is kept, to be given again. */
static void compile(struct dataschema_entry *e, int b)
{
    json_error_t jerr;
    e->tried = 1;
    purser_error_clear(&e->failed);
    if (b >= 0 && !e->owned && !(e->owned = json_loads(builtin[b].schema, 0, &jerr))) {
        purser_error_set(&e->failed, PURSER_EINTERNAL, "out of memory");
        return;
    }
    if (b >= 0)
        e->source = e->owned;
    if (!e->source) {
        purser_error_set(&e->failed, PURSER_EINVAL, "the DataSchema %s has no schema", e->name);
        return;
    }
    jsonschema_compile(&e->compiled, (json_t *)e->source, &e->failed);
}

int dataschema_set_find(struct dataschema_set *set, const char *schema, struct dataschema_match *m,
                        struct purser_error *err)
{
    int b = builtin_index(schema);
    struct dataschema_entry *e = entry_for(set, schema);
    memset(m, 0, sizeof(*m));
    if (!e)
        return 0;
    if (!e->tried)
        compile(e, b);
    m->source = e->source;
    m->dataschema = e->name;
    if (e->failed.code != PURSER_OK) {
        if (err)
            *err = e->failed;
        return e->failed.code;
    }
    m->compiled = e->compiled;
    return 0;
}
