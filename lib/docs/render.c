/* render.c: layering and substitution over one dependency graph, each document once: reading
 * the documents, the graph, the order and the output (layering: render_layer.c, substitution:
 * render_subst.c). */
#include "docs/render_private.h"

#include "codec/yaml_codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "a\0b\0c" keys in arena memory. */
static char *key3(struct arena *arena, const char *a, const char *b, const char *c, size_t *n)
{
    size_t la = strlen(a), lb = strlen(b), lc = c ? strlen(c) : 0;
    char *k = arena_alloc(arena, la + lb + lc + 3);
    if (!k)
        return NULL;
    memcpy(k, a, la + 1);
    memcpy(k + la + 1, b, lb + 1);
    if (c)
        memcpy(k + la + lb + 2, c, lc + 1);
    *n = la + lb + 2 + (c ? lc + 1 : 0);
    return k;
}

/* A label value as selectors compare it ("72" for 72), in arena memory; "" for none. */
static const char *scalar_text(struct arena *arena, const json_t *v)
{
    const char *text = yaml_codec_key_text_in(arena, v);
    return text ? text : "";
}

static int identity_compare(const struct rdoc *a, const struct rdoc *b)
{
    int c = strcmp(a->schema, b->schema);
    if (!c)
        c = strcmp(a->layer, b->layer);
    if (!c)
        c = strcmp(a->name, b->name);
    return c;
}

static int by_identity(const void *x, const void *y)
{
    return identity_compare(*(struct rdoc *const *)x, *(struct rdoc *const *)y);
}

/* ---- reading the documents ---- */

static int layer_index(const json_t *order, const char *layer)
{
    size_t i;
    const json_t *l;
    json_array_foreach (order, i, l) {
        if (strcmp(render_str(l), layer) == 0)
            return (int)i;
    }
    return -1;
}

static int is_key(const char *key, size_t len, const char *want)
{
    return len == strlen(want) && memcmp(key, want, len) == 0;
}

static const char *kept_string(struct render *r, const json_t *v)
{
    return arena_strdup(r->arena, render_str(v));
}

/* A layering action's method and path (text: checked when the action is applied). */
static int read_actions(struct render *r, struct rdoc *d, const json_t *actions)
{
    size_t i;
    const json_t *action;
    if (!(d->nacts = json_array_size(actions)))
        return 0;
    if (!(d->acts = arena_calloc(r->arena, d->nacts, sizeof(*d->acts))))
        return -1;
    json_array_foreach (actions, i, action) {
        struct raction *a = &d->acts[i];
        const char *key;
        size_t len;
        json_t *v;
        a->method = a->path = "";
        json_object_keylen_foreach((json_t *)action, key, len, v)
        {
            if (is_key(key, len, "method") && !(a->method = kept_string(r, v)))
                return -1;
            if (is_key(key, len, "path") && !(a->path = kept_string(r, v)))
                return -1;
        }
    }
    return 0;
}

/* A substitution destination: path, pattern, recurse. */
static int read_dest(struct render *r, struct rdest *dest, const json_t *object)
{
    const char *key;
    size_t len;
    json_t *v;
    dest->path = "";
    json_object_keylen_foreach((json_t *)object, key, len, v)
    {
        if (is_key(key, len, "path") && !(dest->path = kept_string(r, v)))
            return -1;
        if (is_key(key, len, "pattern") && json_is_string(v) &&
            !(dest->pattern = kept_string(r, v)))
            return -1;
        if (is_key(key, len, "recurse"))
            dest->recurse = v;
    }
    return 0;
}

/* A substitution: its source's identity (found once the sources are indexed), what to take of
 * it and where to put it (one destination or a list). */
