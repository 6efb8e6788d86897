/* render_doc.c: what the passes of a render share about its documents: the tables that find
 * them by key, the document each layers onto, and their data before and while substitutions
 * write into it. Used by render.c (reading), render_order.c, render_layer.c and
 * render_subst.c; it calls none of them, so that the passes never call back into render.c. */
#include "docs/render_private.h"

#include "base/hash.h"

#include <stdint.h>
#include <string.h>

/* The slot for key (n bytes, may hold NULs), created when create is set. */
struct slot *render_slot_for(struct arena *arena, struct slot **table, size_t buckets,
                             const char *key, size_t n, int create)
{
    uint64_t hash = hash_fnv1a(key, n);
    struct slot **head = &table[hash & (buckets - 1)], *s;
    for (s = *head; s; s = s->next)
        if (s->hash == hash && s->key_len == n && memcmp(s->key, key, n) == 0)
            return s;
    if (!create || !(s = arena_calloc(arena, 1, sizeof(*s))) || !(s->key = arena_alloc(arena, n)))
        return NULL;
    memcpy(s->key, key, n);
    s->key_len = n;
    s->hash = hash;
    s->next = *head;
    *head = s;
    return s;
}

int render_slot_add(struct arena *arena, struct slot *s, struct rdoc *d)
{
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4;
        struct rdoc **items = arena_alloc(arena, cap * sizeof(*items));
        if (!items)
            return -1;
        if (s->count)
            memcpy(items, s->items, s->count * sizeof(*items));
        s->items = items;
        s->cap = cap;
    }
    s->items[s->count++] = d;
    return 0;
}

/* The document d layers onto: its parent, or the parent's replacement (unless d is it). */
struct rdoc *render_ancestor(const struct rdoc *d)
{
    struct rdoc *p = d->parent;
    return p && p->replaced_by && p->replaced_by != d ? p->replaced_by : p;
}

/* A document's data before it is rendered: its own, shared, as every value of the render is:
 * a change makes its own copy of what it changes, and only that (jsonpath_unshare), so most of
 * a site's data is never copied. */
json_t *render_starting_data(const struct rdoc *d)
{
    return json_incref(d->original ? (json_t *)d->original : json_null());
}

/* Before substitutions write into d's data: from here on it counts as made by the render
 * (render.max_output_bytes). Each write makes its own what it changes (jsonpath_unshare). */
int render_own_data(struct render *r, struct rdoc *d)
{
    (void)r;
    d->owned = 1;
    return 0;
}

const char *render_str(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}
