/* render_order.c: the order of a render: each document after what it depends on (a stack of
 * the ready ones, or a heap by identity rank for the canonical order), a cycle named, the data
 * made counted against render.max_output_bytes, and a render undone to run again. */
#include "docs/render_private.h"

#include <stdio.h>
#include <string.h>

/* The ready documents: by_rank, a binary heap by identity rank (the order is the input's
 * identities', never the input's sequence), each entry carrying its rank, so that ordering the
 * heap reads the heap alone, not the documents; otherwise a stack (last in, first out). */
struct ready_entry {
    size_t rank;
    struct rdoc *doc;
};
struct ready {
    struct ready_entry *items;
    size_t count;
    int by_rank;
};

static void ready_push(struct ready *h, struct rdoc *d)
{
    size_t i = h->count++;
    struct ready_entry e = {d->rank, d};
    if (!h->by_rank) {
        h->items[i] = e;
        return;
    }
    for (; i && h->items[(i - 1) / 2].rank > e.rank; i = (i - 1) / 2)
        h->items[i] = h->items[(i - 1) / 2];
    h->items[i] = e;
}

static struct rdoc *ready_pop(struct ready *h)
{
    struct rdoc *top = h->items[0].doc;
    struct ready_entry last;
    size_t i = 0;
    if (!h->by_rank)
        return h->items[--h->count].doc;
    last = h->items[--h->count];
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= h->count)
            break;
        if (l + 1 < h->count && h->items[l + 1].rank < h->items[l].rank)
            m = l + 1;
        if (h->items[m].rank >= last.rank)
            break;
        h->items[i] = h->items[m];
        i = m;
    }
    if (h->count)
        h->items[i] = last;
    return top;
}

static int cycle(struct render *r)
{
    char list[200] = "";
    size_t used = 0, shown = 0;
    for (size_t i = 0; i < r->count && shown < 4; i++) {
        const struct rdoc *d = &r->docs[i];
        if (d->done)
            continue;
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s[%s] %s", shown++ ? ", " : "",
                                 d->schema, d->name);
        if (used >= sizeof(list))
            break;
    }
    return purser_error_set(r->err, PURSER_EINVAL,
                            "Cannot determine substitution order as a dependency cycle exists "
                            "for the following documents: %s.",
                            list);
}

/* The size of v as JSON text, near enough (strings and keys by their bytes, each value and
 * member by its punctuation); the walk stops once it passes budget. */
static size_t weigh(const json_t *v, size_t budget)
{
    size_t n = 2, i;
    const char *key;
    const json_t *x;
    if (json_is_string(v))
        return 2 + json_string_length(v);
    if (json_is_array(v)) {
        json_array_foreach (v, i, x)
            if ((n += 1 + weigh(x, budget - (n < budget ? n : budget))) > budget)
                break;
        return n;
    }
    if (json_is_object(v)) {
        json_object_foreach ((json_t *)v, key, x)
            if ((n += 4 + strlen(key) + weigh(x, budget - (n < budget ? n : budget))) > budget)
                break;
        return n;
    }
    return 8;
}

/* Counts the data d's layering and substitution made against render.max_output_bytes. */
static int count_made(struct render *r, const struct rdoc *d)
{
    size_t left = r->limits->max_output - r->made;
    if (!d->owned)
        return 0;
    r->made += weigh(d->data, left);
    if (r->made <= r->limits->max_output)
        return 0;
    return purser_error_set(r->err, PURSER_EINVAL,
                            "rendering [%s, %s] %s would make the rendered documents over %zu "
                            "bytes (render.max_output_bytes)",
                            d->schema, d->layer, d->name, r->limits->max_output);
}

/* Renders every document after what it depends on. By default depth first: the ready ones
 * taken last in first out, seeded so that they start in the order the documents lie in memory,
 * so that a document's users are rendered right after it, while its data is still in the
 * cache (over a big set the render is bound by memory: bench/render's 16,000 / 2,000 growth
 * went from 8.9x to 8.4x). What comes out does not depend on the order, only which error is
 * met first: canonical takes the ready ones by identity rank instead, the order whose first
 * error is the one reported. */
int render_in_order(struct render *r, int canonical)
{
    struct ready h = {
        .items = arena_calloc(r->arena, r->count ? r->count : 1, sizeof(struct ready_entry)),
        .by_rank = canonical};
    size_t rendered = 0;
    if (!h.items)
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = r->count; i-- > 0;)
        if (!r->docs[i].waiting)
            ready_push(&h, &r->docs[i]);
    while (h.count) {
        struct rdoc *d = ready_pop(&h);
        if (!d->control &&
            ((d->parent && render_layer(r, d)) || render_substitute(r, d) || count_made(r, d)))
            return r->err->code;
        if (d->encrypted) { /* all of it, whatever it took from others */
            json_decref(d->mask);
            d->mask = json_true();
        }
        d->done = 1;
        rendered++;
        for (size_t u = 0; u < d->nusers; u++)
            if (--d->users[u]->waiting == 0)
                ready_push(&h, d->users[u]);
    }
    return rendered == r->count ? 0 : cycle(r);
}

/* Undoes a render that stopped at an error, so that it can run again in canonical order. */
void render_reset(struct render *r)
{
    for (size_t i = 0; i < r->count; i++) {
        struct rdoc *d = &r->docs[i];
        json_decref(d->data);
        json_decref(d->mask);
        d->data = render_starting_data(d);
        d->mask = NULL;
        d->owned = d->done = 0;
        d->waiting = 0;
    }
    for (size_t i = 0; i < r->count; i++)
        for (size_t u = 0; u < r->docs[i].nusers; u++)
            r->docs[i].users[u]->waiting++;
    r->made = 0;
}
