/* paging.c: the lists' shared filter text (paging.h). */
#include "base/paging.h"

#include <string.h>

const char *paging_like(struct arena *arena, const char *value)
{
    char *out = arena_alloc(arena, 2 * strlen(value) + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *c = value; *c; c++) {
        if (*c == '%' || *c == '_' || *c == '\\')
            *o++ = '\\';
        *o++ = *c == '*' ? '%' : *c;
    }
    *o = '\0';
    return out;
}

const char *paging_one_of(struct arena *arena, const char *const *names)
{
    const char *out = "";
    for (size_t i = 0; names[i] && out; i++)
        out = arena_sprintf(arena, "%s%s%s", out, !i ? "" : names[i + 1] ? ", " : " or ", names[i]);
    return out ? out : "";
}
