/* identity.h: organizations, users, clients, their keys and tokens, and memberships.
 *
 * Everything is stored in MariaDB (sql/0002_identity.sql). Functions that answer an API call
 * return its JSON body in Chef's shapes through `json_t **out` (a new reference the caller
 * owns); `links` makes Chef's "uri" fields (base/links.h: the caller's, who owns the API's
 * paths; NULL: null).
 * Input bodies are borrowed. Validation failures are PURSER_EINVAL with Chef-style messages
 * ("Field 'name' invalid"); names that exist are PURSER_EEXISTS; missing ones
 * PURSER_ENOTFOUND. Every write is one transaction; its `actor` (the authenticated principal's
 * name, or the server's own "purser ...") is who its events name.
 */
#ifndef PURSER_IDENTITY_H
#define PURSER_IDENTITY_H

#include "auth/rbac.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/links.h"
#include "base/lru.h"
#include "resource/resource.h"
#include "store/store.h"

#include <jansson.h>

/* ---- the resource convention on identity (docs/inventory.md, identity_resource.c) ----
 *
 * Organizations, users, clients, an organization's members and a user's tokens are kinds of
 * the convention: Chef's routes keep Chef's shapes, and on the same routes every single object
 * has a revision (its ETag), a write may be conditional on it, and a list asked for a page
 * answers the convention's {items, next_page_token} of envelopes: */
extern const struct resource_kind identity_org_kind, identity_user_kind, identity_client_kind,
    identity_member_kind, identity_token_kind;

/* Their part in an organization's export and import (lib/resource/transfer_hooks.h;
 * identity_transfer.c): the Organization (labels, full name, external ids), its Members (with
 * the user and the user's public keys) and its Clients (with public keys; not the
 * organization's own validator, which every organization gets when made). */
struct transfer_hooks;
extern const struct transfer_hooks identity_org_transfer, identity_member_transfer,
    identity_client_transfer;

struct principal;

/* A list: whose, and the convention's parameters (q: page_size, page_token, labels, filter,
 * sort; labels and filter narrow a Chef-shaped list too). */
struct identity_list {
    const char *org;             /* clients, members: the organization */
    const struct principal *who; /* organizations: who asks (NULL or a server admin: all) */
    long long principal_id;      /* tokens: whose */
    struct resource_query q;
};

/* A page of the kind k (one of the five above) as the convention's page text in out. What has
 * expired in the list's scope is deleted first, with its events. */
int identity_page(const struct resource_kind *k, struct store *store, struct arena *arena,
                  const struct identity_list *l, struct buf *out, struct purser_error *err);

/* 1 when l (may be NULL) narrows a list (labels or filter given). */
int identity_narrowed(const struct identity_list *l);

/* The names l's labels and filter select (sorted, for identity_keep), or *names NULL when l
 * narrows nothing; the 400 naming a bad parameter otherwise. */
int identity_selection(const struct resource_kind *k, struct store *store, struct arena *arena,
                       const struct identity_list *l, const char ***names, size_t *count,
                       struct purser_error *err);

/* 1 when name is among names (NULL names: every name is). */
int identity_keep(const char **names, size_t count, const char *name);

/* Deletes the expired users (kind "user", scope 0), clients of the organization scope, or
 * tokens of the principal scope (scope IDENTITY_ANY_SCOPE: every organization's clients, every
 * principal's tokens, the background sweep's) (name: only that one; NULL: up to 100, the
 * longest expired first), each with its event {op: delete, reason: expired, expires} in its
 * organizations (as actor "purser"); a client's tokens go with it. A cheap read first; a
 * failure is logged. */
#define IDENTITY_ANY_SCOPE (-1LL)
int identity_expire(struct store *store, const char *kind, long long scope, const char *name);

/* A write's condition and its answer's ETag: if_match (NULL: none, as Chef's tools send) is
 * checked against the row's revision in the write's transaction (412 when stale); with merge
 * the body is an RFC 7396 merge patch of what GET answers; revision gets the revision after
 * the write (arena memory). */
struct identity_cond {
    const char *if_match;
    int merge;
    const char *revision;
};

