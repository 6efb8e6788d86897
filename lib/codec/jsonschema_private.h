/* jsonschema_private.h: the compiled form of a schema, shared by jsonschema_compile.c and
 * jsonschema_validate.c. */
#ifndef PURSER_JSONSCHEMA_PRIVATE_H
#define PURSER_JSONSCHEMA_PRIVATE_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include "codec/jsonschema.h"

#include "base/arena.h"

#include <jansson.h>
#include <pcre2.h>

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
    struct node *additional, *items, *additional_items, *not ;
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

/* The node n's "$ref" points at, compiled on first use (NULL, with s->err set, when it does not
 * resolve). The node belongs to s. */
struct node *jsonschema_resolve_ref(struct jsonschema *s, struct node *n);

#endif
