/* merge_patch.c: JSON Merge Patch (RFC 7396 section 2, its MergePatch function). */
#include "codec/merge_patch.h"

json_t *merge_patch(const json_t *target, const json_t *patch)
{
    const char *key;
    json_t *value, *out;
    if (!json_is_object(patch))
        return json_deep_copy(patch);
    out = json_is_object(target) ? json_deep_copy(target) : json_object();
    if (!out)
        return NULL;
    json_object_foreach ((json_t *)patch, key, value) {
        json_t *merged;
        if (json_is_null(value)) {
            json_object_del(out, key);
            continue;
        }
        merged = merge_patch(json_object_get(out, key), value);
        if (!merged || json_object_set_new(out, key, merged)) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}