/* An authenticated user or client. Strings live in the arena of the lookup. */
struct principal {
    long long id;
    int is_user;
    long long org_id; /* clients: their organization; users: 0 */
    const char *name;
    int server_admin;
    /* When the credential that authenticated it stops being taken (a token's or the principal's
     * expiry, the nearest of a Chef-signed request's keys), in ms of this host's CLOCK_REALTIME;
     * 0 when not within the hour (what a long wait of the event feed must not outlive). */
    long long expires_ms;
};

/* The lookups below take an optional per-worker cache (NULL: none). What they find is kept
 * for the cache's TTL at most: a revoked token, a removed key or a changed role empties the
 * caches at once on the host that made the change (identity_cache_clear) and within a second
 * on the others (identity_changes_*). A token or key that expires within the hour is not kept. */
void identity_cache_clear(struct lru *cache);

/* Every change of credentials, memberships or grants is noted in the database (a row of
 * auth_changes), so that the workers of every host, which read the newest note's id at most
 * once a second (identity_changes_newest), empty their caches when it moved: a revocation made
 * through another host or with the purser command takes effect within a second, not the
 * cache's TTL. */
int identity_changes_note(struct store *store, struct purser_error *err);
int identity_changes_newest(struct store *store, struct arena *arena, long long *newest,
                            struct purser_error *err);

/* For authentication: the client of org named name (when org is not NULL and such a client
 * exists), else the user named name, with its public keys that have not expired
 * (*keys: arena array of PEM strings). PURSER_ENOTFOUND when there is neither. */
int identity_requestor(struct store *store, struct lru *cache, struct arena *arena, const char *org,
                       const char *name, struct principal *out, const char ***keys,
                       size_t *key_count, struct purser_error *err);

/* For bearer authentication: the principal holding token. PURSER_EUNAUTH when the token is
 * unknown or expired. Records the time of use (at most once a minute). */
int identity_token_principal(struct store *store, struct lru *cache, struct arena *arena,
                             const char *token, struct principal *out, struct purser_error *err);

/* The principal's grants in the organization named org: each role with the policy groups the
 * membership limits it to (arena array; none when not a member). */
int identity_roles(struct store *store, struct lru *cache, struct arena *arena,
                   long long principal_id, const char *org, struct rbac_grant **grants,
                   size_t *count, struct purser_error *err);

/* Policy group patterns as memberships store them ("dev*,staging") and as the API shows them
 * (a list): split gives a new array; join a new string (NULL when out of memory or empty). */
json_t *identity_split_groups(const char *joined);
char *identity_join_groups(const json_t *patterns);

/* The id of the organization named org; PURSER_ENOTFOUND "organization 'x' does not exist". */
int identity_org_id(struct store *store, struct arena *arena, const char *org, long long *id,
                    struct purser_error *err);

/* Names: organizations and users ^[a-z0-9][a-z0-9_-]{0,254}$, clients and keys
 * ^[A-Za-z0-9_.-]{1,255}$. */
int identity_name_ok(const char *name, int allow_upper_and_dot);

/* Organizations. list: {name: uri} of every organization (server admins) or those `who` is a
 * member of, narrowed by narrow's labels and filter (may be NULL; its who is who).
 * create: {name, full_name, labels, external_ids, sub_kind} -> {uri, clientname, private_key}
 * with the ORG-validator client and its generated key. get shows labels, external_ids and
 * sub_kind (when set), and *revision (may be NULL) gets its revision; update changes
 * full_name, labels, external_ids and sub_kind (an external id is one organization's: 409;
 * an organization does not expire: expires is 400). */
int identity_org_list(struct store *store, struct arena *arena, const struct principal *who,
                      const struct identity_list *narrow, const struct links *links, json_t **out,
                      struct purser_error *err);
int identity_org_create(struct store *store, const char *actor, const json_t *body,
                        const struct links *links, json_t **out, struct purser_error *err);
/* An organization's users with their roles, and its clients (not its own validator), with
 * profiles and public keys, as an export carries them: *members [{name, roles, user: {...,
 * labels, active, keys}}], *clients [{name, validator, labels, active, keys}], keys
 * [{name, public_key, expiration_date}]. */
