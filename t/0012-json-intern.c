/* 0012-json-intern: equal values become one shared value, unequal ones never do (key order,
 * integer against real, -0.0 against 0.0, strings with NULs), the shared value is the same
 * JSON as the value given, the table grows past its first size, and references stay counted:
 * dropping the table leaves the values it handed out alive, and everything is freed once.
 * json_intern_loadb decodes as jansson does, byte for byte and type for type, and refuses
 * what jansson refuses; equal parts of separately decoded texts are one value. */
#include "base/json_intern.h"
#include "base/json_text.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* Decodes text both ways: 1 when json_intern_loadb gives what json_loadb gives (both NULL, or
 * the same JSON text with the same types, which json_text keeps apart: 1 and 1.0). */
static int same_as_jansson(struct json_intern *t, const char *text, size_t len)
{
    json_error_t jerr;
    json_t *want = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
    json_t *got = json_intern_loadb(t, text, len);
    char *a = want ? json_text(want, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    char *b = got ? json_text(got, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    int ok = (!want && !got) || (a && b && strcmp(a, b) == 0 && json_equal(want, got));
    if (!ok)
        tap_diag("%.*s: jansson %s, json_intern_loadb %s", (int)len, text, a ? a : "refuses",
                 b ? b : "refuses");
    free(a);
    free(b);
    json_decref(want);
    json_decref(got);
    return ok;
}

static json_t *parse(const char *text)
{
    return json_loads(text, JSON_DECODE_ANY, NULL);
}

int main(int argc, char **argv)
{
    tap_init(argc, argv);
    struct json_intern *t = json_intern_new();
    tap_ok(t != NULL, "a table");
    {
        json_t *a = json_intern(t, parse("{\"layer\":\"site\",\"actions\":[{\"method\":\"merge\","
                                         "\"path\":\".\"}],\"n\":1}"));
        json_t *b = json_intern(t, parse("{\"layer\":\"site\",\"actions\":[{\"method\":\"merge\","
                                         "\"path\":\".\"}],\"n\":1}"));
        char *text = json_text(b, JSON_COMPACT);
        tap_ok(a && a == b, "two equal objects: one value");
        tap_is_str(
            text ? text : "",
            "{\"layer\":\"site\",\"actions\":[{\"method\":\"merge\",\"path\":\".\"}],\"n\":1}",
            "the shared value is the JSON given, in its order");
        tap_is_int((long)a->refcount, 3, "held by both callers and the table");
        free(text);
        json_decref(a);
        json_decref(b);
    }
    {
        json_t *x = json_intern(t, parse("{\"sel\":{\"region\":\"r1\"},\"name\":\"one\"}"));
        json_t *y = json_intern(t, parse("{\"sel\":{\"region\":\"r1\"},\"name\":\"two\"}"));
        tap_ok(x != y, "objects that differ in one value stay two");
        tap_ok(json_object_get(x, "sel") == json_object_get(y, "sel"),
               "while their equal parts are shared");
        json_decref(x);
        json_decref(y);
    }
    {
        json_t *ab = json_intern(t, parse("{\"a\":1,\"b\":2}"));
        json_t *ba = json_intern(t, parse("{\"b\":2,\"a\":1}"));
        json_t *i = json_intern(t, parse("1"));
        json_t *r = json_intern(t, parse("1.0"));
        json_t *z = json_intern(t, parse("0.0"));
        json_t *nz = json_intern(t, parse("-0.0"));
        json_t *s1 = json_intern(t, json_stringn("a\0b", 3));
        json_t *s2 = json_intern(t, json_stringn("a\0c", 3));
        json_t *l1 = json_intern(t, parse("[1,2]"));
        json_t *l2 = json_intern(t, parse("[1,2,3]"));
        tap_ok(ab != ba, "the same keys in another order are another value (the order is kept)");
        tap_ok(i != r && json_is_integer(i) && json_is_real(r), "1 and 1.0 stay apart");
        tap_ok(z != nz, "0.0 and -0.0 stay apart");
        tap_ok(s1 != s2, "strings that differ after a NUL stay apart");
        tap_ok(l1 != l2, "an array and a longer one stay apart");
        tap_ok(json_array_get(l1, 0) == json_array_get(l2, 0), "their equal items are shared");
        json_decref(ab);
        json_decref(ba);
        json_decref(i);
        json_decref(r);
        json_decref(z);
        json_decref(nz);
        json_decref(s1);
        json_decref(s2);
        json_decref(l1);
        json_decref(l2);
    }
    {
        json_t *t1 = json_true(), *n = json_null();
        tap_ok(json_intern(t, t1) == json_true() && json_intern(t, n) == json_null(),
               "true and null are jansson's own");
        tap_ok(json_intern(t, NULL) == NULL, "NULL in, NULL out");
    }
    {
        /* past the first table size: many distinct values, each found again */
        size_t before = json_intern_count(t);
        json_t *kept[5000];
        int found = 0;
        char key[32];
        for (int i = 0; i < 5000; i++) {
            snprintf(key, sizeof(key), "name-%d", i);
            kept[i] = json_intern(t, json_pack("{s:s, s:i}", "name", key, "n", i % 7));
        }
        for (int i = 0; i < 5000; i++) {
            json_t *again;
            snprintf(key, sizeof(key), "name-%d", i);
            again = json_intern(t, json_pack("{s:s, s:i}", "name", key, "n", i % 7));
            found += again == kept[i];
            json_decref(again);
        }
        tap_is_int(found, 5000, "5,000 objects are each found again after the table grew");
        tap_ok(json_intern_count(t) >= before + 10000, "it holds every distinct value (%zu)",
               json_intern_count(t));
        json_intern_free(t);
        t = NULL;
        tap_is_int((long)kept[4999]->refcount, 1,
                   "dropping the table leaves a handed-out value "
                   "with its caller's reference only");
        tap_is_str(json_string_value(json_object_get(kept[4999], "name")), "name-4999",
                   "and whole");
        for (int i = 0; i < 5000; i++)
            json_decref(kept[i]);
    }
    json_intern_free(NULL); /* (does nothing) */
    {
        static const char *texts[] = {
            "{}",
            "[]",
            " { \"a\" : [ 1 , 2.5 , -0 , -0.0 , 1e3 , 1E-3 , 0.1 , true , false , null ] } ",
            "\"plain\"",
            "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t\"",
            "\"\\u00e9\\u20AC \\ud83d\\ude00\"",
            "\"caf\xc3\xa9\"",
            "9223372036854775807",
            "-9223372036854775808",
            "1.7976931348623157e308",
            "4.9e-324",
            "1e-400",
            "{\"k\":1,\"k\":2,\"j\":3}",
            "{\"\\u00e9\":{\"x\":[[],{}]}}",
            "[[[[[[[[[[1]]]]]]]]]]",
            /* refused by both */
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":}",
            "{\"a\" 1}",
            "{a:1}",
            "01",
            "1.",
            "1e",
            "-",
            "+1",
            ".5",
            "9223372036854775808",
            "-9223372036854775809",
            "1e400",
            "-1e400",
            "nul",
            "nulls",
            "truex",
            "[1] 2",
            "\"\\u0000\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\x\"",
            "\"\\u12G4\"",
            "\"tab\there\"",
            "\"\xff\"",
            "\"\xc3\"",
            "{\"\xff\":1}",
            "\"open",
            "[\"a\",",
            "\xef\xbb\xbf{}",
        };
        struct json_intern *u = json_intern_new();
        int agree = 0, n = (int)(sizeof(texts) / sizeof(texts[0])), own = 0;
        for (int i = 0; i < n; i++) {
            json_error_t jerr;
            json_t *j = json_loadb(texts[i], strlen(texts[i]), JSON_DECODE_ANY, &jerr);
            size_t before = json_intern_handed_over(u);
            agree += same_as_jansson(u, texts[i], strlen(texts[i]));
            /* what jansson takes is read here, what it refuses is left to it */
            own += (json_intern_handed_over(u) == before) == (j != NULL);
            json_decref(j);
        }
        tap_is_int(agree, n, "json_intern_loadb decodes and refuses what jansson does (%d texts)",
                   n);
        tap_is_int(own, n,
                   "  each text jansson takes decoded by json_intern_loadb itself, each it "
                   "refuses handed over");
        /* NUL inside the text, and past the given length */
        agree = same_as_jansson(u, "\"a\0b\"", 5) + same_as_jansson(u, "[1]\0", 4) +
                same_as_jansson(u, "[1] garbage", 3);
        tap_is_int(agree, 3,
                   "a NUL byte is refused as jansson refuses it, and len bounds the text");
        {
            char deep[2 * 2100 + 1];
            memset(deep, '[', 2100);
            memset(deep + 2100, ']', 2100);
            tap_ok(same_as_jansson(u, deep, 2048 * 2 + 0) && same_as_jansson(u, deep, 4200),
                   "nesting: 2,048 levels decode, 2,100 are refused, as by jansson");
        }
        {
            const char *one = "{\"metadata\":{\"name\":\"a\",\"layer\":{\"abstract\":false,\"l\":"
                              "\"site\"}},\"n\":[1,2]}";
            const char *two = "{\"metadata\":{\"name\":\"b\",\"layer\":{\"abstract\":false,\"l\":"
                              "\"site\"}},\"n\":[1,2]}";
            json_t *x = json_intern_loadb(u, one, strlen(one)),
                   *y = json_intern_loadb(u, two, strlen(two));
            json_t *z = json_intern_loadb(u, one, strlen(one));
            tap_ok(x && y && x != y, "two texts that differ: two values");
            tap_ok(json_object_get(json_object_get(x, "metadata"), "layer") ==
                           json_object_get(json_object_get(y, "metadata"), "layer") &&
                       json_object_get(x, "n") == json_object_get(y, "n"),
                   "their equal parts: one value each");
            tap_ok(z == x, "the same text again: the same value");
            {
                json_t *built = json_intern(u, parse(one));
                tap_ok(built == x, "and a value passed to json_intern: the same one (its hashes "
                                   "agree with the reader's)");
                json_decref(built);
            }
            json_decref(x);
            json_decref(y);
            json_decref(z);
        }
        {
            json_t *a = json_intern_stringn(u, "site", 4), *b = json_intern_loadb(u, "\"site\"", 6);
            tap_ok(a && a == b, "json_intern_stringn and a decoded string share one value");
            tap_ok(!json_intern_stringn(u, "\xff", 1),
                   "json_intern_stringn refuses bytes that are not UTF-8");
            json_decref(a);
            json_decref(b);
        }
        json_intern_free(u);
    }
    return tap_done();
}
