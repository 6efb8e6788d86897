/* 2003-render: layering and substitution (lib/render), driven by t/data/render/<case>/:
 * `input.yaml` (a revision's documents) and either `expected.yaml` (the rendered documents,
 * compared by schema, metadata.name and data, in (schema, layer, name) order) or `error`
 * (line 1: 400 or 409; line 2: a piece of the message). Every case is rendered three times:
 * as given, reversed and rotated; the outcome must not change. The real airskiff site
 * (../shared/data/treasuremap-airskiff.yaml) must render without error. */
#include "base/arena.h"
#include "cases.h"
#include "codec/jsonpath.h"
#include "codec/yaml_codec.h"
#include "docs/document.h"
#include "docs/render.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* The documents of a YAML stream with the store's defaults filled, or NULL. */
static json_t *load(const char *text, size_t len, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct document *docs;
    size_t count;
    json_t *stream = NULL, *messages = NULL;
    if (yaml_codec_parse(&stream, text, len, &yaml_limits_documents, err) ||
        document_prepare(arena, stream, &docs, &count, &messages, err)) {
        json_decref(stream);
        stream = NULL;
    }
    json_decref(messages);
    arena_free(arena);
    return stream;
}

static json_t *permuted(const json_t *docs, int how)
{
    size_t n = json_array_size(docs);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        size_t from = how == 1 ? n - 1 - i : how == 2 ? (i + n / 2) % n : i;
        json_array_append(out, json_array_get(docs, from));
    }
    return out;
}

static int same_rendering(const json_t *got, const json_t *want)
{
    if (json_array_size(got) != json_array_size(want))
        return 0;
    for (size_t i = 0; i < json_array_size(got); i++) {
        const json_t *g = json_array_get(got, i), *w = json_array_get(want, i);
        if (!json_equal(json_object_get(g, "schema"), json_object_get(w, "schema")) ||
            !json_equal(json_object_get(json_object_get(g, "metadata"), "name"),
                        json_object_get(json_object_get(w, "metadata"), "name")) ||
            !json_equal(json_object_get(g, "data") ? json_object_get(g, "data") : json_null(),
                        json_object_get(w, "data") ? json_object_get(w, "data") : json_null()))
            return 0;
    }
    return 1;
}

static void show(const char *label, const json_t *docs)
{
    struct buf b = BUF_INIT;
    if (docs && !yaml_codec_emit(&b, docs, NULL))
        tap_diag("  %s:\n%s", label, buf_cstr(&b));
    buf_release(&b);
}

static void run_case(const char *name)
{
    size_t len = 0;
    char *input = cases_read("render", name, "input.yaml", &len);
    char *expected = cases_read("render", name, "expected.yaml", NULL);
    char *error = cases_read("render", name, "error", NULL);
    struct purser_error err;
    json_t *docs = input ? load(input, len, &err) : NULL, *want = NULL;

    if (!tap_ok(docs && (expected || error), "%s: case files and input load", name)) {
        tap_diag("  %s", docs ? "no expected.yaml or error" : err.message);
        goto cleanup;
    }
    if (expected && yaml_codec_parse(&want, expected, strlen(expected), NULL, &err))
        want = NULL;
    for (int how = 0; how < 3; how++) {
        static const char *order[] = {"as given", "reversed", "rotated"};
        json_t *in = permuted(docs, how), *out = NULL;
        int rc = render_documents(in, NULL, NULL, &out, NULL, &err);
        if (error) {
            int status = atoi(error);
            const char *piece = strchr(error, '\n') ? strchr(error, '\n') + 1 : "";
            char line[256];
            snprintf(line, sizeof(line), "%.*s", (int)strcspn(piece, "\n"), piece);
            if (!tap_ok(((status == 400 && rc == PURSER_EINVAL) ||
                         (status == 409 && rc == PURSER_EEXISTS)) &&
                            strstr(err.message, line),
                        "%s (%s): fails with %d '%s'", name, order[how], status, line))
                tap_diag("  got %d: %s", rc, rc ? err.message : "(rendered)");
        } else if (!tap_ok(rc == 0 && same_rendering(out, want), "%s (%s): renders as expected",
                           name, order[how])) {
            if (rc)
                tap_diag("  error: %s", err.message);
            show("got", out);
        }
        json_decref(out);
        json_decref(in);
    }
cleanup:
    json_decref(docs);
    json_decref(want);
    free(input);
    free(expected);
    free(error);
}

/* The document (schema, name) of docs (any name when name is NULL), or NULL. */
static const json_t *find(const json_t *docs, const char *schema, const char *name)
{
    size_t i;
    const json_t *d;
    json_array_foreach (docs, i, d) {
        if (strcmp(json_string_value(json_object_get(d, "schema")), schema) == 0 &&
            (!name ||
             strcmp(json_string_value(json_object_get(json_object_get(d, "metadata"), "name")),
                    name) == 0))
            return d;
    }
    return NULL;
}

/* The value at a chain of keys and indexes ("etcd", 0, ...) given as a path string. */
static const json_t *dig(const json_t *v, const char *const *steps)
{
    for (; v && *steps; steps++)
        v = (*steps)[0] >= '0' && (*steps)[0] <= '9' ? json_array_get(v, (size_t)atoi(*steps))
                                                     : json_object_get(v, *steps);
    return v;
}