int identity_org_principals(struct store *store, struct arena *arena, const char *org,
                            json_t **members, json_t **clients, struct purser_error *err);
int identity_org_get(struct store *store, struct arena *arena, const char *org, json_t **out,
                     const char **revision, struct purser_error *err);
int identity_org_update(struct store *store, const char *actor, struct arena *arena,
                        const char *org, const json_t *body, struct identity_cond *cond,
                        json_t **out, struct purser_error *err);
/* What organization oid (named org) holds besides its validator client and its members, the
 * one list an organization's delete and an import into it ask: contents (emptied first) gets
 * {kind: count} of the kinds it holds (each resource kind's plural, "clusters"; nodes,
 * policies, policy_groups, cookbook_artifacts, document_revisions, clients, files (uploaded),
 * sandboxes), *held the same in words ("2 clusters, 1 node", arena memory), NULL for none. */
int identity_org_contents(struct store *store, struct arena *arena, long long oid, const char *org,
                          json_t *contents, const char **held, struct purser_error *err);

/* Deletes the organization named org with everything in it (the SQL cascades, its events
 * too); *out is what get showed of it. What it holds besides its validator client and its
 * members is counted first, in the same transaction, which holds back new rows of the
 * organization until it ends: *contents (may be NULL; a new reference, always set) gets
 * {kind: count} of the kinds it holds (identity_org_contents), {} for none. When it holds any and
 * force is 0, nothing changes: PURSER_EEXISTS "organization 'acme' is not empty: 2 clusters, 1
 * node". */
int identity_org_delete(struct store *store, struct arena *arena, const char *org, int force,
                        const char *if_match, json_t **out, json_t **contents,
                        struct purser_error *err);

/* Users (org NULL) and clients (org named). create takes Chef's body (username or name,
 * display_name, first_name, last_name, email, public_key, create_key, validator; labels,
 * active, sub_kind, expires) and returns {uri, chef_key: {name, public_key, expiration_date,
 * uri, private_key?}}. When neither public_key is given nor create_key is false, a key pair is
 * generated and the private key is in the answer, once. list narrows by narrow (may be NULL);
 * an expired user or client is gone (404, not listed, refused by authentication). */
int identity_principal_list(struct store *store, struct arena *arena, const char *org,
                            const struct identity_list *narrow, const struct links *links,
                            json_t **out, struct purser_error *err);
int identity_principal_create(struct store *store, const char *actor, const char *org,
                              const json_t *body, const char *limit, const struct links *links,
                              json_t **out, struct purser_error *err);
/* The role a client created with body gets in its organization: "validator" when body's
 * validator is true, else "node". create's limit (NULL: none) is that membership's policy
 * group patterns ("dev*,staging"): what a member limited to them made reaches no further. */
const char *identity_client_role(const json_t *body);
int identity_principal_get(struct store *store, struct arena *arena, const char *org,
                           const char *name, json_t **out, const char **revision,
                           struct purser_error *err);
int identity_principal_update(struct store *store, const char *actor, struct arena *arena,
                              const char *org, const char *name, const json_t *body,
                              struct identity_cond *cond, json_t **out, struct purser_error *err);
int identity_principal_delete(struct store *store, const char *actor, struct arena *arena,
                              const char *org, const char *name, const char *if_match, json_t **out,
                              struct purser_error *err);

/* Chef's principals endpoint: the client of org named name and the user named name, as
 * [{name, type: client|user, public_key, authz_id, org_member}] (client first; empty when
 * there is neither). public_key is the key named "default", else the oldest that has not
 * expired (null when none); authz_id is a stable 32-hex id of the principal; org_member is
 * true for the client and for a user that is a member of org. PURSER_ENOTFOUND when org does
 * not exist. */
int identity_principal_lookup(struct store *store, struct arena *arena, const char *org,
                              const char *name, json_t **out, struct purser_error *err);

/* The id of the user (org NULL) or client named name. */
int identity_principal_id(struct store *store, struct arena *arena, const char *org,
                          const char *name, long long *id_out, struct purser_error *err);

