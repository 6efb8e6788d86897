/* 0010-yaml-codec: the YAML <-> JSON codec, driven by the cases in t/data/yaml/.
 *
 * A case is a folder with `input` (YAML bytes) and either `expected` (a JSON array, one value
 * per document) or `error` (line 1: "LINE:COL", "LINE:" or "-" for the position; line 2: a
 * piece of the message). Every success case is also emitted back to YAML and read again,
 * which must give the same values, and emitting that again must give the same text.
 */
#include "cases.h"
#include "codec/yaml_codec.h"
#include "config/config.h"
#include "tap.h"

#include <stdlib.h>

static void check_roundtrip(const char *name, json_t *docs)
{
    struct buf first = BUF_INIT, second = BUF_INIT;
    struct purser_error err;
    json_t *again = NULL;
    int rc = yaml_codec_emit(&first, docs, &err);
    if (!tap_ok(rc == 0, "%s: emits", name)) {
        tap_diag("  %s", err.message);
        goto cleanup;
    }
    rc = yaml_codec_parse(&again, first.data ? first.data : "", first.len, NULL, &err);
    if (!tap_ok(rc == 0 && json_equal(again, docs), "%s: emitted YAML reads back equal", name)) {
        tap_diag("  emitted:\n%s", buf_cstr(&first));
        if (rc)
            tap_diag("  re-read error %d:%d %s", err.line, err.column, err.message);
        goto cleanup;
    }
    yaml_codec_emit(&second, again, &err);
    tap_ok(first.len == second.len && memcmp(buf_cstr(&first), buf_cstr(&second), first.len) == 0,
           "%s: emitting is stable", name);
cleanup:
    json_decref(again);
    buf_release(&first);
    buf_release(&second);
}

static void run_success(const char *name, const char *input, size_t len, const char *expected_text)
{
    struct purser_error err;
    json_error_t jerr;
    json_t *got = NULL;
    json_t *expected = json_loads(expected_text, JSON_DECODE_ANY, &jerr);
    int rc = yaml_codec_parse(&got, input, len, NULL, &err);

    if (!tap_ok(expected != NULL, "%s: expected file is JSON", name)) {
        tap_diag("  %s", jerr.text);
    } else if (!tap_ok(rc == 0, "%s: parses", name)) {
        tap_diag("  error %d:%d %s", err.line, err.column, err.message);
    } else {
        char *text = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!tap_ok(json_equal(got, expected), "%s: values as expected", name))
            tap_diag("  got %s", text);
        free(text);
        check_roundtrip(name, got);
    }
    json_decref(got);
    json_decref(expected);
}

static void run_failure(const char *name, const char *input, size_t len, char *spec)
{
    struct purser_error err;
    json_t *got = NULL;
    char *want_message = strchr(spec, '\n');
    int want_line = 0, want_column = 0, rc;

    if (want_message) {
        *want_message++ = '\0';
        want_message[strcspn(want_message, "\n")] = '\0';
    }
    sscanf(spec, "%d:%d", &want_line, &want_column);
    rc = yaml_codec_parse(&got, input, len, NULL, &err);
    if (!tap_ok(rc != 0 && got == NULL, "%s: refused", name)) {
        json_decref(got);
        return;
    }
    if (!tap_ok(want_message && strstr(err.message, want_message) != NULL, "%s: message says '%s'",
                name, want_message ? want_message : "?"))
        tap_diag("  got '%s'", err.message);
    if (spec[0] != '-') {
        int ok = err.line == want_line && (want_column == 0 || err.column == want_column);
        if (!tap_ok(ok, "%s: at %s", name, spec))
            tap_diag("  got %d:%d", err.line, err.column);
    }
}

/* yaml_codec_parse_each's callback: keeps each document it is handed, in order. */
struct handed {
    json_t *docs;
    size_t next;
    int out_of_order;
};

static int take(void *ctx, json_t *doc, size_t index)
{
    struct handed *h = ctx;
    h->out_of_order |= index != h->next++;
    return json_array_append_new(h->docs, doc) ? PURSER_EINTERNAL : 0;
}

static int refuse_second(void *ctx, json_t *doc, size_t index)
{
    (void)ctx;
    json_decref(doc);
    return index == 1 ? PURSER_EINTERNAL : 0;
}