/* The real airskiff site: renders, and a few values are where they must be. */
static void real_site(void)
{
    const char *path = getenv("PURSER_AIRSKIFF") ? getenv("PURSER_AIRSKIFF")
                                                 : "../shared/data/treasuremap-airskiff.yaml";
    char *text = NULL;
    size_t len = 0;
    struct purser_error err;
    json_t *docs, *out = NULL;
    int rc;
    if (!tap_ok(file_read_all(&text, &len, path, 1 << 26, &err) == 0, "airskiff: %s reads", path))
        return;
    docs = load(text, len, &err);
    rc = docs ? render_documents(docs, NULL, NULL, &out, NULL, &err) : -1;
    if (!tap_ok(rc == 0, "airskiff: %zu documents render", json_array_size(docs)))
        tap_diag("  %s", err.message);
    tap_ok(json_array_size(out) > 100, "airskiff: %zu concrete documents out",
           json_array_size(out));
    {
        static const char *const key_at[] = {"etcd", "0", "providers", "0", "secretbox",
                                             "keys", "0", "secret",    NULL};
        static const char *const ca_at[] = {"values", "endpoints", "etcd", "auth",
                                            "client", "tls",       "ca",   NULL};
        const json_t *policy = find(out, "deckhand/LayeringPolicy/v1", NULL);
        const json_t *encryption = find(out, "promenade/EncryptionPolicy/v1", NULL);
        const json_t *calicoctl = find(out, "armada/Chart/v1", "calicoctl-utility");
        const json_t *keystone = find(out, "armada/Chart/v1", "keystone");
        const json_t *key = find(docs, "deckhand/Passphrase/v1", "apiserver-encryption-key-key1");
        const json_t *ca = find(docs, "deckhand/CertificateAuthority/v1", "calico-etcd");
        tap_ok(policy && json_array_size(
                             json_object_get(json_object_get(policy, "data"), "layerOrder")) >= 3,
               "airskiff: the LayeringPolicy is out, with its layers");
        tap_ok(encryption && key &&
                   json_equal(dig(json_object_get(encryption, "data"), key_at),
                              json_object_get(key, "data")),
               "airskiff: the encryption policy's key is substituted from its Passphrase");
        tap_ok(calicoctl && ca &&
                   json_equal(dig(json_object_get(calicoctl, "data"), ca_at),
                              json_object_get(ca, "data")),
               "airskiff: calicoctl-utility has the calico-etcd CA substituted");
        tap_ok(keystone &&
                   json_is_string(json_object_get(json_object_get(keystone, "data"), "release")) &&
                   json_is_object(json_object_get(json_object_get(keystone, "data"), "values")),
               "airskiff: the keystone chart has its release and values");
    }
    json_decref(out);
    json_decref(docs);
    free(text);
}

/* jsonpath_unshare: what a change at a path would touch becomes the changer's own, and
 * nothing else is copied. */
static void unshare_checks(void)
{
    struct jsonpath *path = NULL, *top = NULL;
    json_t *shared = json_loads("{\"a\":{\"b\":{\"c\":1},\"x\":[1]},\"y\":{}}", 0, NULL);
    json_t *mine = json_incref(shared), *was_a = json_object_get(shared, "a");
    json_t *was_b = json_object_get(was_a, "b"), *was_y = json_object_get(shared, "y");
    struct purser_error err;
    jsonpath_compile(&path, ".a.b.c", &err);
    jsonpath_compile(&top, ".a.b", &err);
    tap_is_int(jsonpath_unshare(path, &mine, 0), 0, "unshare .a.b.c in a value held twice");
    tap_ok(mine != shared && json_object_get(mine, "a") != was_a &&
               json_object_get(json_object_get(mine, "a"), "b") != was_b,
           "  the root, .a and .a.b are copies of their own");
    tap_ok(json_object_get(mine, "y") == was_y &&
               json_object_get(json_object_get(mine, "a"), "x") == json_object_get(was_a, "x"),
           "  what is off the path is still shared");
    jsonpath_set(path, &mine, json_integer(2), &err);
    tap_is_int(json_integer_value(json_object_get(was_b, "c")), 1,
               "  a change there leaves the other holder's value as it was");
    {
        json_t *b = json_object_get(json_object_get(mine, "a"), "b");
        json_t *again = mine;
        tap_is_int(jsonpath_unshare(path, &mine, 0), 0, "unshare again");
        tap_ok(mine == again && json_object_get(json_object_get(mine, "a"), "b") == b,
               "  what is its own already is not copied again");
    }
    {
        json_t *inner = json_incref(json_object_get(json_object_get(mine, "a"), "b"));
        jsonpath_unshare(top, &mine, 1);
        tap_ok(json_object_get(json_object_get(mine, "a"), "b") != inner,
               "with whole, the value at the path is made its own too");
        json_decref(inner);
    }
    jsonpath_free(path);
    jsonpath_free(top);
    json_decref(mine);
    json_decref(shared);
}

int main(int argc, char **argv)
{
    char **names;
    size_t n;
    tap_init(argc, argv);
    n = cases_list("render", &names);
    tap_ok(n >= 10, "%zu render cases found", n);
    for (size_t i = 0; i < n; i++)
        run_case(names[i]);
    cases_free(names, n);
    real_site();
    unshare_checks();
    return tap_done();
}
