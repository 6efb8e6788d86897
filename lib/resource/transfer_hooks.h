/* transfer_hooks.h: what a kind gives an organization's export and import (lib/transfer), in a
 * layer every kind's lib folder can include.
 *
 * A kind that an export carries and that does not follow the resource convention's export_doc
 * and import_doc (resource.h) has a `struct transfer_hooks` in its own lib file, and its
 * registry row (lib/registry/registry.h) points at it with its export rank. lib/transfer walks
 * the rows by rank: it writes each kind's documents with its export, checks the stream's
 * envelopes, order and duplicates, then each document with its kind's check, and imports each
 * with its kind's import, in one transaction. It names no kind itself.
 */
#ifndef PURSER_TRANSFER_HOOKS_H
#define PURSER_TRANSFER_HOOKS_H

#include "base/arena.h"
#include "base/err.h"
#include "store/store.h"

#include <jansson.h>

struct keyring;
struct links;

struct transfer_ctx {
    struct store *store;
    struct arena *arena;
    const char *org;
    const char *actor;             /* who imports (the revisions' and artifacts' author) */
    const char *base_url;          /* the API's URL ("https://host") */
    const struct links *links;     /* the links in exported Chef objects (NULL: null) */
    const struct keyring *keyring; /* encrypted documents (NULL: none can be read or written) */
    int secrets;                   /* export: encrypted documents' data in clear */
    /* the server's identity providers mapping to the organization: an export carries them
     * when set (its caller may read them), an import makes them when set (may write them);
     * otherwise left out, and an import's left_out says why */
    int identity_providers;
    long bootstrap_ttl; /* import: an imported cluster's new bootstrap token */
    int (*valid_role)(const char *role, void *ctx); /* import: the RBAC policy's roles */
    void *role_ctx;
    /* progress (may be NULL): called after each document with its index and kind */
    void (*progress)(void *ctx, size_t done, const char *kind);
    void *progress_ctx;
};

/* An import under way, as each document's import sees it. */
struct transfer_import {
    const struct transfer_ctx *c;
    const json_t *docs; /* the whole stream (a document may read another of it) */
    json_t *left_out;   /* [{...}]: what was not imported, for the operator (summary.left_out) */
    long long oid;      /* the organization's id */
    int made; /* 1 before each document; its import sets 0 when it made nothing (not counted) */
};

/* One envelope kind of an export ("Node"). */
struct transfer_kind {
    const char *kind;
    /* what a document of the kind needs beyond the envelope (NULL: nothing): 0, or
     * PURSER_EINVAL naming the field; the import puts "document N (Kind name): " before it.
     * seen: {"Kind name": true} of the documents before it. */
    int (*check)(const json_t *doc, const json_t *seen, struct purser_error *err);
    /* writes one document, inside the import's transaction (*out: what the write answered, or
     * NULL; the caller frees it) */
    int (*import)(struct transfer_import *im, const json_t *doc, const char *name,
                  const json_t *spec, json_t **out, struct purser_error *err);
};

#define TRANSFER_KINDS_MAX 3

/* A registry row's part in an export and an import. */
struct transfer_hooks {
    /* the envelopes it writes, in export order (each refers only to kinds before it); unused
     * entries have kind NULL */
    struct transfer_kind kinds[TRANSFER_KINDS_MAX];
    /* appends the organization's (id oid) documents of these kinds to out, each through
     * transfer_append */
    int (*export)(const struct transfer_ctx *c, long long oid, json_t *out,
                  struct purser_error *err);
};

/* {kind, version: v1, metadata: {name}, spec} (a new reference; spec is taken, NULL: {}). */
json_t *transfer_envelope(const char *kind, const char *name, json_t *spec);

/* Appends doc (taken) to the export out, and tells c's progress. */
void transfer_append(const struct transfer_ctx *c, json_t *out, json_t *doc);

/* The metadata.name of an envelope, or NULL. */
const char *transfer_meta_name(const json_t *doc);

#endif
