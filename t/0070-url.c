/* 0070-url: percent-decoding of paths and queries (fcgi/url.c): one query parser, '+' a space
 * in queries and not in paths, %2B a plus, %20 a space; malformed escapes and NUL refused. */
#include "../fcgi/url.h"
#include "tap.h"

#include <string.h>

static const char *first(struct arena *arena, const char *query, const char *name)
{
    const char **values;
    return url_query_values(arena, query, name, &values) ? values[0] : NULL;
}

int main(int argc, char **argv)
{
    struct arena *arena = arena_new();
    const char **values;
    size_t n;
    tap_init(argc, argv);

    tap_is_str(first(arena, "bucket=a+b", "bucket"), "a b", "query: + is a space");
    tap_is_str(first(arena, "bucket=a%2Bb", "bucket"), "a+b", "query: %%2B is a plus");
    tap_is_str(first(arena, "bucket=a%20b", "bucket"), "a b", "query: %%20 is a space");
    tap_is_str(first(arena, "a+b=1", "a b"), "1", "query: + in a name is a space too");
    tap_is_str(first(arena, "x=1&flag&y=2", "flag"), "", "a parameter without = is empty");
    tap_ok(first(arena, "x=1", "y") == NULL, "a missing parameter is NULL");
    tap_ok(first(arena, "x=%zz", "x") == NULL, "a malformed escape is left out");
    tap_ok(first(arena, "x=%00", "x") == NULL, "an escaped NUL is left out");
    tap_ok(first(arena, "x=%4", "x") == NULL, "a cut escape is left out");

    n = url_query_values(arena, "tag=a&x=0&tag=b+c&tag=d%2Be", "tag", &values);
    tap_is_int(n, 3, "every value of a repeated parameter");
    tap_ok(n == 3 && strcmp(values[0], "a") == 0 && strcmp(values[1], "b c") == 0 &&
               strcmp(values[2], "d+e") == 0,
           "in order, decoded alike");

    tap_ok(url_query_unknown(arena, "page_size=1&sort=name&", "page_size sort") == NULL,
           "unknown: none when every name is accepted");
    tap_is_str(url_query_unknown(arena, "page_size=1&limit=2", "page_size page"), "limit",
               "unknown: the first name not accepted (a word, not a prefix)");
    tap_is_str(url_query_unknown(arena, "a%20b", "a"), "a b", "unknown: decoded");
    tap_is_str(url_query_unknown(arena, "flag", NULL), "flag", "unknown: no list takes nothing");

    tap_is_str(url_decode(arena, "a+b", 3), "a+b", "path: + stays a plus");
    tap_is_str(url_decode(arena, "a%20b", 5), "a b", "path: %%20 is a space");
    tap_is_str(url_decode(arena, "p%2Fq", 5), "p/q", "path: %%2F is a slash inside one segment");
    tap_ok(url_decode(arena, "a%2", 3) == NULL, "path: a cut escape is refused");
    tap_ok(url_decode(arena, "%00", 3) == NULL, "path: NUL is refused");

    arena_free(arena);
    return tap_done();
}
