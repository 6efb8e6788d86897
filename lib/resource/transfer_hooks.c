/* transfer_hooks.c: what the kinds' export and import hooks share (transfer_hooks.h). */
#include "resource/transfer_hooks.h"

json_t *transfer_envelope(const char *kind, const char *name, json_t *spec)
{
    return json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", kind, "version", "v1", "metadata", "name",
                     name, "spec", spec ? spec : json_object());
}

void transfer_append(const struct transfer_ctx *c, json_t *out, json_t *doc)
{
    json_array_append_new(out, doc);
    if (c->progress)
        c->progress(c->progress_ctx, json_array_size(out),
                    json_string_value(json_object_get(doc, "kind")));
}

const char *transfer_meta_name(const json_t *doc)
{
    return json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
}
