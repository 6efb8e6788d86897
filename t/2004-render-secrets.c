/* 2004-render-secrets: what rendering marks as coming from an encrypted document (render.h's
 * secrets, codec/jsonmask.h), and redaction by those marks. The two leaks issue 49 found (a
 * secret reaching a document second hand, through another's substitution; a child merged onto
 * an encrypted abstract parent), the mask operations one by one, then a property: sites made
 * at random (chains of substitutions by path, src.pattern and dest.pattern, abstract parents,
 * encrypted or not, merge, replace and delete actions, replacement documents) are rendered,
 * and the redacted rendering of each holds no byte of any secret, while every value that does
 * not come from one is still shown. Every secret is a string holding "S3CRET"; every other
 * value one holding "PLAIN". */
#include "base/arena.h"
#include "codec/jsonmask.h"
#include "docs/document.h"
#include "docs/render.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define SCHEMA "example/Thing/v1"

/* The documents with the store's defaults filled (document_prepare), or NULL. */
static json_t *prepared(json_t *docs)
{
    struct arena *arena = arena_new();
    struct purser_error err = {0};
    struct document *out;
    size_t count;
    json_t *messages = NULL;
    int rc = document_prepare(arena, docs, &out, &count, &messages, &err);
    if (rc)
        tap_diag("document_prepare: %s %s", err.message, messages ? json_dumps(messages, 0) : "");
    json_decref(messages);
    arena_free(arena);
    if (rc) {
        json_decref(docs);
        return NULL;
    }
    return docs;
}

static json_t *policy(void)
{
    return json_pack("{s:s, s:{s:s, s:s}, s:{s:[s, s]}}", "schema", "deckhand/LayeringPolicy/v1",
                     "metadata", "schema", "metadata/Control/v1", "name", "layering", "data",
                     "layerOrder", "global", "site");
}

/* A document of SCHEMA: name, layer, its data (consumed); abstract, encrypted. */
static json_t *thing(const char *name, const char *layer, json_t *data, int abstract, int encrypted)
{
    return json_pack("{s:s, s:{s:s, s:s, s:s, s:{s:s}, s:{s:s, s:b}}, s:o}", "schema", SCHEMA,
                     "metadata", "schema", "metadata/Document/v1", "name", name, "storagePolicy",
                     encrypted ? "encrypted" : "cleartext", "labels", "name", name,
                     "layeringDefinition", "layer", layer, "abstract", abstract, "data", data);
}

static json_t *meta(json_t *doc)
{
    return json_object_get(doc, "metadata");
}

static void substitute(json_t *doc, const char *from, const char *src_path, const char *pattern,
                       const char *dest_path, const char *dest_pattern)
{
    json_t *subs = json_object_get(meta(doc), "substitutions");
    json_t *src = json_pack("{s:s, s:s, s:s}", "schema", SCHEMA, "name", from, "path", src_path);
    json_t *dest = json_pack("{s:s}", "path", dest_path);
    if (!subs)
        json_object_set_new(meta(doc), "substitutions", subs = json_array());
    if (pattern)
        json_object_set_new(src, "pattern", json_string(pattern));
    if (dest_pattern)
        json_object_set_new(dest, "pattern", json_string(dest_pattern));
    json_array_append_new(subs, json_pack("{s:o, s:o}", "src", src, "dest", dest));
}

static void layer_onto(json_t *doc, const char *parent, json_t *actions)
{
    json_t *def = json_object_get(meta(doc), "layeringDefinition");
    json_object_set_new(def, "parentSelector", json_pack("{s:s}", "name", parent));
    json_object_set_new(def, "actions", actions);
}

/* The rendered data of name, redacted by its marks (a new reference), or NULL. */
static json_t *redacted(const json_t *rendered, const json_t *secrets, const char *name)
{
    size_t i;
    const json_t *doc;
    json_array_foreach (rendered, i, doc)
        if (strcmp(json_string_value(json_object_get(meta((json_t *)doc), "name")), name) == 0)
            return jsonmask_apply(json_object_get(doc, "data"), json_array_get(secrets, i),
                                  "[redacted]");
    return NULL;
}

static int holds(const json_t *v, const char *what)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY);
    int found = text && strstr(text, what);
    free(text);
    return found;
}

