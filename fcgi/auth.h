/* auth.h: who is asking (authentication) and whether they may (RBAC), before any handler. */
#ifndef PURSER_AUTH_H
#define PURSER_AUTH_H

#include "auth/rbac.h"
#include "request.h"

/* Reads X-Ops-Server-API-Version into req->api_version: HTTP_ENOTACCEPT (406, with Chef's
 * body already sent) when it is not a version purser speaks. */
int auth_api_version(struct request *req);

/* 1 when the route is answered without credentials: an open route, or a loopback one
 * (ROUTE_LOOPBACK) asked from loopback. */
int auth_open_route(struct request *req);

/* Establishes req->who from a bearer token, a Chef signed request, or (development mode, from
 * loopback) as a server admin. PURSER_EUNAUTH / PURSER_EINVAL with Chef's messages. */
int auth_authenticate(struct request *req, int development_mode);

/* Checks the route's action for req->who in the organization of the URL; logs a denial. */
int auth_authorize(struct request *req, const struct rbac_policy *policy);

/* The organization a request acts in: its {org} path parameter, or for the Deckhand paths
 * under /api/v1.0/ the configured documents.default_organization. NULL for server routes. */
const char *request_org(const struct request *req);

/* 1 when the authenticated principal also holds action (a check inside a handler, such as
 * read_encrypted_document); nothing is logged. */
int auth_allows(struct request *req, const char *action);

/* 0 when the principal holds action (on group); PURSER_EDENIED (logged, req->err filled)
 * otherwise, in Chef's words ("missing update permission") on a Chef route about a group. */
int auth_require(struct request *req, const char *action);

/* PURSER_EDENIED for action, logged and said as auth_require says it, for a handler that
 * decided once (auth_allows) and learns later that the request needed it. */
int auth_refused(struct request *req, const char *action);
int auth_require_group(struct request *req, const char *action, const char *group);

/* Which policy groups the caller holds action on, read once for the many groups of one answer:
 * held (0: no group), and patterns (comma-separated, in the arena; NULL: every group) when only
 * grants limited to policy groups hold it. auth_group_reaches says whether it covers group. */
struct group_reach {
    int held;
    const char *patterns;
};
void auth_group_reach(struct request *req, const char *action, struct group_reach *out);
int auth_group_reaches(const struct group_reach *reach, const char *group);

/* 1 when the caller holds action only through grants limited to policy groups (so that what
 * the action touches in a group must be checked against the group). */
int auth_group_limited(struct request *req, const char *action);

/* 1 when a route whose path names a policy group (ROUTE_GROUP) uses action: the actions a
 * grant limited to policy groups holds only on them. */
int auth_group_action(const char *action);

/* A limit binds what its holder makes (docs/operator/identity.md, "Grants by policy group").
 * made_limit: the policy group patterns (*out in the arena; NULL: none) a grant of role made now by
 * the caller, through the route's action, is limited to; PURSER_EDENIED (logged, naming why) when
 * the caller's limits leave it no group. made_within: 0 when every grant of principal_id in
 * the organization reaches no further than one the caller could make so (a key for it is
 * then the caller's to give); PURSER_EDENIED naming what (`what`: "client 'web1'") and why. */
int auth_made_limit(struct request *req, const char *role, const char **out);
int auth_made_within(struct request *req, long long principal_id, const char *what);

/* What the caller may do in the path's organization, from the RBAC policy: {actions: [the
 * actions allowed on everything], own: [those allowed only on what the caller created],
 * policy_groups: {action: [patterns]} for the policy group actions its grants hold only on
 * some groups}. */
json_t *auth_actions(struct request *req);

#endif