/* Keys of a principal (Chef's keys API). keys_uri is the URL of the keys collection. */
int identity_key_list(struct store *store, struct arena *arena, long long principal_id,
                      const char *keys_uri, json_t **out, struct purser_error *err);
int identity_key_create(struct store *store, const char *actor, long long principal_id,
                        const json_t *body, const char *keys_uri, json_t **out,
                        struct purser_error *err);
int identity_key_get(struct store *store, struct arena *arena, long long principal_id,
                     const char *key, json_t **out, struct purser_error *err);
int identity_key_update(struct store *store, const char *actor, struct arena *arena,
                        long long principal_id, const char *key, const json_t *body, json_t **out,
                        struct purser_error *err);
int identity_key_delete(struct store *store, const char *actor, struct arena *arena,
                        long long principal_id, const char *key, json_t **out,
                        struct purser_error *err);

/* Bearer tokens of a user. create: {description?, expires_in? (seconds)} -> {id, token,
 * description, created_at, expires_at}: the token itself appears only here. list never shows
 * tokens. */
int identity_token_create(struct store *store, const char *actor, long long principal_id,
                          const json_t *body, json_t **out, struct purser_error *err);
int identity_token_list(struct store *store, struct arena *arena, long long principal_id,
                        const struct identity_list *narrow, json_t **out, struct purser_error *err);
/* Inside the caller's transaction: the client `name` of organization org (made when missing,
 * with role, limited to the policy group patterns limit, NULL: none; a client made again gets
 * that limit too) holds only public_key and one API token for bearer, replacing what it had; a
 * credential made again (a cluster's bootstrap token reset and redeemed). A client of that name
 * that is not own_id (the one made before; 0: none) is not taken over: PURSER_EEXISTS.
 * *client_id and token_id (the token's id) are set. */
int identity_client_credential(struct store *store, const char *org, const char *name,
                               const char *role, const char *limit, const char *public_key,
                               const char *bearer, const char *description, long long own_id,
                               long long *client_id, char token_id[17], struct purser_error *err);

/* Inside the caller's transaction: removes the client client_id of organization org_id (when
 * it is still there) with its keys, tokens and memberships, and appends the events of the
 * client's and each token's deletion (a cluster's credential, when the cluster is deleted). */
int identity_client_remove(struct store *store, const char *actor, long long org_id,
                           long long client_id, struct purser_error *err);

/* PATCH of a token: {active, labels} only; *out is the token as listed. */
int identity_token_update(struct store *store, const char *actor, struct arena *arena,
                          long long principal_id, const char *id, const json_t *body,
                          struct identity_cond *cond, json_t **out, struct purser_error *err);
int identity_token_delete(struct store *store, const char *actor, long long principal_id,
                          const char *id, const char *if_match, struct purser_error *err);

/* Members of an organization: list [{user: {username, roles}}]; add {username, roles?}
 * (default role "reader"; roles checked against valid_role); remove a user. */
int identity_member_list(struct store *store, struct arena *arena, const char *org,
                         const struct identity_list *narrow, json_t **out,
                         struct purser_error *err);
int identity_member_add(struct store *store, const char *actor, const char *org, const json_t *body,
                        int (*valid_role)(const char *role, void *ctx), void *ctx, json_t **out,
                        struct purser_error *err);
/* A client's roles in its organization set to body's {roles: [names], policy_groups?: {role:
 * [patterns] or null}} as an export wrote them (roles checked against valid_role, patterns as
 * a member's), replacing those it had; PURSER_EINVAL naming the field. */
int identity_client_roles_set(struct store *store, const char *org, const char *name,
                              const json_t *body, int (*valid_role)(const char *role, void *ctx),
                              void *ctx, struct purser_error *err);
int identity_member_remove(struct store *store, const char *actor, const char *org,
                           const char *user, struct purser_error *err);

/* For the purser command: makes name a server admin (or not). */
int identity_set_server_admin(struct store *store, const char *actor, const char *user, int admin,
                              struct purser_error *err);

#endif
