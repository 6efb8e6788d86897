/* jsondiff.h: the difference of two JSON values in the shape of Python's deepdiff (what the
 * real Deckhand's deepdiff endpoint answers, and so what its clients read):
 *   values_changed        {"root['a'][0]": {"old_value": 1, "new_value": 2}}
 *   type_changes          {"root['a']": {"old_type": "<class 'int'>", "new_type": ..., ...}}
 *   dictionary_item_added / dictionary_item_removed   ["root['k']", ...]
 *   iterable_item_added / iterable_item_removed       {"root['l'][3]": value}
 * Lists are compared index by index; an empty object means no difference.
 */
#ifndef PURSER_JSONDIFF_H
#define PURSER_JSONDIFF_H

#include <jansson.h>

/* A new object describing how new_value differs from old_value; NULL when out of memory. */
json_t *jsondiff_deep(const json_t *old_value, const json_t *new_value);

#endif
