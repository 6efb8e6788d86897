/* transfer.h: an organization exported as a stream of resources, and imported again into an
 * empty one (issue 13, items 4 and 5), for `GET/POST /organizations/{org}/export|import` and
 * `purser export|import`.
 *
 * The stream is a list of documents in the resource envelope, {kind, version: v1, metadata:
 * {name, ...}, spec}, in dependency order: Organization, Member (with the user and the
 * user's public keys), Client (with public keys; not the organization's own validator, which
 * every organization gets when made), PolicyRevision ("<policy>/<revision id>", the lock),
 * PolicyGroup (its pointers), Node, CookbookArtifact ("<name>/<identifier>", the manifest and
 * every file's content in base64), DocumentBucket (the latest revision's documents of that
 * bucket), RevisionTag and Validation (of the latest revision), then each kind of the resource
 * convention the registry (lib/registry) lists with export and import hooks, in its order:
 * Cluster (with its dynamic facts). No times, no revision ids of the store, no secret: token
 * and private keys never;
 * encrypted documents' data only with secrets (else their names are listed as redacted, and
 * such a stream cannot be imported).
 */
#ifndef PURSER_TRANSFER_H
#define PURSER_TRANSFER_H

#include "base/arena.h"
#include "base/err.h"
#include "store/store.h"

#include <jansson.h>

struct keyring;

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

/* The organization's stream: *out is a JSON array of documents. */
int transfer_export(const struct transfer_ctx *c, json_t **out, struct purser_error *err);

/* Checks the whole stream (known kinds, the envelope, names, no duplicate, every reference
 * found in it), then writes it into c->org, which must be empty (PURSER_EEXISTS otherwise:
 * nothing but its validator and members), in one transaction: all or nothing. An error
 * names the document ("document 7 (Node web1): ...") and the field. *summary: {imported:
 * {kind: count}, left_out?: [{bucket, schema, name}]}, left_out the encrypted documents an
 * export without secrets named as redacted: not imported, for the operator to supply. */
int transfer_import(const struct transfer_ctx *c, const json_t *docs, json_t **summary,
                    struct purser_error *err);

#endif
