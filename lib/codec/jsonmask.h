/* jsonmask.h: marks on the parts of a JSON value, such as which values of a rendered document
 * came from an encrypted one, kept as a JSON value of their own (so that they are cached and
 * copied with the value they mark).
 *
 * A mask is NULL (nothing marked), true (the whole value marked), or an object whose members
 * mark the parts of a mapping (by key) or of a list (by the item's index, in decimal). A mask
 * describes one value; the functions that change *mask take the value as it is before the
 * change (to mark a marked whole part by part when only some of it stops being marked). The
 * *mask they change must be the caller's own: json_deep_copy one that is shared.
 */
#ifndef PURSER_JSONMASK_H
#define PURSER_JSONMASK_H

#include "codec/jsonpath.h"

#include <jansson.h>

/* The mask of the part at path (borrowed): true when it or a value around it is marked whole,
 * NULL when nothing in it is marked. */
const json_t *jsonmask_get(const json_t *mask, const struct jsonpath *path);

/* Makes sub (a new reference, consumed; NULL to clear) the mask of the part of value at path,
 * whatever was marked there before; the rest of the value stays marked as it was. -1 when out
 * of memory. */
int jsonmask_set(json_t **mask, const struct jsonpath *path, json_t *sub, const json_t *value);

/* The part of value at path is removed: its marks go, and in a list the marks of the items
 * after it move up with them. -1 when out of memory. */
int jsonmask_remove(json_t **mask, const struct jsonpath *path, const json_t *value);

/* A mask that marks value whole (true) becomes one that marks each of its parts whole
 * (nothing, for a value without parts). -1 when out of memory. */
int jsonmask_split(json_t **mask, const json_t *value);

/* 1 when mask marks anything. */
int jsonmask_any(const json_t *mask);

/* value with each marked part replaced by the string with: a new reference (the parts not
 * marked shared with value), or NULL when out of memory. */
json_t *jsonmask_apply(const json_t *value, const json_t *mask, const char *with);

#endif
