/* oidc_provider.h: the IdentityProvider kind, server-wide (docs/operator/identity.md,
 * "Signing in with OpenID Connect").
 *
 * A provider is the resource envelope without an organization: {kind: IdentityProvider,
 * version: v1, metadata: {name, revision, labels, description, created_at, updated_at}, spec,
 * status}. spec:
 *   display_name     what the sign-in page's button says after "Sign in with" (default: name)
 *   issuer           the provider's issuer URL (https, or http on loopback)
 *   client_id        purser's client at the provider
 *   client_secret    written, sealed with the keyring and never shown again (status says
 *                    client_secret_set); a replace without it keeps the one stored
 *   scopes           requested; must include openid (default openid, profile, email)
 *   username_claim   the claim that names the user here (default preferred_username)
 *   groups_claim     the claim that lists the user's groups (default groups)
 *   session_seconds  how long a session lasts, 300 to 86400 (default 3600)
 *   mappings         [{value, organization, role, policy_groups?, claim?}]: when the claim
 *                    (default groups_claim; a string or a list of strings) has value (exact, or
 *                    a pattern with `*`), the user gets role in organization, limited to the
 *                    policy groups as a membership is ("dev*,staging")
 * Writes are a server admin's; each is an event in every organization its mappings name.
 */
#ifndef PURSER_OIDC_PROVIDER_H
#define PURSER_OIDC_PROVIDER_H

#include "base/arena.h"
#include "base/err.h"
#include "store/store.h"

#include <jansson.h>

struct keyring;

/* A provider as a sign-in uses it: strings in the arena of the load, spec a new reference. */
struct oidc_provider {
    long long id;
    const char *name;
    const char *issuer;
    const char *client_id;
    char *client_secret; /* opened; wiped by oidc_provider_release */
    size_t client_secret_len;
    json_t *spec;
};

/* Checks spec strictly (PURSER_EINVAL naming the field); creating: client_secret required. */
int oidc_provider_check_spec(const json_t *spec, int creating, struct purser_error *err);

struct rbac_policy;

/* 0 when every role body's spec.mappings name is a role of the policy file; PURSER_EINVAL
 * naming the first that is not (spec.mappings[N].role). A body whose mappings are not a list
 * of objects passes here (oidc_provider_check_spec refuses it). */
int oidc_provider_roles_check(const json_t *body, const struct rbac_policy *policy,
                              struct purser_error *err);

/* Its part in an organization's export and import (lib/resource/transfer_hooks.h): an export
 * carries an IdentityProvider document for each provider with a mapping to the organization,
 * with those mappings only, when transfer_ctx.identity_providers says its caller may read them.
 * The client secret is never in it (not even sealed: another server's keyring could not open
 * it). An import makes them when transfer_ctx.identity_providers says its caller may write them
 * (else each is a line of left_out), each mapping's role one of the policy file's: a provider
 * of that name already on this server is left as it is; otherwise it is made with its mappings
 * naming the organization and no client secret (no one signs in through it until
 * spec.client_secret is set again). Either way a line in left_out says what was not done:
 * {kind, name, field?, reason}. */
struct transfer_hooks;
extern const struct transfer_hooks oidc_provider_transfer;

/* Creates from a body {metadata: {name, labels?, description?}, spec}; *out the stored one. */
int oidc_provider_create(struct store *store, const char *actor, const struct keyring *ring,
                         const json_t *body, json_t **out, struct purser_error *err);

/* Replaces spec, labels and description; if_match (NULL: the body's metadata.revision) must be
 * the current revision (412 otherwise, resource_precondition's rule). */
int oidc_provider_replace(struct store *store, const char *actor, struct arena *arena,
                          const struct keyring *ring, const char *name, const json_t *body,
                          const char *if_match, json_t **out, struct purser_error *err);

/* The stored provider as the API shows it (no secret), or 404. */
int oidc_provider_get(struct store *store, struct arena *arena, const char *name, json_t **out,
                      struct purser_error *err);

/* Every provider, {items: [...]} in name order; public: only name and display_name each (the
 * sign-in page's buttons, asked before anyone is signed in). */
int oidc_provider_list(struct store *store, struct arena *arena, int public, json_t **out,
                       struct purser_error *err);

/* Deletes it with its sign-ins under way, its users' external ids, the memberships its
 * mappings granted and its sessions (their tokens), in one transaction. */
int oidc_provider_delete(struct store *store, const char *actor, struct arena *arena,
                         const char *name, const char *if_match, struct purser_error *err);

/* Loads a provider for a sign-in, its secret opened. by_id nonzero: by id, name ignored. */
int oidc_provider_load(struct store *store, struct arena *arena, const struct keyring *ring,
                       const char *name, long long by_id, struct oidc_provider *out,
                       struct purser_error *err);

/* Wipes the opened secret and drops spec. Accepts a zeroed provider. */
void oidc_provider_release(struct oidc_provider *p);

/* The organizations the provider's mappings name (for its events), from its spec. */
json_t *oidc_provider_orgs(const json_t *spec);

#endif
