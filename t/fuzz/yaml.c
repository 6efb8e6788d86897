/* yaml: the YAML codec on any bytes (the document API's limits); what parses must emit, and
 * the emitted text must parse back to equal documents. */
#include "codec/yaml_codec.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct yaml_limits limits = yaml_limits_documents;
    struct purser_error err;
    struct buf out = BUF_INIT;
    json_t *docs = NULL, *again = NULL;
    limits.max_nodes = 100000;
    limits.max_alias_nodes = 10000;
    if (yaml_codec_parse(&docs, (const char *)data, size, &limits, &err))
        return 0;
    if (yaml_codec_emit(&out, docs, &err))
        abort();                 /* what parses always emits */
    limits.max_nodes = 10000000; /* (an alias's expansion is written out in full) */
    limits.max_alias_nodes = 0;
    if (yaml_codec_parse(&again, out.data ? out.data : "", out.len, &limits, &err) ||
        !json_equal(docs, again))
        abort(); /* and reads back as itself */
    json_decref(again);
    json_decref(docs);
    buf_release(&out);
    return 0;
}
