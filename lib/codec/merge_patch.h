/* merge_patch.h: JSON Merge Patch (RFC 7396): what `PATCH` with application/merge-patch+json
 * does to a resource. */
#ifndef PURSER_MERGE_PATCH_H
#define PURSER_MERGE_PATCH_H

#include <jansson.h>

/* target with patch applied, as a new value (target is not changed; NULL target is null): a
 * member of a patch object set to null removes that member, an object merges into an object
 * member by member, anything else replaces. NULL only when out of memory. */
json_t *merge_patch(const json_t *target, const json_t *patch);

#endif