/* The two leaks of issue 49, as the API and the catalogs met them. */
static void found_leaks(void)
{
    json_t *docs = json_pack("[o]", policy()), *rendered = NULL, *secrets = NULL, *a, *b, *child;
    struct purser_error err = {0};
    json_t *r;

    json_array_append_new(
        docs, thing("pass", "site", json_string("S3CRET-passphrase"), 0, 1)); /* encrypted */
    a = thing("a", "site", json_pack("{s:s, s:s}", "url", "https://user:PH@host", "x", "PLAIN-a"),
              0, 0);
    substitute(a, "pass", ".", NULL, ".url", "PH");
    b = thing("b", "site", json_pack("{s:s, s:s}", "copied", "PLAIN-old", "y", "PLAIN-b"), 0, 0);
    substitute(b, "a", ".url", NULL, ".copied", NULL);
    json_array_append_new(docs, a);
    json_array_append_new(docs, b);
    json_array_append_new(docs,
                          thing("vault", "global",
                                json_pack("{s:s, s:{s:s, s:s}}", "token", "S3CRET-token", "nested",
                                          "keep", "S3CRET-kept", "over", "S3CRET-over"),
                                1, 1));
    child = thing("child", "site",
                  json_pack("{s:s, s:{s:s}}", "mine", "PLAIN-mine", "nested", "over", "PLAIN-over"),
                  0, 0);
    layer_onto(child, "vault", json_pack("[{s:s, s:s}]", "method", "merge", "path", "."));
    json_array_append_new(docs, child);
    docs = prepared(docs);
    tap_ok(docs && !render_documents(docs, NULL, NULL, &rendered, &secrets, &err),
           "the site renders %s", err.message);

    r = redacted(rendered, secrets, "b");
    tap_ok(r && !holds(r, "S3CRET") && holds(r, "PLAIN-b"),
           "a secret substituted second hand (pass -> a.url -> b.copied) is redacted in b");
    json_decref(r);
    r = redacted(rendered, secrets, "a");
    tap_ok(r && !holds(r, "S3CRET") && holds(r, "PLAIN-a"),
           "the string a secret was written into (dest.pattern) is redacted in a");
    json_decref(r);
    r = redacted(rendered, secrets, "child");
    tap_ok(r && !holds(r, "S3CRET") && holds(r, "PLAIN-mine") && holds(r, "PLAIN-over"),
           "a child merged onto an encrypted abstract parent: the parent's values redacted, "
           "the child's own shown");
    json_decref(r);
    r = redacted(rendered, secrets, "pass");
    tap_ok(json_is_string(r) && strcmp(json_string_value(r), "[redacted]") == 0,
           "an encrypted document is redacted whole");
    json_decref(r);
    json_decref(rendered);
    json_decref(secrets);
    json_decref(docs);
}

/* A path compiled once by text (freed at the end: free_paths). */
static struct jsonpath *paths[16];
static size_t path_count;

static struct jsonpath *path_of(const char *text)
{
    struct jsonpath *p = NULL;
    jsonpath_compile(&p, text, NULL);
    if (path_count < sizeof(paths) / sizeof(paths[0]))
        paths[path_count++] = p;
    return p;
}

static void free_paths(void)
{
    while (path_count)
        jsonpath_free(paths[--path_count]);
}

static int mask_is(const json_t *mask, const char *want)
{
    json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
    int same = (!mask && json_is_null(w)) || (mask && json_equal((json_t *)mask, w));
    if (!same) {
        char *got = mask ? json_dumps(mask, JSON_ENCODE_ANY | JSON_SORT_KEYS) : strdup("null");
        tap_diag("mask %s, wanted %s", got, want);
        free(got);
    }
    json_decref(w);
    return same;
}

