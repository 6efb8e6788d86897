/* render_layer.c: Deckhand's layering: a document's actions applied in order to its parent's
 * rendered data. The actions (merge, replace, delete) are the model's table (document.h's
 * document_actions); here each has how it applies, by the same index. */
#include "docs/render_private.h"

#include <stdio.h>
#include <string.h>

/* How a layering action applies at path, from d's own data onto *rendered (the data layered so
 * far, shared: it makes its own only what it changes). */
typedef int (*apply_fn)(struct render *r, struct rdoc *d, const struct raction *action,
                        const struct jsonpath *path, json_t **rendered);

static int out_of_memory(struct render *r)
{
    return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
}

/* The marks of the part of *mask under key, taken out of it (a new reference, or NULL): the
 * caller puts them back (put_marks). *mask marking all of into is split first. */
static int take_marks(json_t **mask, const json_t *into, const char *key, json_t **out)
{
    *out = NULL;
    if (jsonmask_split(mask, into))
        return -1;
    if ((*out = json_incref(json_object_get(*mask, key))))
        json_object_del(*mask, key);
    return 0;
}

/* Puts marks (consumed) back under key, when they mark anything. */
static int put_marks(json_t *mask, const char *key, json_t *marks)
{
    if (jsonmask_any(marks))
        return json_object_set_new(mask, key, marks);
    json_decref(marks);
    return 0;
}

static int merge_into(json_t *into, const json_t *from, json_t **mask);

/* Merges the child's value v under key into into; *marks: what was marked under key. */
static int merge_key(json_t *into, const char *key, json_t *v, json_t **marks)
{
    json_t *have = json_object_get(into, key);
    if (!json_is_object(have) || !json_is_object(v)) {
        json_decref(*marks); /* the child's value: nothing of it marked */
        *marks = NULL;
        return json_object_set(into, key, v);
    }
    if (have->refcount > 1) { /* shared: a copy of its own first */
        json_t *own = json_copy(have);
        if (!own || json_object_set_new(into, key, own))
            return -1;
        have = own;
    }
    return merge_into(have, v, marks);
}

/* Merges from into into (which is this document's own) as Deckhand does: mappings key by
 * key, anything else replaced; *mask (into's marks, or NULL) follows, a value the child gives
 * being unmarked. What comes from the child is shared, not copied: rendering never changes a
 * value in place unless it is the document's own (jsonpath_unshare). -1: out of memory. */
static int merge_into(json_t *into, const json_t *from, json_t **mask)
{
    const char *key;
    json_t *v;
    int rc = 0;
    json_object_foreach ((json_t *)from, key, v) {
        json_t *marks = NULL;
        if (*mask)
            rc = take_marks(mask, into, key, &marks);
        if (!rc)
            rc = merge_key(into, key, v, &marks);
        if (!rc && *mask)
            rc = put_marks(*mask, key, marks);
        else
            json_decref(marks);
        if (rc)
            break;
    }
    return rc;
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
    if (d->mask && jsonmask_remove(&d->mask, path, *rendered))
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
    if (d->mask && jsonmask_set(&d->mask, path, NULL, *rendered)) /* the child's: not marked */
        return out_of_memory(r);
    return jsonpath_set(path, rendered, json_incref(from_child), r->err);
}

/* merge_into at path when d's data has marks: those under path follow the merge (the values
 * around path stay as they were). */
static int merge_marked(struct render *r, struct rdoc *d, const struct jsonpath *path,
                        const json_t *from_child, json_t *rendered)
{
    json_t *marks = json_deep_copy(jsonmask_get(d->mask, path));
    int rc = jsonmask_get(d->mask, path) && !marks ? -1 : 0;
    if (!rc)
        rc = merge_into(jsonpath_get(path, rendered), from_child, &marks);
    if (!rc)
        return jsonmask_set(&d->mask, path, marks, rendered) ? out_of_memory(r) : 0;
    json_decref(marks);
    return out_of_memory(r);
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
    if (jsonpath_unshare(path, rendered, 1))
        return out_of_memory(r);
    if (!d->mask)
        return merge_into(jsonpath_get(path, *rendered), from_child, &d->mask) ? out_of_memory(r)
                                                                               : 0;
    return merge_marked(r, d, path, from_child, *rendered);
}

/* How each of the model's actions applies (document_actions, by index). */
static const apply_fn appliers[DOCUMENT_ACTION_COUNT] = {
    [DOCUMENT_MERGE] = apply_merge,
    [DOCUMENT_REPLACE] = apply_replace,
    [DOCUMENT_DELETE] = apply_delete,
};

static int apply_action(struct render *r, struct rdoc *d, const struct raction *action,
                        json_t **rendered)
{
    const struct jsonpath *path = jsonpath_cached(r->paths, action->path, r->err);
    int how = document_action_find(action->method);

    if (!path)
        return r->err->code;
    if (how >= 0)
        return appliers[how](r, d, action, path, rendered);
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
    /* the parent's data, shared: each action makes its own only what it changes; its marks,
     * as the actions leave them */
    rendered = json_incref(from->data);
    json_decref(d->mask);
    d->mask = from->mask ? json_deep_copy(from->mask) : NULL;
    if (from->mask && !d->mask) {
        json_decref(rendered);
        return out_of_memory(r);
    }
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