static int read_substitution(struct render *r, struct rsub *s, const json_t *sub)
{
    const char *key, *schema = "", *name = "";
    size_t len;
    json_t *v, *src = NULL, *dest = NULL;
    json_object_keylen_foreach((json_t *)sub, key, len, v)
    {
        if (is_key(key, len, "src"))
            src = v;
        else if (is_key(key, len, "dest"))
            dest = v;
    }
    s->path = "";
    json_object_keylen_foreach(src, key, len, v)
    {
        if (is_key(key, len, "schema"))
            schema = render_str(v);
        else if (is_key(key, len, "name"))
            name = render_str(v);
        else if (is_key(key, len, "path") && !(s->path = kept_string(r, v)))
            return -1;
        else if (is_key(key, len, "pattern") && json_is_string(v) &&
                 !(s->pattern = kept_string(r, v)))
            return -1;
        else if (is_key(key, len, "match_group"))
            s->group = json_integer_value(v);
    }
    if (!(s->source = key3(r->arena, schema, name, NULL, &s->source_len)))
        return -1;
    s->ndests = json_is_array(dest) ? json_array_size(dest) : 1;
    if (s->ndests && !(s->dests = arena_calloc(r->arena, s->ndests, sizeof(*s->dests))))
        return -1;
    for (size_t i = 0; i < s->ndests; i++)
        if (read_dest(r, &s->dests[i], json_is_array(dest) ? json_array_get(dest, i) : dest))
            return -1;
    return 0;
}

static int read_substitutions(struct render *r, struct rdoc *d, const json_t *subs)
{
    size_t i;
    const json_t *sub;
    if (!(d->nsubst = json_array_size(subs)))
        return 0;
    if (!(d->subst = arena_calloc(r->arena, d->nsubst, sizeof(*d->subst))))
        return -1;
    json_array_foreach (subs, i, sub) {
        if (read_substitution(r, &d->subst[i], sub))
            return -1;
    }
    return 0;
}

/* Each label as its index keys it: "schema\0key\0value". */
static int read_labels(struct render *r, struct rdoc *d, const json_t *labels)
{
    const char *key;
    json_t *v;
    size_t n = 0;
    if (!(d->nlabels = json_object_size(labels)))
        return 0;
    if (!(d->label_keys = arena_alloc(r->arena, d->nlabels * sizeof(*d->label_keys))) ||
        !(d->label_lens = arena_alloc(r->arena, d->nlabels * sizeof(*d->label_lens))))
        return -1;
    json_object_foreach ((json_t *)labels, key, v) {
        if (!(d->label_keys[n] =
                  key3(r->arena, d->schema, key, scalar_text(r->arena, v), &d->label_lens[n])))
            return -1;
        n++;
    }
    return 0;
}

/* Reads what the render needs of doc, each of its mappings walked once and in the order the
 * documents lie in memory: over a big set the render is bound by memory, and a walk visits
 * each member once where a lookup by key visits the table too. What later passes read (names,
 * actions, substitutions, label keys) is kept together in the render's arena. */
static int read_document(struct render *r, struct rdoc *d, const json_t *doc)
{
    const char *key, *schema = "", *name = "", *layer = "";
    size_t len;
    json_t *v;
    const json_t *meta = NULL, *ld = NULL, *labels = NULL, *subs = NULL, *actions = NULL;
    d->doc = doc;
    json_object_keylen_foreach((json_t *)doc, key, len, v)
    {
        if (is_key(key, len, "schema"))
            schema = render_str(v);
        else if (is_key(key, len, "metadata"))
            meta = v;
        else if (is_key(key, len, "data"))
            d->original = v;
    }
    json_object_keylen_foreach((json_t *)meta, key, len, v)
    {
        if (is_key(key, len, "name"))
            name = render_str(v);
        else if (is_key(key, len, "schema"))
            d->control = strcmp(render_str(v), "metadata/Control/v1") == 0;
        else if (is_key(key, len, "layeringDefinition"))
            ld = v;
        else if (is_key(key, len, "replacement"))
            d->replacement = json_is_true(v);
        else if (is_key(key, len, "storagePolicy"))
            d->encrypted = strcmp(render_str(v), "encrypted") == 0;
        else if (is_key(key, len, "labels"))
            d->labels = labels = v;
        else if (is_key(key, len, "substitutions"))
            subs = v;
    }
    json_object_keylen_foreach((json_t *)ld, key, len, v)
    {
        if (is_key(key, len, "layer"))
            layer = render_str(v);
        else if (is_key(key, len, "abstract"))
            d->abstract = json_is_true(v);
        else if (is_key(key, len, "parentSelector"))
            d->selector = v;
        else if (is_key(key, len, "actions"))
            actions = v;
    }
    d->schema = arena_strdup(r->arena, schema);
    d->name = arena_strdup(r->arena, name);
    d->layer = arena_strdup(r->arena, layer);
    d->data = render_starting_data(d);
    if (!d->schema || !d->name || !d->layer || !d->data || read_actions(r, d, actions) ||
        read_substitutions(r, d, subs) || read_labels(r, d, labels))
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    /* Deckhand's LayeringPolicy: the one of the lowest name when there are more */
    if (document_schema_is(d->schema, "deckhand/LayeringPolicy") &&
        (!r->policy || strcmp(d->name, r->policy->name) < 0))
        r->policy = d;
    return 0;
}

