/* 0012-json-intern: equal values become one shared value, unequal ones never do (key order,
 * integer against real, -0.0 against 0.0, strings with NULs), the shared value is the same
 * JSON as the value given, the table grows past its first size, and references stay counted:
 * dropping the table leaves the values it handed out alive, and everything is freed once. */
#include "base/json_intern.h"
#include "base/json_text.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

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
        tap_is_str(text ? text : "", "{\"layer\":\"site\",\"actions\":[{\"method\":\"merge\",\"path\":\".\"}],\"n\":1}",
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
        tap_is_int((long)kept[4999]->refcount, 1, "dropping the table leaves a handed-out value "
                                                   "with its caller's reference only");
        tap_is_str(json_string_value(json_object_get(kept[4999], "name")), "name-4999",
                   "and whole");
        for (int i = 0; i < 5000; i++)
            json_decref(kept[i]);
    }
    json_intern_free(NULL); /* (does nothing) */
    return tap_done();
}
