/* 0011-yaml-emit: the exact YAML text the emitter writes for values that need care. */
#include "codec/yaml_codec.h"
#include "tap.h"

static void emits(const char *json, const char *want, const char *what)
{
    json_error_t jerr;
    json_t *docs = json_loads(json, JSON_DECODE_ANY, &jerr);
    struct buf out = BUF_INIT;
    struct purser_error err;
    int rc = docs ? yaml_codec_emit(&out, docs, &err) : -1;
    tap_ok(rc == 0, "%s: emits", what);
    tap_is_str(buf_cstr(&out), want, "%s: text", what);
    json_decref(docs);
    buf_release(&out);
}

int main(int argc, char **argv)
{
    tap_init(argc, argv);
    emits("[]", "", "no documents, no text");
    emits("[{\"a\": 1}, {\"b\": 2}]", "---\na: 1\n---\nb: 2\n", "each document starts with ---");
    emits("[{\"a\":\"yes\",\"b\":\"123\",\"c\":\"\",\"d\":\"plain\",\"e\":\"null\",\"f\":\"1.5\"}]",
          "---\na: 'yes'\nb: '123'\nc: ''\nd: plain\ne: 'null'\nf: '1.5'\n",
          "strings that would read back as other types are quoted");
    emits("[{\"s\":\"1e5\",\"v\":\"1.2.3\"}]", "---\ns: 1e5\nv: 1.2.3\n",
          "strings YAML 1.1 keeps as strings stay plain");
    emits("[{\"e\":\"multi\\nline\\n\"}]", "---\ne: |\n  multi\n  line\n",
          "multi-line strings are literal blocks");
    emits("[{\"f\":1.0,\"g\":1e20,\"h\":0.1,\"i\":-2.5e-7}]",
          "---\nf: 1.0\ng: 1.0e+20\nh: 0.1\ni: -2.5e-07\n",
          "floats keep a dot and a signed exponent");
    emits("[{\"n\":null,\"t\":true,\"f\":false,\"i\":-42}]",
          "---\nn: null\nt: true\nf: false\ni: -42\n", "null, booleans and integers");
    emits("[{\"empty_map\":{},\"empty_list\":[]}]", "---\nempty_map: {}\nempty_list: []\n",
          "empty collections in flow style");
    emits("[{\"l\":[1,[2,3],{\"k\":\"v\"}]}]", "---\nl:\n- 1\n- - 2\n  - 3\n- k: v\n",
          "nested sequences in block style");
    emits("[{\"z\":1,\"a\":2}]", "---\nz: 1\na: 2\n", "keys in stored order");
    emits("[{\"u\":\"h\\u00e9llo\"}]", "---\nu: h\xc3\xa9llo\n",
          "non-ASCII text is written as UTF-8");
    emits("[\"top\"]", "--- top\n", "a scalar document follows --- on its line");
    return tap_done();
}
