/* jsonpath.h: Deckhand's JSONPath subset, compiled once, over jansson values.
 *
 * A path is "." or "$" (the whole value) or a chain of steps: ".key", ".'quoted key'" or
 * ".\"quoted key\"" (for keys holding dots or colons, such as 'filter:authtoken'), and
 * "[N]" list indexes: ".a.b", "$.a[0].x", ".a[2][0]". A leading ".data" is stripped (Deckhand
 * paths may name the data section itself). Compiling checks the syntax once; get, set and
 * delete then walk the steps without parsing.
 */
#ifndef PURSER_JSONPATH_H
#define PURSER_JSONPATH_H

#include "base/err.h"

#include <jansson.h>
#include <stddef.h>

struct jsonpath;

/* Compiles text. PURSER_EINVAL naming the position for a malformed path. Free with
 * jsonpath_free(). */
int jsonpath_compile(struct jsonpath **out, const char *text, struct purser_error *err);

void jsonpath_free(struct jsonpath *path);

/* 1 when the path is the whole value ("." or "$"). */
int jsonpath_is_root(const struct jsonpath *path);

/* The text the path was compiled from. */
const char *jsonpath_text(const struct jsonpath *path);

/* How many steps the path has (0 for the whole value). */
size_t jsonpath_length(const struct jsonpath *path);

/* Step i (below jsonpath_length): its key, borrowed, or NULL for a list index (*index). */
const char *jsonpath_step(const struct jsonpath *path, size_t i, size_t *index);

/* The value at path in root (borrowed), or NULL when any step is missing. */
json_t *jsonpath_get(const struct jsonpath *path, json_t *root);

/* Puts value (a new reference, consumed) at path in *root, creating missing mappings along
 * the way and padding lists with empty mappings up to an index, as Deckhand does; a step
 * that meets a value of the wrong kind (a key into a list, an index into a mapping) replaces
 * it. For the root path, *root becomes value. */
int jsonpath_set(const struct jsonpath *path, json_t **root, json_t *value,
                 struct purser_error *err);

/* Readies *root for a change at path when its values may be shared (held by more than one
 * parent: a reference count above one). *root and each container on the way to the value at
 * path (with whole, that value too) that is shared is replaced, in its parent, by a shallow
 * copy (json_copy) of its own, so that jsonpath_set or jsonpath_delete at path (with whole, a
 * change anywhere inside the value) changes nothing held elsewhere. Steps that are not there
 * are left to the change itself. -1 when out of memory. */
int jsonpath_unshare(const struct jsonpath *path, json_t **root, int whole);

/* Removes the value at path (PURSER_ENOTFOUND when there is none; the root is emptied). */
int jsonpath_delete(const struct jsonpath *path, json_t **root, struct purser_error *err);

/* A cache of compiled paths by text: each distinct path is compiled once. */
struct jsonpath_cache;

struct jsonpath_cache *jsonpath_cache_new(void);
void jsonpath_cache_free(struct jsonpath_cache *cache);

/* The compiled path for text (owned by the cache), or NULL with err filled. */
const struct jsonpath *jsonpath_cached(struct jsonpath_cache *cache, const char *text,
                                       struct purser_error *err);

#endif
