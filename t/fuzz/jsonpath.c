/* jsonpath: Deckhand's paths. The input's first line is a path; the rest is a YAML document
 * the path is read from, written into and deleted from. */
#include "codec/jsonpath.h"
#include "codec/yaml_codec.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), *rest, *line;
    struct jsonpath *path = NULL;
    struct purser_error err;
    struct yaml_limits limits = yaml_limits_default;
    json_t *docs = NULL, *root;
    if (!text)
        return 0;
    line = fuzz_line(text, &rest);
    limits.max_nodes = 10000;
    if (!jsonpath_compile(&path, line, &err)) {
        if (yaml_codec_parse(&docs, rest, strlen(rest), &limits, &err))
            docs = NULL;
        root = json_array_size(docs) ? json_deep_copy(json_array_get(docs, 0)) : json_object();
        jsonpath_get(path, root);
        jsonpath_set(path, &root, json_string("x"), &err);
        jsonpath_delete(path, &root, &err);
        json_decref(root);
        json_decref(docs);
        jsonpath_free(path);
    }
    free(text);
    return 0;
}
