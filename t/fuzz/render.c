/* render: a YAML stream of Deckhand documents (status added where missing), layered and
 * substituted under small limits. */
#include "docs/render.h"
#include "codec/yaml_codec.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct yaml_limits limits = yaml_limits_documents;
    struct render_limits small = {
        .match_steps = 100000, .max_string = 1 << 20, .max_output = 8 << 20};
    struct purser_error err;
    json_t *docs = NULL, *out = NULL, *secrets = NULL, *doc;
    size_t i;
    limits.max_nodes = 20000;
    if (yaml_codec_parse(&docs, (const char *)data, size, &limits, &err))
        return 0;
    json_array_foreach (docs, i, doc) {
        if (json_is_object(doc) && !json_object_get(doc, "status"))
            json_object_set_new(doc, "status",
                                json_pack("{s:s, s:i}", "bucket", "fuzz", "revision", 1));
    }
    if (!render_documents(docs, NULL, &small, &out, &secrets, &err)) {
        json_decref(out);
        json_decref(secrets);
    }
    json_decref(docs);
    return 0;
}
