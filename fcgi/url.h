/* url.h: percent-decoding of request paths and query strings, in one place.
 *
 * A path segment keeps '+' as '+' (RFC 3986); in a query string '+' is a space, as HTML forms
 * and Python's urlencode send it ("a+b" and "a%20b" are both "a b"; "a%2Bb" is "a+b"). Every
 * result is arena memory, owned by the arena. */
#ifndef PURSER_URL_H
#define PURSER_URL_H

#include "base/arena.h"
#include "base/err.h"

#include <stddef.h>

/* Percent-decodes n bytes of s (a path segment); NULL when an escape is malformed or would
 * give a NUL byte. */
char *url_decode(struct arena *arena, const char *s, size_t n);

/* Every value of parameter name in query ("a=1&b=2&a=3"), decoded with '+' as a space, in
 * order, as an arena array in *out; returns how many (a parameter without '=' has the value "").
 * Pairs whose name or value does not decode are left out. */
size_t url_query_values(struct arena *arena, const char *query, const char *name,
                        const char ***out);

/* 0 when every name and value of query decodes to UTF-8 text without NUL; PURSER_EINVAL
 * naming the first parameter that does not ("query parameter 'limit' is not UTF-8 text", or
 * "has a malformed %-escape"). */
int url_query_check(struct arena *arena, const char *query, struct purser_error *err);

/* The first parameter name of query (decoded) that is not a word of accepted (space-separated
 * names; NULL: none), or NULL when every name is one of them. Arena memory. */
const char *url_query_unknown(struct arena *arena, const char *query, const char *accepted);

#endif
