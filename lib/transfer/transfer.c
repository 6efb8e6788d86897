/* transfer.c: import of an organization (transfer.h), and what export shares with it. */
#include "transfer/transfer_private.h"

#include "auth/identity.h"

#include <stdio.h>
#include <string.h>

int transfer_org_id(const struct transfer_ctx *c, long long *id, struct purser_error *err)
{
    return identity_org_id(c->store, c->arena, c->org, id, err);
}

/* ---- the kinds of a stream, from the registry ----------------------------------------------- */

/* One kind a stream may hold, in the export's order: the kind of a row's transfer hooks, or of
 * a row's descriptor (resource convention). */
struct stream_kind {
    const char *kind;
    const struct transfer_kind *hooks;    /* its check and import (NULL: the descriptor's) */
    const struct resource_kind *resource; /* else */
};

struct stream_kinds {
    struct stream_kind at[TRANSFER_ROWS_MAX];
    size_t count;
};

/* The registry's rows an export writes, by rank, each one's kinds in its hooks' order. */
static void stream_kinds(struct stream_kinds *kinds)
{
    const struct registry_kind *rows[TRANSFER_ROWS_MAX];
    size_t count = registry_exports(rows, TRANSFER_ROWS_MAX);
    kinds->count = 0;
    for (size_t i = 0; i < count; i++) {
        const struct transfer_hooks *t = rows[i]->transfer;
        for (size_t j = 0; t && j < TRANSFER_KINDS_MAX && t->kinds[j].kind; j++)
            if (kinds->count < TRANSFER_ROWS_MAX)
                kinds->at[kinds->count++] =
                    (struct stream_kind){t->kinds[j].kind, &t->kinds[j], NULL};
        if (!t && kinds->count < TRANSFER_ROWS_MAX)
            kinds->at[kinds->count++] =
                (struct stream_kind){rows[i]->resource->export_kind, NULL, rows[i]->resource};
    }
}

/* A document kind's index in kinds, or -1. */
static int kind_index(const struct stream_kinds *kinds, const char *kind)
{
    for (size_t i = 0; kind && i < kinds->count; i++)
        if (!strcmp(kinds->at[i].kind, kind))
            return (int)i;
    return -1;
}

/* ---- import --------------------------------------------------------------------------------- */

/* "document 7 (Node web1): " before err's message. */
static int at_doc(struct purser_error *err, int rc, size_t index, const json_t *doc)
{
    char message[PURSER_ERROR_MESSAGE_SIZE];
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    const char *name = transfer_meta_name(doc);
    snprintf(message, sizeof(message), "%s", err ? err->message : "");
    return purser_error_set(err, rc, "document %zu (%.40s %.80s): %s", index + 1, kind ? kind : "?",
                            name ? name : "?", message);
}

static int invalid(struct purser_error *err, size_t index, const json_t *doc, const char *what)
{
    purser_error_set(err, PURSER_EINVAL, "%s", what);
    return at_doc(err, PURSER_EINVAL, index, doc);
}

struct import {
    struct transfer_import in; /* what each kind's import sees */
    const struct stream_kinds *kinds;
    json_t *summary; /* {kind: count} */
};

static int import_empty(const struct transfer_ctx *c, long long oid, struct purser_error *err)
{
    json_t *contents = json_object();
    const char *held = NULL;
    int rc = identity_org_contents(c->store, c->arena, oid, c->org, contents, &held, err);
    json_decref(contents);
    if (!rc && held)
        rc = purser_error_set(err, PURSER_EEXISTS,
                              "organization '%s' is not empty (%s): an import goes into an "
                              "organization that has nothing but its validator and members",
                              c->org, held);
    return rc;
}

/* One document's envelope, its place in the order (k: its kind's index; last: the one before
 * it), and its kind and name not seen before (seen: {"Kind name": true}, added to). */
