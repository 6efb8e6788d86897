/* jsonschema: a YAML stream whose first document is compiled as a JSON Schema (draft 4) and
 * every later one validated against it. */
#include "codec/jsonschema.h"
#include "codec/yaml_codec.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct yaml_limits limits = yaml_limits_default;
    struct purser_error err;
    struct jsonschema *schema = NULL;
    json_t *docs = NULL;
    limits.max_nodes = 20000;
    if (yaml_codec_parse(&docs, (const char *)data, size, &limits, &err))
        return 0;
    if (json_array_size(docs) && !jsonschema_compile(&schema, json_array_get(docs, 0), &err)) {
        for (size_t i = 1; i < json_array_size(docs); i++) {
            json_t *errors = json_array();
            jsonschema_validate(schema, json_array_get(docs, i), errors, 10);
            json_decref(errors);
        }
        jsonschema_free(schema);
    }
    json_decref(docs);
    return 0;
}
