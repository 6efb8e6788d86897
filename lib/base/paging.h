/* paging.h: what the lists' filter and sort parameters share across subsystems (lib/policy's
 * lists, lib/docs' document lists): a '*' glob as SQL LIKE, and the names a parameter takes,
 * said in an error. */
#ifndef PURSER_BASE_PAGING_H
#define PURSER_BASE_PAGING_H
#include "base/arena.h"

/* value as a LIKE pattern: '*' any text, its % _ and \ taken literally; NULL when out of
 * memory. */
const char *paging_like(struct arena *arena, const char *value);
/* "a, b or c" of a NULL-terminated list (for an error message); "" when out of memory. */
const char *paging_one_of(struct arena *arena, const char *const *names);
#endif
