/* 2001-documents: Deckhand document checks and defaults (lib/document), driven by the cases
 * in t/data/documents/, plus content hashes and ISO 8601 durations.
 *
 * A case is a folder with `input` (a YAML stream) and either `expected` (a JSON array: the
 * documents after their defaults are filled) or `error` (line 1: the HTTP status the code
 * maps to, 400 or 409; each further line: a piece of one message, every message accounted
 * for, in order for 400's D001 list).
 */
#include "base/arena.h"
#include "cases.h"
#include "codec/yaml_codec.h"
#include "docs/document.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static void check_error(const char *name, int rc, const json_t *messages,
                        const struct purser_error *err, char *want)
{
    char *line = strtok(want, "\n");
    size_t i = 0;
    int status = atoi(line);
    tap_ok((status == 400 && rc == PURSER_EINVAL) || (status == 409 && rc == PURSER_EEXISTS),
           "%s: fails with %d", name, status);
    for (line = strtok(NULL, "\n"); line; line = strtok(NULL, "\n"), i++) {
        const json_t *m = json_array_get(messages, i);
        const char *text =
            status == 400 ? json_string_value(json_object_get(m, "message")) : err->message;
        if (!tap_ok(text && strstr(text, line), "%s: message %zu has '%s'", name, i + 1, line))
            tap_diag("  got: %s", text ? text : "(none)");
        if (status == 400)
            tap_ok(strcmp(json_string_value(json_object_get(m, "name")), "D001") == 0,
                   "%s: message %zu is D001", name, i + 1);
    }
    if (status == 400)
        tap_ok(json_array_size(messages) == i, "%s: %zu messages, one per fault", name, i);
}

static void run_case(const char *name)
{
    size_t len = 0;
    char *input = cases_read("documents", name, "input", &len);
    char *expected = cases_read("documents", name, "expected", NULL);
    char *error = cases_read("documents", name, "error", NULL);
    struct arena *arena = arena_new();
    struct purser_error err;
    struct document *docs = NULL;
    json_t *stream = NULL, *messages = NULL;
    size_t count = 0;
    int rc;

    if (!tap_ok(input && (expected || error) && arena, "%s: case files", name))
        goto cleanup;
    if (!tap_ok(yaml_codec_parse(&stream, input, len, NULL, &err) == 0, "%s: YAML parses", name))
        goto cleanup;
    rc = document_prepare(arena, stream, &docs, &count, &messages, &err);
    if (error) {
        check_error(name, rc, messages, &err, error);
    } else {
        json_error_t jerr;
        json_t *want = json_loads(expected, 0, &jerr);
        tap_ok(rc == 0 && count == json_array_size(stream), "%s: every document accepted", name);
        if (!tap_ok(want && json_equal(want, stream), "%s: defaults as expected", name)) {
            char *got = json_dumps(stream, JSON_COMPACT);
            tap_diag("  got %s", got);
            free(got);
        }
        json_decref(want);
    }
cleanup:
    json_decref(stream);
    json_decref(messages);
    arena_free(arena);
    free(input);
    free(expected);
    free(error);
}

static struct document *prepare_one(struct arena *arena, const char *yaml, json_t **keep)
{
    struct purser_error err;
    struct document *docs = NULL;
    json_t *messages = NULL;
    size_t count = 0;
    if (yaml_codec_parse(keep, yaml, strlen(yaml), NULL, &err) ||
        document_prepare(arena, *keep, &docs, &count, &messages, &err))
        docs = NULL;
    json_decref(messages);
    return docs;
}

static void check_hashes(void)
{
    struct arena *arena = arena_new();
    json_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    struct document *x = prepare_one(arena,
                                     "schema: a/B/v1\nmetadata: {schema: metadata/Document/v1, "
                                     "name: n, labels: {p: 1, q: 2}}\ndata: {k: 1, l: [1, 2]}\n",
                                     &a);
    struct document *y =
        prepare_one(arena,
                    "metadata: {labels: {q: 2, p: 1}, name: n, schema: "
                    "metadata/Document/v1}\ndata: {l: [1, 2], k: 1}\nschema: a/B/v1\n",
                    &b);
    struct document *z = prepare_one(arena,
                                     "schema: a/B/v1\nmetadata: {schema: metadata/Document/v1, "
                                     "name: n, labels: {p: 1, q: 2}}\ndata: {k: 1, l: [2, 1]}\n",
                                     &c);
    struct document *w = prepare_one(arena,
                                     "schema: a/B/v1\nmetadata: {schema: metadata/Document/v1, "
                                     "name: m, labels: {p: 1, q: 2}}\ndata: {k: 1, l: [1, 2]}\n",
                                     &d);
    tap_ok(x && y && z && w, "hash documents prepare");
    if (x && y && z && w) {
        tap_ok(memcmp(x->content_sha256, y->content_sha256, 32) == 0,
               "the content hash ignores key order");
        tap_ok(memcmp(x->content_sha256, z->content_sha256, 32) != 0,
               "and sees a change in list order");
        tap_ok(memcmp(x->content_sha256, w->content_sha256, 32) != 0,
               "and covers the identity (another name)");
    }
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
    arena_free(arena);
}

static void check_durations(void)
{
    static const struct {
        const char *text;
        long long seconds;
    } cases[] = {{"P1W", 604800},   {"PT12H", 43200}, {"P1DT1M", 86460}, {"PT90S", 90},
                 {"P1Y", 31536000}, {"P2M", 5184000}, {"PT1H30M", 5400}, {"P", -1},
                 {"1D", -1},        {"P1X", -1},      {"PT", -1},        {"P1H", -1},
                 {"PT1D", -1},      {"P1D1W", -1},    {"P-1D", -1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        tap_ok(document_duration_seconds(cases[i].text) == cases[i].seconds,
               "duration '%s' is %lld", cases[i].text, cases[i].seconds);
}

int main(int argc, char **argv)
{
    char **names;
    size_t n;
    tap_init(argc, argv);
    n = cases_list("documents", &names);
    tap_ok(n >= 6, "%zu document cases found", n);
    for (size_t i = 0; i < n; i++)
        run_case(names[i]);
    cases_free(names, n);
    check_hashes();
    check_durations();
    tap_ok(document_schema_is("deckhand/LayeringPolicy/v1", "deckhand/LayeringPolicy") &&
               !document_schema_is("deckhand/LayeringPolicyX/v1", "deckhand/LayeringPolicy"),
           "schema kinds match by whole sections");
    return tap_done();
}
