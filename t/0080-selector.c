/* 0080-selector: Kubernetes label selectors (parsing, errors, evaluation) and RFC 7396 merge
 * patch (the RFC's own appendix A examples). */
#include "base/arena.h"
#include "codec/merge_patch.h"
#include "resource/selector.h"
#include "tap.h"

#include <string.h>

static int matches(const char *selector, const char *labels_json)
{
    struct arena *a = arena_new();
    struct selector s;
    json_t *labels = json_loads(labels_json, 0, NULL);
    int rc = selector_parse(a, selector, &s, NULL) == 0 ? selector_matches(&s, labels) : -1;
    json_decref(labels);
    arena_free(a);
    return rc;
}

static void refused(const char *selector, const char *message)
{
    struct arena *a = arena_new();
    struct selector s;
    struct purser_error err = {0};
    int rc = selector_parse(a, selector, &s, &err);
    tap_ok(rc == PURSER_EINVAL && strstr(err.message, message), "'%s' is refused: %s", selector,
           err.message);
    arena_free(a);
}

static void patch_case(const char *target, const char *patch, const char *want)
{
    json_t *t = json_loads(target, JSON_DECODE_ANY, NULL),
           *p = json_loads(patch, JSON_DECODE_ANY, NULL);
    json_t *w = json_loads(want, JSON_DECODE_ANY, NULL), *before = json_deep_copy(t);
    json_t *got = merge_patch(t, p);
    char *text = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
    tap_ok(json_equal(got, w), "merge %s with %s gives %s (got %s)", target, patch, want, text);
    tap_ok(json_equal(t, before), "  and the target is unchanged");
    free(text);
    json_decref(before);
    json_decref(t);
    json_decref(p);
    json_decref(w);
    json_decref(got);
}

int main(int argc, char **argv)
{
    const char *l = "{\"env\": \"prod\", \"tier\": \"web\", \"zone\": \"a\"}";
    tap_init(argc, argv);

    tap_is_int(matches("", l), 1, "the empty selector selects everything");
    tap_is_int(matches("env=prod", l), 1, "env=prod");
    tap_is_int(matches("env==prod", l), 1, "env==prod");
    tap_is_int(matches("env=dev", l), 0, "env=dev does not");
    tap_is_int(matches("env!=dev", l), 1, "env!=dev");
    tap_is_int(matches("owner!=x", l), 1, "!= holds when the key is absent");
    tap_is_int(matches("zone in (a, b)", l), 1, "zone in (a, b)");
    tap_is_int(matches("zone in (b,c)", l), 0, "zone in (b,c) does not");
    tap_is_int(matches("zone notin (b,c)", l), 1, "zone notin (b,c)");
    tap_is_int(matches("owner notin (b)", l), 1, "notin holds when the key is absent");
    tap_is_int(matches("tier", l), 1, "an existing key");
    tap_is_int(matches("!legacy", l), 1, "!legacy");
    tap_is_int(matches("!env", l), 0, "!env does not");
    tap_is_int(matches("env=prod,tier!=db,zone in (a,b),!legacy", l), 1,
               "the issue's example, all together");
    tap_is_int(matches(" env = prod , tier ", l), 1, "spaces around tokens");
    tap_is_int(matches("example.com/team=a", "{\"example.com/team\": \"a\"}"), 1, "a prefixed key");
    tap_is_int(matches("inside=x", "{\"inside\": \"x\"}"), 1, "a key beginning with 'in'");

    refused("env in (a", "expected ',' or ')'");
    refused("env in a", "expected '('");
    refused("=x", "expected a label key");
    refused("Bad Key=x", "expected '='");
    refused("-env=x", "is not a label key");
    refused("env=a b", "expected ',' between requirements");
    refused("env=-x", "is not a label value");
    refused("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u", "more than 20 requirements");
    refused("env > 3", "expected '='");

    {
        struct purser_error err = {0};
        tap_ok(selector_label_check("metadata.labels", "a/b/c", "v", &err) == PURSER_EINVAL,
               "a key with two slashes is refused");
        tap_ok(selector_label_check("metadata.labels", "Upper.Example/x", "v", &err) ==
                   PURSER_EINVAL,
               "an upper-case prefix is refused");
        tap_ok(selector_label_check("metadata.labels", "k", "", &err) == 0,
               "an empty value is allowed");
        tap_ok(selector_label_check("metadata.labels", "k", "v-1.2_3", &err) == 0,
               "a value with '-', '.', '_' inside");
    }

    /* RFC 7396 appendix A */
    patch_case("{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    patch_case("{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    patch_case("{\"a\":\"b\"}", "{\"a\":null}", "{}");
    patch_case("{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    patch_case("{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    patch_case("{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    patch_case("{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
               "{\"a\":{\"b\":\"d\"}}");
    patch_case("{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    patch_case("[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]");
    patch_case("{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]");
    patch_case("{\"a\":\"foo\"}", "null", "null");
    patch_case("{\"a\":\"foo\"}", "\"bar\"", "\"bar\"");
    patch_case("{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    patch_case("[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}");
    patch_case("{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
    return tap_done();
}
