/* json_intern: the decoder that reads stored documents straight into shared values
 * (json_intern_loadb) against jansson's own: the same value, or the same refusal, for any
 * bytes; the input is decoded twice into one table, and the second time must give an equal
 * value (the same one unless an object in it repeats a key: such objects are not shared). */
#include "base/json_intern.h"
#include "base/json_text.h"
#include "fuzz.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct json_intern *t = json_intern_new();
    json_error_t jerr;
    json_t *want = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
    json_t *got = t ? json_intern_loadb(t, (const char *)data, size) : NULL;
    json_t *again = t ? json_intern_loadb(t, (const char *)data, size) : NULL;
    char *a = want ? json_text(want, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    char *b = got ? json_text(got, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (t &&
        (!want != !got || (want && (!a || !b || strcmp(a, b) != 0 || !json_equal(want, got))) ||
         (got && !json_equal(again, got)) || (!got && again))) {
        fprintf(stderr, "json_intern_loadb: jansson %s, here %s\n", a ? a : "refuses",
                b ? b : "refuses");
        abort();
    }
    free(a);
    free(b);
    json_decref(want);
    json_decref(got);
    json_decref(again);
    json_intern_free(t);
    return 0;
}
