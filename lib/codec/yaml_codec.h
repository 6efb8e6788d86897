/* yaml_codec.h: YAML streams to jansson values and back.
 *
 * Parsing follows YAML 1.1 as PyYAML's safe loader resolves it (Deckhand's clients and the real
 * Deckhand use PyYAML): plain scalars become null (~, null, Null, NULL, empty), booleans
 * (yes/no/on/off/true/false in three casings; not y/n), integers (decimal, 0b binary, 0-prefixed
 * octal, 0x hex, base-60 "1:30", underscores allowed), floats (a dot is required: "1e5" stays a
 * string; .inf and .nan cannot be JSON and are refused), or strings. Quoted and block scalars
 * are strings. Explicit !!str, !!int, !!float, !!bool, !!null, !!binary, !!timestamp, !!map,
 * !!seq tags are honoured; any other tag is refused. Mapping keys keep their order; a key that
 * is not a string becomes its JSON text ("1", "true", "null"); a mapping or sequence as key is
 * refused, and so is a key given twice (with the same value too, unless
 * limits->equal_duplicates). Merge keys (<<) work as in YAML 1.1. Anchors are
 * expanded into copies.
 *
 * Errors are PURSER_EINVAL with a 1-based line and column and a message (libyaml's for syntax
 * errors), or PURSER_ETOOLARGE for an input over max_bytes. The limits stop alias bombs
 * (max_nodes counts every node after alias expansion) and absurd nesting (max_depth).
 */
#ifndef PURSER_YAML_CODEC_H
#define PURSER_YAML_CODEC_H

#include "base/arena.h"
#include "base/buf.h"
#include "base/err.h"

#include <jansson.h>
#include <stddef.h>

struct yaml_limits {
    size_t max_bytes;       /* longest input accepted */
    unsigned max_depth;     /* deepest nesting of mappings and sequences */
    size_t max_nodes;       /* most nodes in the stream, counting every alias expansion */
    int equal_duplicates;   /* a key given twice with equal values is taken once (never a
                               later value silently replacing an earlier one) */
    size_t max_alias_nodes; /* most nodes aliases may add, checked before any is copied (0:
                               only max_nodes bounds them) */
    const char *nodes_key, *alias_key; /* the settings named in messages (NULL: none) */
};

/* 64 MiB, depth 200, 4,000,000 nodes, a key given twice refused. */
extern const struct yaml_limits yaml_limits_default;

/* The document API's: the same limits, and a key given twice with the same value accepted
 * (Deckhand's own samples repeat `storagePolicy: cleartext` in a mapping); a key given twice
 * with different values is refused, where PyYAML would silently keep the later one. */
extern const struct yaml_limits yaml_limits_documents;

/* Parses a stream of zero or more documents. On success *out is a new JSON array with one
 * element per document (the caller owns it); on failure *out is NULL and err says where.
 * limits may be NULL for the defaults. */
int yaml_codec_parse(json_t **out, const char *text, size_t len, const struct yaml_limits *limits,
                     struct purser_error *err);

/* yaml_codec_parse, handing each document to each(ctx, doc, index) as soon as it is complete
 * instead of to *out (which stays an empty array): the callback owns doc (and must release
 * it). A nonzero return stops the parse with that code (PURSER_EINTERNAL: "out of memory"). */
int yaml_codec_parse_each(json_t **out, const char *text, size_t len,
                          const struct yaml_limits *limits,
                          int (*each)(void *ctx, json_t *doc, size_t index), void *ctx,
                          struct purser_error *err);

/* Appends the YAML stream of the documents in the array `docs` to out: each document begins
 * with "---", mappings and sequences in block style, keys in their stored order, strings
 * quoted whenever their plain form would read back as something else, multi-line strings as
 * literal blocks. Reading the output back gives values equal to docs. */
int yaml_codec_emit(struct buf *out, const json_t *docs, struct purser_error *err);

/* The text a JSON scalar has as a mapping key ("1", "true", "null", the string itself).
 * Returns a new string the caller frees, or NULL for a container or when out of memory. */
char *yaml_codec_key_text(const json_t *scalar);

/* yaml_codec_key_text in arena memory (owned by the arena), or NULL as above. */
char *yaml_codec_key_text_in(struct arena *arena, const json_t *scalar);

#endif
