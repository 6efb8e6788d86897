/* cluster.h: clusters (SPEC §6, issue 12), a kind of the resource convention: spec
 * {display_name, facts, git_repo}, single-use bootstrap tokens, and dynamic facts reported by
 * the cluster itself and kept as versions. */
#ifndef PURSER_CLUSTER_H
#define PURSER_CLUSTER_H

#include "resource/resource.h"

/* The kind: deleting a cluster deletes, in the same transaction, the credential its
 * bootstrap token made (the client, its keys and tokens, with their events); an unredeemed
 * bootstrap token dies with the cluster. */
extern const struct resource_kind cluster_kind;

/* Checks spec.git_repo.select: {buckets: [names], labels: {key: value}}, the documents of the
 * cluster's catalog (lib/git/gitrepo.h); PURSER_EINVAL naming the field. */
int cluster_git_select_check(const json_t *select, struct purser_error *err);

/* What a cluster's id becomes: "c-" before the client's choice when it lacks it, or a
 * generated readable one ("c-quiet-river-4821") when none is given; a DNS label of at most 63
 * characters, else PURSER_EINVAL naming metadata.name. *out in the arena. */
int cluster_id(struct arena *arena, const char *given, const char **out, struct purser_error *err);

/* Creates a cluster from body (the convention's shape) with a bootstrap token valid for
 * ttl seconds, limited to the policy groups limit (the patterns of its maker's limit, NULL:
 * none), which the credential its redemption makes inherits. *out is the stored cluster plus
 * "bootstrap_token": {token, expires_at, install_url}: the only time the token is shown.
 * install_base: the API's URL. */
int cluster_create(const struct resource_scope *s, const json_t *body, long ttl, const char *limit,
                   const char *install_base, json_t **out, struct purser_error *err);

/* A new bootstrap token for the cluster (the old one stops working), limited as
 * cluster_create's (its maker's limit, not the cluster's creator's). *out is the cluster as a
 * creation answers it: its status with the new token's expiry, and "bootstrap_token": {token,
 * expires_at, install_url}, the only time the token is shown. */
int cluster_token_reset(const struct resource_scope *s, const char *name, long ttl,
                        const char *limit, const char *install_base, json_t **out,
                        struct purser_error *err);

/* Records facts (any JSON object) as the cluster's status.dynamic_facts and as a new version
 * in its history (author s->actor), keeping the newest `keep`. owner: when nonzero, the
 * principal that must be the cluster's own credential (403 otherwise). *out: the cluster. */
int cluster_facts_put(const struct resource_scope *s, const char *name, const json_t *facts,
                      long keep, long long owner, json_t **out, struct purser_error *err);

/* A page of the cluster's facts versions, newest first: {items: [{facts, author, created_at,
 * version}], next_page_token}. */
int cluster_facts_history(const struct resource_scope *s, const char *name, const char *page_size,
                          const char *page_token, long long owner, json_t **out,
                          struct purser_error *err);

/* The credential redeeming a bootstrap token makes for the cluster. */
struct cluster_credential {
    char *private_key; /* PEM of the new client's key: the manifest carries it */
    char *public_key;
    char *bearer; /* a new API token for the client */
};

/* Redeems token (64 hex characters) at once and only once: 400 when missing or malformed,
 * 401 "invalid token" when unknown, 401 "token already used or expired" after (of concurrent
 * redeems exactly one wins: the token's row is locked and marked in the transaction that
 * answers). The cluster's client (named after the cluster, role "cluster" in its
 * organization, limited to the token's policy groups) gets a new key pair and bearer token,
 * replacing any it had; *out is
 * {cluster, organization, client: {name, id, private_key}, token}. */
int cluster_redeem(struct store *store, struct arena *arena, const char *token, json_t **out,
                   struct purser_error *err);

/* The background sweep's step (fcgi/expiry.c): deletes up to 100 bootstrap tokens (used or
 * not) that expired more than grace seconds ago, the longest expired first; until then a
 * redemption still hears "token already used or expired", after it "invalid token". A token
 * is no resource and has no event of its own (the cluster's status keeps its expires_at).
 * *deleted gets how many. */
int cluster_tokens_expire(struct store *store, long grace, unsigned long long *deleted,
                          struct purser_error *err);

#endif