static int check_layer(struct render *r, const struct rdoc *d)
{
    if (d->control || !d->layer[0] || d->layer_index >= 0)
        return 0;
    return purser_error_set(r->err, PURSER_EINVAL,
                            "Invalid layer '%s' for document [%s] %s was not found in layerOrder "
                            "for the LayeringPolicy.",
                            d->layer, d->schema, d->name);
}

static int index_labels(struct render *r, struct rdoc *d)
{
    if (d->layer_index < 0)
        return 0;
    for (size_t i = 0; i < d->nlabels; i++) {
        struct slot *s =
            render_slot_for(r->arena, r->labels, r->buckets, d->label_keys[i], d->label_lens[i], 1);
        if (!s || render_slot_add(r->arena, s, d))
            return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    }
    return 0;
}

static int selector_matches(const json_t *selector, const json_t *labels)
{
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)selector, key, v) {
        const json_t *have = json_object_get(labels, key);
        if (!have || !json_equal(have, v))
            return 0;
    }
    return 1;
}

/* The nearest higher layer's document of the same schema whose labels hold the selector. */
static int find_parent(struct render *r, struct rdoc *d)
{
    const char *key = NULL;
    json_t *v = NULL;
    struct slot *s;
    size_t n, found = 0;
    int best = -1;
    char *k;

    if (d->layer_index < 0 || !json_object_size(d->selector))
        return 0;
    json_object_foreach ((json_t *)d->selector, key, v)
        break; /* the first pair narrows */
    if (!key || !v)
        return 0;
    if (!(k = key3(r->arena, d->schema, key, scalar_text(r->arena, v), &n)))
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    if (!(s = render_slot_for(r->arena, r->labels, r->buckets, k, n, 0)))
        return 0;
    for (size_t i = 0; i < s->count; i++) {
        struct rdoc *c = s->items[i];
        if (c == d || c->layer_index >= d->layer_index || !selector_matches(d->selector, c->labels))
            continue;
        if (c->layer_index > best) {
            best = c->layer_index;
            d->parent = c;
            found = 1;
        } else if (c->layer_index == best)
            found++;
    }
    if (found > 1)
        return purser_error_set(r->err, PURSER_EINVAL,
                                "Too many parent documents found for document [%s, %s] %s. "
                                "Found: %zu. Expected: 1.",
                                d->schema, d->layer, d->name, found);
    return 0;
}

static int replacement_fault(struct render *r, const struct rdoc *d, const char *reason)
{
    return purser_error_set(r->err, PURSER_EINVAL,
                            "Replacement document [%s, %s] %s is invalid. Reason: %s", d->schema,
                            d->layer, d->name, reason);
}

static int check_replacement(struct render *r, struct rdoc *d)
{
    struct rdoc *p = d->parent;
    if (d->replacement) {
        if (!p)
            return replacement_fault(r, d,
                                     "Document replacement requires that the document "
                                     "with `replacement: true` have a parent.");
        if (strcmp(p->schema, d->schema) || strcmp(p->name, d->name))
            return replacement_fault(r, d,
                                     "Document replacement requires that both documents "
                                     "have the same `schema` and `metadata.name`.");
        if (p->replaced_by)
            return replacement_fault(r, d, "The parent already has a replacement.");
        if (p->replacement)
            return replacement_fault(r, p,
                                     "A replacement document cannot itself be replaced "
                                     "by another document.");
        p->replaced_by = d;
    } else if (p && strcmp(p->schema, d->schema) == 0 && strcmp(p->name, d->name) == 0) {
        return replacement_fault(r, d,
                                 "Non-replacement documents cannot have the same "
                                 "`schema` and `metadata.name` as their parent. Either "
                                 "add `replacement: true` to the document or give the "
                                 "document a different name.");
    }
    return 0;
}