/* The operations of codec/jsonmask.h, one by one. */
static void mask_operations(void)
{
    json_t *value =
        json_loads("{\"a\": {\"b\": 1, \"c\": 2}, \"l\": [1, 2, 3], \"s\": 4}", 0, NULL);
    json_t *mask = json_true(), *out;
    struct jsonpath *ab = path_of(".a.b"), *l1 = path_of(".l[1]"), *l0 = path_of(".l[0]");
    struct jsonpath *a = path_of(".a"), *root = path_of(".");

    tap_ok(!jsonmask_set(&mask, ab, NULL, value) &&
               mask_is(mask, "{\"a\": {\"c\": true}, \"l\": true, \"s\": true}"),
           "clearing a part of a marked whole marks the rest part by part");
    tap_ok(json_is_true(jsonmask_get(mask, path_of(".l[2]"))) && !jsonmask_get(mask, ab),
           "jsonmask_get: true under a marked part, NULL where nothing is");
    tap_ok(!jsonmask_set(&mask, l1, NULL, value) && !jsonmask_remove(&mask, l0, value) &&
               mask_is(mask, "{\"a\": {\"c\": true}, \"l\": {\"1\": true}, \"s\": true}"),
           "removing a list's item moves the marks of the items after it up");
    out = jsonmask_apply(value, mask, "R");
    tap_ok(mask_is(out, "{\"a\": {\"b\": 1, \"c\": \"R\"}, \"l\": [1, \"R\", 3], \"s\": \"R\"}"),
           "jsonmask_apply replaces exactly the marked values");
    json_decref(out);
    tap_ok(!jsonmask_set(&mask, a, NULL, value) && !jsonmask_set(&mask, l1, NULL, value) &&
               !jsonmask_set(&mask, path_of(".s"), NULL, value) && mask_is(mask, "null") &&
               !jsonmask_any(mask),
           "a mask whose parts are all cleared marks nothing (NULL)");
    tap_ok(!jsonmask_set(&mask, ab, json_true(), value) && mask_is(mask, "{\"a\": {\"b\": true}}"),
           "marking a part of an unmarked value");
    tap_ok(!jsonmask_set(&mask, root, NULL, value) && mask_is(mask, "null"),
           "clearing the whole value");
    json_decref(mask);
    json_decref(value);
    free_paths();
}

/* ---- the property ---- */

static unsigned long long seed_state;

static unsigned pick(unsigned n)
{
    seed_state = seed_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(seed_state >> 33) % n;
}

/* A document's data: its values all holding tag ("S3CRET" or "PLAIN") and its number. */
static json_t *data_of(const char *tag, int i)
{
    char v[6][48];
    for (int k = 0; k < 5; k++)
        snprintf(v[k], sizeof(v[k]), "%s-%d-%d", tag, i, k);
    snprintf(v[5], sizeof(v[5]), "scheme://PH@%s-%d-url", tag, i);
    return json_pack("{s:s, s:{s:s, s:s, s:[s, s]}, s:s}", "k", v[0], "nested", "a", v[1], "c",
                     v[2], "list", v[3], v[4], "url", v[5]);
}

/* The documents the site has; *sources: the concrete ones (substitution sources, by index). */
struct site {
    json_t *docs;
    char names[24][16];
    int abstract[24], encrypted[24], count;
};

static const char *const src_paths[] = {".k", ".nested", ".nested.a", ".nested.list", ".url"};
static const char *const dest_paths[] = {".k", ".nested.a", ".fresh", ".nested", ".nested.list[1]"};
static const char *const action_paths[] = {".", ".nested", ".k", ".nested.c"};
static const char *const methods[] = {"merge", "replace", "delete"};

/* Substitutions into doc from earlier concrete documents (an acyclic graph). */
static void random_substitutions(struct site *s, json_t *doc, int i)
{
    int n = (int)pick(4);
    for (int k = 0; k < n && i > 0; k++) {
        int from = (int)pick((unsigned)i);
        if (s->abstract[from])
            continue;
        switch (pick(4)) {
        case 0: /* a value put in place */
            substitute(doc, s->names[from], src_paths[pick(5)], NULL, dest_paths[pick(5)], NULL);
            break;
        case 1: /* written into a string by dest.pattern */
            substitute(doc, s->names[from], ".nested.a", NULL, ".url", "PH");
            break;
        case 2: /* a piece of a string cut out by src.pattern */
            substitute(doc, s->names[from], ".k", "(S3CRET|PLAIN)-[0-9]+", dest_paths[pick(5)],
                       NULL);
            break;
        default: /* a whole data section (a string for an encrypted passphrase-like one) */
            substitute(doc, s->names[from], ".", NULL, ".whole", NULL);
        }
    }
}

/* Layering onto an earlier abstract document of the global layer, when there is one. */
static void random_layering(struct site *s, json_t *doc, int i)
{
    int parents[24], n = 0;
    json_t *actions = json_array();
    for (int k = 0; k < i; k++)
        if (s->abstract[k])
            parents[n++] = k;
    if (!n || pick(4) == 0) {
        json_decref(actions);
        return;
    }
    for (int k = 0, count = 1 + (int)pick(3); k < count; k++) {
        const char *method = methods[pick(3)], *path = action_paths[pick(4)];
        if (strcmp(method, "delete") == 0 && strcmp(path, ".") == 0)
            path = ".nested.c";
        if (strcmp(method, "delete") == 0) /* at most once: a second finds nothing there */
            k = count;
        json_array_append_new(actions, json_pack("{s:s, s:s}", "method", method, "path", path));
    }
    layer_onto(doc, s->names[parents[pick((unsigned)n)]], actions);
}

