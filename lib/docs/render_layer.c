/* render_layer.c: Deckhand's layering: a document's actions applied in order to its parent's
 * rendered data. The actions (merge, replace, delete) are one table, render_actions, which
 * document_check reads too (render_action_find). */
#include "docs/render_private.h"

#include <stdio.h>
#include <string.h>

/* A layering action: its method, and how it applies at path, from d's own data onto *rendered
 * (the data layered so far, shared: it makes its own only what it changes). */
struct render_action {
    const char *method;
    int (*apply)(struct render *r, struct rdoc *d, const struct raction *action,
                 const struct jsonpath *path, json_t **rendered);
};

static int out_of_memory(struct render *r)
{
    return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
}

/* Merges from into into (which is this document's own) as Deckhand does: mappings key by
 * key, anything else replaced. What comes from the child is shared, not copied: rendering
 * never changes a value in place unless it is the document's own (jsonpath_unshare). */
static int merge_into(json_t *into, const json_t *from)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)from, key, v) {
        json_t *have = json_object_get(into, key);
        if (json_is_object(have) && json_is_object(v)) {
            if (have->refcount > 1) { /* shared: a copy of its own first */
                json_t *own = json_copy(have);
                if (!own || json_object_set_new(into, key, own))
                    return -1;
                have = own;
            }
            if (merge_into(have, v))
                return -1;
        } else if (json_object_set(into, key, v)) {
            return -1;
        }
    }
    return 0;
}

static int missing_key(struct render *r, const struct rdoc *d, const char *method, const char *path)
{
    const struct rdoc *p = render_ancestor(d);
    return purser_error_set(r->err, PURSER_EINVAL,
                            "Missing action path in {'method': '%s', 'path': '%s'} needed for "
                            "layering from either the data section of the parent [%s, %s] %s "
                            "or child [%s, %s] %s document.",
                            method, path, p->schema, p->layer, p->name, d->schema, d->layer,
                            d->name);
}

static int apply_delete(struct render *r, struct rdoc *d, const struct raction *action,
                        const struct jsonpath *path, json_t **rendered)
{
    if (jsonpath_unshare(path, rendered, 0))
        return out_of_memory(r);
    if (jsonpath_delete(path, rendered, r->err))
        return missing_key(r, d, action->method, action->path);
    return 0;
}

static int apply_replace(struct render *r, struct rdoc *d, const struct raction *action,
                         const struct jsonpath *path, json_t **rendered)
{
    json_t *from_child = jsonpath_get(path, (json_t *)d->original);
    if (!from_child)
        return missing_key(r, d, action->method, action->path);
    if (jsonpath_unshare(path, rendered, 0))
        return out_of_memory(r);
    return jsonpath_set(path, rendered, json_incref(from_child), r->err);
}

/* Mappings merged (merge_into); anything else replaced. */
static int apply_merge(struct render *r, struct rdoc *d, const struct raction *action,
                       const struct jsonpath *path, json_t **rendered)
{
    json_t *from_child = jsonpath_get(path, (json_t *)d->original), *from_parent;
    if (!from_child)
        return missing_key(r, d, action->method, action->path);
    from_parent = jsonpath_get(path, *rendered);
    if (!json_is_object(from_parent) || !json_is_object(from_child))
        return apply_replace(r, d, action, path, rendered);
    if (jsonpath_unshare(path, rendered, 1) ||
        merge_into(jsonpath_get(path, *rendered), from_child))
        return out_of_memory(r);
    return 0;
}

/* Every layering action, in the order messages list them. */
static const struct render_action render_actions[] = {
    {"merge", apply_merge},
    {"replace", apply_replace},
    {"delete", apply_delete},
};

#define RENDER_ACTION_COUNT (sizeof(render_actions) / sizeof(render_actions[0]))

const struct render_action *render_action_find(const char *method)
{
    for (size_t i = 0; i < RENDER_ACTION_COUNT; i++)
        if (strcmp(render_actions[i].method, method) == 0)
            return &render_actions[i];
    return NULL;
}

void render_action_names(char *out, size_t size)
{
    size_t used = 0;
    if (size)
        out[0] = '\0';
    for (size_t i = 0; i < RENDER_ACTION_COUNT && used < size; i++) {
        const char *before = i == 0 ? "" : i + 1 < RENDER_ACTION_COUNT ? ", " : " or ";
        used += (size_t)snprintf(out + used, size - used, "%s%s", before, render_actions[i].method);
    }
}

static int apply_action(struct render *r, struct rdoc *d, const struct raction *action,
                        json_t **rendered)
{
    const struct jsonpath *path = jsonpath_cached(r->paths, action->path, r->err);
    const struct render_action *how = render_action_find(action->method);

    if (!path)
        return r->err->code;
    if (how)
        return how->apply(r, d, action, path, rendered);
    /* (a path the child's data lacks is named first, as for a known method) */
    if (!jsonpath_get(path, (json_t *)d->original))
        return missing_key(r, d, action->method, action->path);
    return purser_error_set(r->err, PURSER_EINVAL,
                            "Method in %s is invalid for document [%s, %s] %s.", action->method,
                            d->schema, d->layer, d->name);
}

int render_layer(struct render *r, struct rdoc *d)
{
    struct rdoc *from = render_ancestor(d);
    json_t *rendered;
    if (!from || !d->nacts)
        return 0;
    /* the parent's data, shared: each action makes its own only what it changes */
    rendered = json_incref(from->data);
    for (size_t i = 0; i < d->nacts; i++) {
        if (apply_action(r, d, &d->acts[i], &rendered)) {
            json_decref(rendered);
            return r->err->code;
        }
    }
    json_decref(d->data);
    d->data = rendered;
    d->owned = 1;
    return 0;
}