/* Substitution sources: concrete documents by (schema, name); the most specific layer wins,
 * and a replaced document gives way to its replacement. */
static int index_source(struct render *r, struct rdoc *d)
{
    size_t n;
    char *k;
    struct slot *s;
    if (d->abstract)
        return 0;
    if (!(k = key3(r->arena, d->schema, d->name, NULL, &n)) ||
        !(s = render_slot_for(r->arena, r->sources, r->buckets, k, n, 1)))
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    if (!s->count)
        return render_slot_add(r->arena, s, d) ? purser_error_set(r->err, PURSER_EINTERNAL, "oom")
                                               : 0;
    if (d->layer_index > s->items[0]->layer_index ||
        (d->layer_index == s->items[0]->layer_index && identity_compare(d, s->items[0]) < 0))
        s->items[0] = d;
    return 0;
}

/* The concrete document a substitution's src names, or NULL. */
static struct rdoc *source_of(struct render *r, const struct rsub *sub)
{
    struct slot *s =
        render_slot_for(r->arena, r->sources, r->buckets, sub->source, sub->source_len, 0);
    struct rdoc *d = s && s->count ? s->items[0] : NULL;
    return d && d->replaced_by ? d->replaced_by : d;
}

/* ---- the dependency graph ---- */

static int depend(struct render *r, struct rdoc *user, struct rdoc *on)
{
    if (on->nusers == on->users_cap) {
        size_t cap = on->users_cap ? on->users_cap * 2 : 4;
        struct rdoc **users = arena_alloc(r->arena, cap * sizeof(*users));
        if (!users)
            return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
        if (on->nusers)
            memcpy(users, on->users, on->nusers * sizeof(*users));
        on->users = users;
        on->users_cap = cap;
    }
    on->users[on->nusers++] = user;
    user->waiting++;
    return 0;
}

static int build_edges(struct render *r, struct rdoc *d)
{
    if (d->control)
        return 0;
    if (render_ancestor(d) && depend(r, d, render_ancestor(d)))
        return r->err->code;
    for (size_t i = 0; i < d->nsubst; i++) {
        struct rsub *sub = &d->subst[i];
        struct rdoc *from = sub->from = source_of(r, sub);
        if (!from) /* (its key is "schema\0name") */
            return purser_error_set(r->err, PURSER_EEXISTS,
                                    "Required substitution source document [%s] %s was not "
                                    "found, yet is referenced by [%s, %s] %s.",
                                    sub->source, sub->source + strlen(sub->source) + 1, d->schema,
                                    d->layer, d->name);
        if (from->replacement && from->replaced_by)
            return replacement_fault(r, from,
                                     "A replacement document cannot itself be "
                                     "replaced by another document.");
        if (depend(r, d, from))
            return r->err->code;
    }
    return 0;
}

/* ---- output ---- */

/* A new document: doc's members, its data the rendered one (what doc had is never touched). */
static json_t *with_data(const json_t *doc, json_t *data)
{
    json_t *out = json_object(), *v;
    const char *key;
    size_t len;
    int set = 0;
    json_object_keylen_foreach((json_t *)doc, key, len, v)
    {
        if (is_key(key, len, "data"))
            set = 1, v = data;
        json_object_setn_nocheck(out, key, len, v);
    }
    if (!set)
        json_object_set(out, "data", data);
    return out;
}

/* The documents rendered, in identity order: each in its place by its rank (prepare sorted
 * them once), the abstract and the replaced left out. */
static int output(struct render *r, json_t **out, json_t **secrets)
{
    struct rdoc **sorted = arena_calloc(r->arena, r->count ? r->count : 1, sizeof(*sorted));
    size_t n = 0;
    if (!sorted)
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    for (size_t i = 0; i < r->count; i++)
        if (!r->docs[i].abstract && !r->docs[i].replaced_by)
            sorted[r->docs[i].rank] = &r->docs[i];
    for (size_t i = 0; i < r->count; i++)
        if (sorted[i])
            sorted[n++] = sorted[i];
    *out = json_array();
    if (secrets)
        *secrets = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct rdoc *d = sorted[i];
        json_t *doc =
            d->owned || !d->original ? with_data(d->doc, d->data) : json_incref((json_t *)d->doc);
        json_array_append_new(*out, doc);
        if (secrets)
            json_array_append(*secrets, jsonmask_any(d->mask) ? d->mask : json_null());
    }
    return 0;
}