static json_t *random_site(struct site *s)
{
    s->count = 3 + (int)pick(12);
    s->docs = json_pack("[o]", policy());
    for (int i = 0; i < s->count; i++) {
        json_t *doc;
        s->abstract[i] = pick(3) == 0;
        s->encrypted[i] = pick(3) == 0;
        snprintf(s->names[i], sizeof(s->names[i]), "d%d", i);
        doc = thing(s->names[i], s->abstract[i] ? "global" : "site",
                    data_of(s->encrypted[i] ? "S3CRET" : "PLAIN", i), s->abstract[i],
                    s->encrypted[i]);
        /* (an encrypted document takes nothing from others: all it holds is secret) */
        if (!s->abstract[i] && !s->encrypted[i]) {
            random_layering(s, doc, i);
            random_substitutions(s, doc, i);
        }
        json_array_append_new(s->docs, doc);
    }
    return prepared(s->docs);
}

/* 1 when every string under clear that redacted shows unredacted holds no secret, and every
 * part redacted held one (nothing is hidden that did not come from a secret). */
static int exact(const json_t *clear, const json_t *shown, int *leaks, int *over)
{
    const char *key;
    size_t i;
    json_t *v;
    if (json_is_string(shown) && strcmp(json_string_value(shown), "[redacted]") == 0) {
        *over += !holds(clear, "S3CRET");
        return 0;
    }
    if (json_is_string(shown))
        *leaks += strstr(json_string_value(shown), "S3CRET") != NULL;
    json_object_foreach ((json_t *)clear, key, v)
        exact(v, json_object_get(shown, key), leaks, over);
    json_array_foreach (clear, i, v)
        exact(v, json_array_get(shown, i), leaks, over);
    return 0;
}

static void property(int sites)
{
    int rendered_ok = 0, leaks = 0, over = 0, marked = 0, failed_render = 0;
    for (int n = 0; n < sites; n++) {
        struct site s = {0};
        json_t *docs, *rendered = NULL, *secrets = NULL;
        const json_t *doc;
        struct purser_error err = {0};
        size_t i;
        seed_state = 0x9e3779b97f4a7c15ULL * (unsigned long long)(n + 1);
        if (!(docs = random_site(&s)))
            continue;
        if (render_documents(docs, NULL, NULL, &rendered, &secrets, &err)) {
            failed_render++;
            json_decref(docs);
            continue;
        }
        rendered_ok++;
        json_array_foreach (rendered, i, doc) {
            const json_t *mask = json_array_get(secrets, i);
            json_t *shown = jsonmask_apply(json_object_get(doc, "data"), mask, "[redacted]");
            int before = leaks, over_before = over, ignored = 0;
            int sealed =
                strcmp(json_string_value(json_object_get(meta((json_t *)doc), "storagePolicy")),
                       "encrypted") == 0;
            marked += !sealed && jsonmask_any(mask);
            /* (an encrypted document is hidden whole, what it took from others too) */
            exact(json_object_get(doc, "data"), shown, &leaks, sealed ? &ignored : &over);
            if (leaks != before || (getenv("SHOW_OVER") && over != over_before)) {
                char *text = json_dumps(docs, JSON_INDENT(1));
                tap_diag("site %d leaks in %s:\n%s", n,
                         json_string_value(json_object_get(meta((json_t *)doc), "name")), text);
                free(text);
            }
            json_decref(shown);
        }
        json_decref(rendered);
        json_decref(secrets);
        json_decref(docs);
    }
    tap_diag("%d sites rendered (%d did not: Deckhand's errors), %d cleartext documents marked",
             rendered_ok, failed_render, marked);
    tap_ok(rendered_ok >= sites / 2 && marked > sites / 2,
           "most generated sites render, and secrets reach other documents");
    tap_is_int(leaks, 0, "no secret byte in any redacted rendering of %d sites", sites);
    tap_is_int(over, 0, "nothing redacted that did not come from a secret");
}

int main(int argc, char **argv)
{
    tap_init(argc, argv);
    found_leaks();
    mask_operations();
    property(getenv("TAP_VALGRIND") ? 60 : 1500);
    return tap_done();
}
