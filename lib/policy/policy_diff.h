/* policy_diff.h: what changes between two Policyfile locks.
 *
 * policy_diff(from, to) answers
 *   {"run_list": {"from": [...], "to": [...], "added": [...], "removed": [...]},
 *    "cookbooks": {"added": {name: version}, "removed": {name: version},
 *                  "changed": {name: {"from": version, "to": version}}},
 *    "attributes": {"added": [path], "removed": [path], "changed": [path]}}
 * where attribute paths are dotted ("default_attributes.app.port"), covering
 * default_attributes and override_attributes, down to the first value that differs (arrays
 * and scalars compare whole). Lists are in a stable order (run list order, then sorted).
 */
#ifndef PURSER_POLICY_DIFF_H
#define PURSER_POLICY_DIFF_H

#include <jansson.h>

/* A new reference; NULL only when out of memory. from and to are borrowed. */
json_t *policy_diff(const json_t *from, const json_t *to);

#endif
