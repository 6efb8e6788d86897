/* links.h: the links in lib/'s answers (base/links.h), made from the route table.
 *
 * Each link target names the route that serves it; a link is the request's base URL and that
 * route's pattern with its {parameters} filled in order (request_links, request.h). */
#ifndef PURSER_FCGI_LINKS_H
#define PURSER_FCGI_LINKS_H

#include "base/arena.h"
#include "base/links.h"

#include <stddef.h>

/* pattern ("/organizations/{org}/nodes/{node}") with each {name} replaced by the next of
 * count params, verbatim, in arena memory; NULL when the counts differ or out of memory. */
char *route_fill(struct arena *arena, const char *pattern, const char *const *params, size_t count);

/* The route table's pattern that serves target (a GET route where there is one), or NULL when
 * the table has none: t/0071 holds every target to a row of the table. */
const char *link_pattern(enum link_target target);

#endif