static int prepare(struct render *r, const json_t *docs, const json_t *fallback_policy)
{
    struct rdoc **order;
    int rc = 0;
    const json_t *policy;
    for (size_t i = 0; !rc && i < r->count; i++)
        rc = read_document(r, &r->docs[i], json_array_get(docs, i));
    if (!rc && !(policy = r->policy ? r->policy->doc : fallback_policy))
        rc = purser_error_set(r->err, PURSER_EEXISTS,
                              "Required LayeringPolicy was not found for layering.");
    if (!rc) {
        r->order = json_object_get(json_object_get(policy, "data"), "layerOrder");
        for (size_t i = 0; i < r->count; i++) {
            struct rdoc *d = &r->docs[i];
            d->layer_index = d->control || !d->layer[0] ? -1 : layer_index(r->order, d->layer);
        }
        if (!(order = arena_alloc(r->arena, (r->count ? r->count : 1) * sizeof(*order))))
            rc = purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        for (size_t i = 0; i < r->count; i++)
            order[i] = &r->docs[i];
        qsort(order, r->count, sizeof(*order), by_identity);
        for (size_t i = 0; i < r->count; i++)
            order[i]->rank = i;
        /* every step in identity order, so that the outcome (and the errors) do not depend on
         * the input's sequence */
        for (size_t i = 0; !rc && i < r->count; i++)
            rc = check_layer(r, order[i]);
        for (size_t i = 0; !rc && i < r->count; i++)
            rc = index_labels(r, order[i]);
        for (size_t i = 0; !rc && i < r->count; i++)
            rc = find_parent(r, order[i]);
        for (size_t i = 0; !rc && i < r->count; i++)
            rc = check_replacement(r, order[i]);
        for (size_t i = 0; !rc && i < r->count; i++)
            rc = index_source(r, order[i]);
        for (size_t i = 0; !rc && i < r->count; i++)
            rc = build_edges(r, order[i]);
    }
    return rc;
}

const struct render_limits render_limits_default = {
    .match_steps = 1000000, .max_string = (size_t)64 << 20, .max_output = (size_t)256 << 20};

int render_documents(const json_t *docs, const json_t *fallback_policy,
                     const struct render_limits *limits, json_t **out, json_t **secrets,
                     struct purser_error *err)
{
    struct render *r = calloc(1, sizeof(*r));
    int rc;

    *out = NULL;
    if (secrets)
        *secrets = NULL;
    if (!r || !(r->arena = arena_new()) || !(r->paths = jsonpath_cache_new())) {
        if (r)
            arena_free(r->arena);
        free(r);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    r->err = err;
    r->limits = limits ? limits : &render_limits_default;
    r->count = json_array_size(docs);
    for (r->buckets = 64; r->buckets < 2 * r->count; r->buckets *= 2)
        ;
    if (!(r->docs = arena_calloc(r->arena, r->count ? r->count : 1, sizeof(*r->docs))) ||
        !(r->labels = arena_calloc(r->arena, r->buckets, sizeof(*r->labels))) ||
        !(r->sources = arena_calloc(r->arena, r->buckets, sizeof(*r->sources))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    else
        rc = prepare(r, docs, fallback_policy);
    if (!rc && (rc = render_in_order(r, 0)) && rc != PURSER_EINTERNAL) {
        render_reset(r); /* the error the canonical order meets first */
        rc = render_in_order(r, 1);
    }
    if (!rc)
        rc = output(r, out, secrets);
    for (size_t i = 0; r->docs && i < r->count; i++) {
        json_decref(r->docs[i].data);
        json_decref(r->docs[i].mask);
    }
    render_free_regexes(r);
    pcre2_match_context_free(r->match);
    jsonpath_cache_free(r->paths);
    arena_free(r->arena);
    free(r);
    return rc;
}
