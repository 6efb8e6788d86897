/* json_intern.h: one shared value for equal jansson values (hash consing).
 *
 * A large revision repeats itself: thousands of documents carry the same layeringDefinition,
 * the same substitution sources and destinations, the same labels and status. Decoded one by
 * one, each copy costs jansson a few hundred bytes per object (the object, its hash table,
 * one entry per key). Passed through a table, every value equal to one seen before becomes a
 * reference to that one, so the decoded set costs what its distinct values cost.
 *
 * Equal means the same type and, for containers, the same keys in the same order (or the
 * same length) holding the same, already shared, children; strings by their bytes, numbers
 * by their value (an integer never equals a real). The table works bottom-up, so each
 * comparison is shallow.
 *
 * The rule this asks: a shared value is read-only. Nothing may change a value the table
 * returned, or any value inside it, for as long as other references to it live: copy it
 * first (json_copy for a shallow change, json_deep_copy otherwise).
 */
#ifndef PURSER_JSON_INTERN_H
#define PURSER_JSON_INTERN_H

#include <jansson.h>
#include <stddef.h>

struct json_intern;

/* A new, empty table; NULL when out of memory. */
struct json_intern *json_intern_new(void);

/* The shared value equal to value (stolen), a new reference: value itself when the table had
 * none equal (its children replaced by their shared equals), else the one seen first. NULL
 * only when value is NULL. When the table cannot grow, value is returned unshared. */
json_t *json_intern(struct json_intern *t, json_t *value);

/* JSON text (len bytes) decoded as json_loadb(text, len, JSON_DECODE_ANY) decodes it, straight
 * into shared values: a value seen before costs no memory, and is not even made. A new
 * reference, or NULL where jansson refuses the text. */
json_t *json_intern_loadb(struct json_intern *t, const char *text, size_t len);

/* The shared string of len bytes at s (a new reference); NULL when they are not UTF-8. */
json_t *json_intern_stringn(struct json_intern *t, const char *s, size_t len);

/* Distinct values held. */
size_t json_intern_count(const struct json_intern *t);

/* How many texts json_intern_loadb left to jansson: those it refuses, and the rare ones this
 * decoder does not read itself (a number longer than 63 characters). */
size_t json_intern_handed_over(const struct json_intern *t);

/* Drops the table's references (values still referenced elsewhere live on). NULL is fine. */
void json_intern_free(struct json_intern *t);

#endif
