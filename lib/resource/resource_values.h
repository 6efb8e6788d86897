/* resource_values.h: a kind's indexed values (clusters: status.dynamic_facts), so that a list
 * filters on them through an index rather than by reading each row's JSON.
 *
 * Each leaf of the JSON object a resource reports is one row of resource_values (sql/0018): its
 * path (the keys from the top joined by '.'; the items of a list under the list's own path, so
 * that a value in a list is found as the list's), its value as text (a string as it is, a
 * number as its JSON text, true or false; null is left out) and, when that text is a version,
 * a key that sorts as versions do. The migration computes the same rows with SQL for what was
 * stored before it: a change to the rules here is a change there.
 *
 * A version is [v|V]N[.N[.N[.N]]][-PRE][+BUILD]: one to four numbers of at most ten digits,
 * compared as numbers (1.9 < 1.29 < 1.30; a missing one is 0, so 1.29 = 1.29.0); a pre-release
 * sorts before its release and pre-releases compare as text among themselves; the build is
 * ignored (v1.29.3+k3s1 = 1.29.3).
 */
#ifndef PURSER_RESOURCE_VALUES_H
#define PURSER_RESOURCE_VALUES_H

#include "base/arena.h"
#include "base/err.h"
#include "store/store.h"

#include <jansson.h>

#define RESOURCE_VALUES_TEXT_MAX 191  /* characters of a path or a value that is indexed */
#define RESOURCE_VALUES_DEPTH_MAX 32  /* the deepest leaf indexed (the object's members: 1) */
#define RESOURCE_VALUES_MAX 1000      /* values indexed per resource: the first, in order */
#define RESOURCE_VERSION_KEY_SIZE 129 /* a version key and its NUL */

/* The comparisons a filter on indexed values makes. */
enum resource_value_op {
    RESOURCE_VALUE_EQ, /* == : a value at the path is that text */
    RESOURCE_VALUE_NE, /* != : none is (a resource without the path too) */
    RESOURCE_VALUE_LT, /* <, <=, >, >= : a value at the path is a version that compares so */
    RESOURCE_VALUE_LE,
    RESOURCE_VALUE_GT,
    RESOURCE_VALUE_GE
};

/* Writes the sort key of the version text into key: 0, or -1 when text is not a version. */
int resource_version_key(const char *text, char key[RESOURCE_VERSION_KEY_SIZE]);

/* Replaces the indexed values of resource id (of organization org_id, its stored kind and its
 * name) with the leaves of value (an object; NULL or another type: none), in the caller's
 * transaction: at most RESOURCE_VALUES_MAX, depth-first in the object's order. */
int resource_values_write(struct store *store, long long id, long long org_id, const char *kind,
                          const char *name, const json_t *value, struct purser_error *err);

/* A filter's condition on the indexed values of the resource a list calls `r`: *sql (static
 * text, " AND ...") with two `?`, bound to params[0] (the path) and params[1] (the value, or
 * its version key, written into key: both borrowed from path, value and key). filter names the
 * whole condition for messages. PURSER_EINVAL naming the filter when path is not a path (empty,
 * an empty key, too long) or value is over RESOURCE_VALUES_TEXT_MAX characters, or, for an
 * ordering, is not a version. */
int resource_values_condition(const char *filter, const char *path, enum resource_value_op op,
                              const char *value, char key[RESOURCE_VERSION_KEY_SIZE],
                              const char **sql, struct store_value params[2],
                              struct purser_error *err);

#endif