/* yaml_codec_parse_each hands each document over as it is read, the same values as
 * yaml_codec_parse's and its messages the same. */
static void test_parse_each(void)
{
    const char *text = "a: 1\n---\n- x\n- {y: 2}\n---\n'z'\n",
               *dup = "---\na: 1\n---\nb: 1\nb: 2\n";
    struct handed h = {.docs = json_array()};
    struct purser_error err, whole_err;
    json_t *out = NULL, *whole = NULL;

    tap_is_int(yaml_codec_parse_each(&out, text, strlen(text), NULL, take, &h, &err), 0,
               "parse_each: parses");
    tap_ok(yaml_codec_parse(&whole, text, strlen(text), NULL, &whole_err) == 0 &&
               json_equal(h.docs, whole),
           "parse_each: hands over the documents yaml_codec_parse gives");
    tap_ok(!h.out_of_order && h.next == 3, "parse_each: each once, indexes in order");
    tap_is_int((int)json_array_size(out), 0, "parse_each: *out keeps none of them");
    json_decref(out);
    json_decref(whole);
    json_array_clear(h.docs);
    h.next = 0;
    out = whole = NULL;
    tap_is_int(
        yaml_codec_parse_each(&out, dup, strlen(dup), &yaml_limits_documents, take, &h, &err),
        PURSER_EINVAL, "parse_each: a key twice is refused");
    yaml_codec_parse(&whole, dup, strlen(dup), &yaml_limits_documents, &whole_err);
    tap_is_str(err.message, whole_err.message, "parse_each: with yaml_codec_parse's message");
    tap_ok(strstr(err.message, "in document 2") != NULL, "parse_each: naming document 2");
    tap_ok(out == NULL, "parse_each: no result after a failure");
    tap_is_int(yaml_codec_parse_each(&out, text, strlen(text), NULL, refuse_second, NULL, &err),
               PURSER_EINTERNAL, "parse_each: the callback's failure stops the parse");
    tap_ok(out == NULL, "parse_each: and leaves no result");
    json_decref(h.docs);
}

int main(int argc, char **argv)
{
    char **names;
    size_t count, cases = 0;
    tap_init(argc, argv);

    count = cases_list("yaml", &names);
    for (size_t i = 0; i < count; i++) {
        size_t len, elen;
        char *input = cases_read("yaml", names[i], "input", &len);
        char *expected = cases_read("yaml", names[i], "expected", &elen);
        char *error = expected ? NULL : cases_read("yaml", names[i], "error", &elen);
        if (!input || (!expected && !error))
            tap_ok(0, "%s: has input and expected or error", names[i]);
        else if (expected)
            run_success(names[i], input, len, expected);
        else
            run_failure(names[i], input, len, error);
        cases++;
        free(input);
        free(expected);
        free(error);
    }
    cases_free(names, count);
    tap_ok(cases >= 40, "at least 40 cases ran (%zu)", cases);
    test_parse_each();
    {
        /* A key given twice: refused by default even with the same value; the document API's
         * limits take an equal repeat once and refuse a different one, naming key and document. */
        const char *same = "---\na: 1\n---\nb: 1\nb: 1\n", *differ = "---\na: 1\n---\nb: 1\nb: 2\n";
        struct purser_error err;
        json_t *docs = NULL;
        tap_is_int(yaml_codec_parse(&docs, same, strlen(same), NULL, &err), PURSER_EINVAL,
                   "duplicate keys: refused by default, even with equal values");
        tap_is_int(yaml_codec_parse(&docs, same, strlen(same), &yaml_limits_documents, &err), 0,
                   "duplicate keys: an equal repeat is taken once by the document limits");
        tap_is_int((int)json_integer_value(json_object_get(json_array_get(docs, 1), "b")), 1,
                   "duplicate keys: with its value");
        json_decref(docs);
        docs = NULL;
        tap_is_int(yaml_codec_parse(&docs, differ, strlen(differ), &yaml_limits_documents, &err),
                   PURSER_EINVAL,
                   "duplicate keys: different values refused by the document limits");
        tap_ok(strstr(err.message, "duplicate key 'b' in document 2") != NULL && err.line == 5,
               "duplicate keys: naming the key, the document and the line (%s, line %d)",
               err.message, err.line);
    }
    return tap_done();
}