static int check_doc(const struct stream_kinds *kinds, const json_t *doc, size_t i, int k, int last,
                     json_t *seen, struct purser_error *err)
{
    const char *name = transfer_meta_name(doc);
    char first[96];
    json_t *id;
    int rc = 0;
    /* the first kind of the lowest rank: the organization's */
    snprintf(first, sizeof(first), "kind: the %s comes first, once",
             kinds->count ? kinds->at[0].kind : "?");
    if (!json_is_object(doc))
        rc = invalid(err, i, doc, "not a mapping");
    else if (k < 0)
        rc = invalid(err, i, doc, "kind: not one an export makes");
    else if (!json_is_string(json_object_get(doc, "version")) ||
             strcmp(json_string_value(json_object_get(doc, "version")), "v1"))
        rc = invalid(err, i, doc, "version: must be v1");
    else if (!name || !*name)
        rc = invalid(err, i, doc, "metadata.name: missing");
    else if (!json_is_object(json_object_get(doc, "spec")))
        rc = invalid(err, i, doc, "spec: must be a mapping");
    else if ((k == 0) != (i == 0))
        rc = invalid(err, i, doc, first);
    else if (k < last)
        rc =
            invalid(err, i, doc, "kind: out of the export's order (what it refers to comes first)");
    id = rc ? NULL : json_sprintf("%s %s", json_string_value(json_object_get(doc, "kind")), name);
    if (id && json_object_get(seen, json_string_value(id)))
        rc = invalid(err, i, doc, "metadata.name: a second document of this kind and name");
    else if (id)
        json_object_set_new(seen, json_string_value(id), json_true());
    json_decref(id);
    return rc;
}

/* The whole stream before anything is written. */
static int check_stream(const struct stream_kinds *kinds, const json_t *docs,
                        struct purser_error *err)
{
    json_t *seen = json_object(), *doc;
    size_t i;
    int last = -1, rc = 0;
    if (!json_is_array(docs) || json_array_size(docs) == 0)
        return purser_error_set(err, PURSER_EINVAL, "the import is not a list of documents");
    json_array_foreach (docs, i, doc) {
        int k = kind_index(kinds, json_string_value(json_object_get(doc, "kind")));
        const struct transfer_kind *hooks;
        rc = check_doc(kinds, doc, i, k, last, seen, err);
        hooks = rc ? NULL : kinds->at[k].hooks;
        if (hooks && hooks->check)
            rc = hooks->check(doc, seen, err);
        if (rc && hooks) /* the kind's own check: its message names the field */
            rc = at_doc(err, rc, i, doc);
        if (rc)
            break;
        last = k;
    }
    json_decref(seen);
    return rc;
}

/* One document through its kind's import: its transfer hooks', or its descriptor's
 * import_doc. */
static int import_one(struct import *im, const struct stream_kind *kind, const json_t *doc,
                      json_t **out, struct purser_error *err)
{
    const struct transfer_ctx *c = im->in.c;
    struct resource_scope s = {c->store, c->arena, im->in.oid, c->actor};
    struct resource_import in = {.base_url = c->base_url, .token_ttl = c->bootstrap_ttl};
    if (kind->hooks)
        return kind->hooks->import(&im->in, doc, transfer_meta_name(doc),
                                   json_object_get(doc, "spec"), out, err);
    return kind->resource->import_doc(&s, doc, &in, out, err);
}

static int import_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct import *im = ctx;
    const json_t *doc;
    size_t i;
    int rc = import_empty(im->in.c, im->in.oid, err);
    (void)store;
    json_object_clear(im->summary);
    json_array_clear(im->in.left_out);
    json_array_foreach (im->in.docs, i, doc) {
        const struct stream_kind *kind =
            &im->kinds->at[kind_index(im->kinds, json_string_value(json_object_get(doc, "kind")))];
        json_t *n, *out = NULL;
        if (rc)
            break;
        im->in.made = 1;
        rc = import_one(im, kind, doc, &out, err);
        json_decref(out);
        if (rc)
            return at_doc(err, rc, i, doc);
        n = json_object_get(im->summary, kind->kind);
        if (im->in.made)
            json_object_set_new(im->summary, kind->kind, json_integer(json_integer_value(n) + 1));
        if (im->in.c->progress)
            im->in.c->progress(im->in.c->progress_ctx, i + 1, kind->kind);
    }
    return rc;
}

int transfer_import(const struct transfer_ctx *c, const json_t *docs, json_t **summary,
                    struct purser_error *err)
{
    struct stream_kinds kinds;
    struct import im = {.in = {.c = c, .docs = docs, .left_out = json_array()},
                        .kinds = &kinds,
                        .summary = json_object()};
    int rc;
    stream_kinds(&kinds);
    rc = check_stream(&kinds, docs, err);
    if (!rc)
        rc = transfer_org_id(c, &im.in.oid, err);
    if (!rc)
        rc = store_txn(c->store, 1, import_txn, &im, err);
    if (!rc && !(*summary = json_pack("{s:O}", "imported", im.summary)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc && json_array_size(im.in.left_out))
        json_object_set(*summary, "left_out", im.in.left_out);
    json_decref(im.summary);
    json_decref(im.in.left_out);
    return rc;
}
