/* 0008-json-text: json_text() writes the same bytes as jansson's json_dumps() for the same
 * flags (random trees with every kind of value and awkward strings and keys, sorted and not),
 * appends to what a buffer holds, and fails where jansson fails. */
#include "base/json_text.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed = 0x9E3779B97F4A7C15ULL;

static unsigned next(unsigned n)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (unsigned)(seed % n);
}

/* Pieces of text: escapes, controls, a slash, DEL, two- three- and four-byte UTF-8. */
static const char *const pieces[] = {"a",  "b",  "key", "\"", "\\",       "/",    "\n",
                                     "\t", "\r", "\b",  "\f", "\x01",     "\x1f", "\x7f",
                                     " ",  "é",  "€",   "😀",  "\xc2\x80", ":",    ","};

static void random_text(char *out, size_t cap, size_t *len)
{
    size_t n = next(8), at = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = pieces[next(sizeof(pieces) / sizeof(*pieces))];
        size_t l = strlen(p);
        if (at + l + 1 >= cap)
            break;
        memcpy(out + at, p, l);
        at += l;
    }
    if (next(20) == 0 && at + 2 < cap) /* now and then a NUL inside */
        out[at++] = '\0';
    out[at] = '\0';
    *len = at;
}

static json_t *random_value(int depth)
{
    static const double reals[] = {0.0,    -0.0,    0.1,  1.0,  -2.5,       1e300,
                                   1e-300, 3.14159, 1e16, 1e17, 123456.789, 5e-5};
    char text[64];
    size_t len;
    switch (depth > 4 ? next(6) : next(9)) {
    case 0: return json_null();
    case 1: return json_boolean(next(2));
    case 2: {
        static const json_int_t edge[] = {0, -1, 9, 10, -10, INT64_MAX, INT64_MIN, 1234567890123};
        return json_integer(next(2) ? edge[next(8)] : (json_int_t)next(100000) - 50000);
    }
    case 3: return json_real(reals[next(sizeof(reals) / sizeof(*reals))]);
    case 4:
    case 5: random_text(text, sizeof(text), &len); return json_stringn(text, len);
    case 6:
    case 7: {
        json_t *o = json_object();
        for (unsigned i = next(6); i > 0; i--) {
            random_text(text, sizeof(text), &len);
            json_object_setn_new(o, text, len, random_value(depth + 1));
        }
        return o;
    }
    default: {
        json_t *a = json_array();
        for (unsigned i = next(6); i > 0; i--)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    }
}

static int same_as_jansson(const json_t *v, size_t flags)
{
    char *ours = json_text(v, flags), *theirs = json_dumps(v, flags);
    int same = (!ours && !theirs) || (ours && theirs && strcmp(ours, theirs) == 0);
    if (!same)
        tap_diag("flags %zx: ours %s, jansson's %s", flags, ours ? ours : "(null)",
                 theirs ? theirs : "(null)");
    free(ours);
    free(theirs);
    return same;
}

int main(int argc, char **argv)
{
    static const size_t flag_sets[] = {
        JSON_COMPACT,
        JSON_COMPACT | JSON_SORT_KEYS,
        JSON_COMPACT | JSON_PRESERVE_ORDER,
        JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY,
        JSON_COMPACT | JSON_REAL_PRECISION(9),
        0,                               /* not compact: jansson's */
        JSON_INDENT(2) | JSON_SORT_KEYS, /* indented: jansson's */
        JSON_COMPACT | JSON_ENSURE_ASCII,
    };
    size_t sets = sizeof(flag_sets) / sizeof(*flag_sets);
    int differ[8] = {0}, trees = 3000;
    tap_init(argc, argv);

    for (int i = 0; i < trees; i++) {
        json_t *v = random_value(0);
        for (size_t f = 0; f < sets; f++)
            differ[f] += !same_as_jansson(v, flag_sets[f] | (i % 2 ? JSON_ENCODE_ANY : 0));
        json_decref(v);
    }
    for (size_t f = 0; f < sets; f++)
        tap_is_int(differ[f], 0, "%d random values with flags %#zx: the same bytes as json_dumps",
                   trees, flag_sets[f]);

    {
        /* keys that are prefixes of each other, and keys with NUL inside, sorted */
        json_t *o = json_object();
        json_object_setn_new(o, "ab", 2, json_integer(1));
        json_object_setn_new(o, "a", 1, json_integer(2));
        json_object_setn_new(o, "a\0b", 3, json_integer(3));
        json_object_setn_new(o, "a\0", 2, json_integer(4));
        json_object_set_new(o, "B", json_integer(5));
        for (int k = 0; k < 40; k++) { /* past the stack-held key list */
            char key[8];
            snprintf(key, sizeof(key), "k%02d", 39 - k);
            json_object_set_new(o, key, json_integer(k));
        }
        tap_ok(same_as_jansson(o, JSON_COMPACT | JSON_SORT_KEYS),
               "sorted keys: prefixes, NUL inside, 45 of them");
        json_decref(o);
    }
    {
        json_t *bad = json_stringn_nocheck("\xff\xfe", 2), *list = json_pack("[o]", bad);
        char *text = json_text(list, JSON_COMPACT);
        tap_ok(!text && !json_dumps(list, JSON_COMPACT), "a string that is not UTF-8: no text");
        free(text);
        json_decref(list);
    }
    {
        json_t *n = json_integer(7);
        char *bare = json_text(n, JSON_COMPACT),
             *any = json_text(n, JSON_COMPACT | JSON_ENCODE_ANY);
        tap_ok(!bare, "a scalar without JSON_ENCODE_ANY: no text");
        tap_is_str(any ? any : "", "7", "a scalar with JSON_ENCODE_ANY");
        free(bare);
        free(any);
        json_decref(n);
    }
    {
        json_t *top = json_array(), *at = top;
        char *text;
        for (int d = 0; d < 3000; d++) {
            json_t *inner = json_array();
            json_array_append_new(at, inner);
            at = inner;
        }
        text = json_text(top, JSON_COMPACT);
        tap_ok(!text, "nesting past 2048: no text (a cycle cannot recurse without end)");
        free(text);
        json_decref(top);
    }
    {
        struct buf out = BUF_INIT;
        json_t *v = json_pack("{s:[i, s]}", "x", 1, "y\"");
        int rc = buf_adds(&out, "before ") || json_text_append(&out, v, JSON_COMPACT);
        tap_ok(!rc && strcmp(buf_cstr(&out), "before {\"x\":[1,\"y\\\"\"]}") == 0,
               "json_text_append adds to what the buffer holds: %s", buf_cstr(&out));
        buf_release(&out);
        json_decref(v);
    }
    return tap_done();
}
