/* rbac.h: the RBAC policy (roles to actions) and the one decision function.
 *
 * The policy file (policies/default.yaml) declares every action with a description, the
 * actions every authenticated principal holds (`authenticated`), the actions a user holds
 * on its own /users/{user} paths (`self`), and the roles an organization can grant, each
 * with its actions and, under `own`, the actions it holds only on the objects its principal
 * created (a node client changes its own node and no other), and under `policy_groups` the
 * policy groups it holds its actions on when a route names one (a release role on "prod").
 * Server admins hold every action. The policy is loaded once per worker (at start and on
 * SIGHUP); a decision is a few lookups in memory.
 */
#ifndef PURSER_RBAC_H
#define PURSER_RBAC_H

#include "base/err.h"

#include <stddef.h>

struct rbac_policy;

/* Loads and checks the structure of a policy file. */
int rbac_policy_load(struct rbac_policy **out, const char *path, struct purser_error *err);
int rbac_policy_parse(struct rbac_policy **out, const char *text, size_t len,
                      struct purser_error *err);
void rbac_policy_free(struct rbac_policy *policy);

/* An action as a route uses it: owner_checked when the route's handler limits it to the
 * objects the principal created whenever the decision says RBAC_OWN. */
struct rbac_use {
    const char *action;
    int owner_checked;
};

/* Checks the policy against the actions the route table uses: every used action is declared,
 * every action a role or list names is declared, no role is without actions, and an action a
 * role holds under `own` is used only by routes that check the owner (else `own` would grant
 * it on everything). The message names the first problem. */
int rbac_policy_validate(const struct rbac_policy *policy, const struct rbac_use *used,
                         size_t count, struct purser_error *err);

/* 1 when role is one the policy defines. */
int rbac_role_exists(const struct rbac_policy *policy, const char *role);

struct json_t;
/* The declared actions: an object of name -> description (borrowed, in the file's order). */
const struct json_t *rbac_actions(const struct rbac_policy *policy);

/* The roles an organization can grant: a new object of name -> description ("" when the file
 * gives none), in the file's order. */
struct json_t *rbac_roles(const struct rbac_policy *policy);

/* The roles the policy marks for people (`people: true`), which a user is offered: a new array
 * of names, in the file's order. The others are machines' (nodes, validators, clusters). */
struct json_t *rbac_people_roles(const struct rbac_policy *policy);

/* The role's own policy group patterns from the policy file (comma-separated), or NULL. */
const char *rbac_role_groups(const struct rbac_policy *policy, const char *role);

/* 1 when the role grants action. */
int rbac_role_allows(const struct rbac_policy *policy, const char *role, const char *action);

/* A role held in an organization, limited to policy groups or not. policy_groups: the
 * membership's comma-separated glob patterns ("dev*,staging"), or NULL for the role's own
 * limit in the policy file (a role's `policy_groups`), or none: every group. */
struct rbac_grant {
    const char *role;
    const char *policy_groups;
};

/* Who asks: a server admin, or a user or client with its grants in the target organization. */
struct rbac_subject {
    int server_admin;
    int is_user;
    const char *name;
    const struct rbac_grant *grants;
    size_t grant_count;
};

/* What the route touches: the {user} of the path, and the policy group whose pointers it
 * reads or moves ({group}; NULL for a route about no one group). A grant limited to policy
 * groups holds its actions on a route with a group only when a pattern matches the group; on
 * other routes the limit does not apply (a list of groups is filtered by its handler). */
struct rbac_target {
    const char *user;
    const char *policy_group;
};

/* A policy group name pattern as grants take it: a group name's characters ([A-Za-z0-9._:-])
 * with '*' and '?' as globs, 1 to 255 characters. */
int rbac_group_pattern_ok(const char *pattern);

/* 1 when name is a policy group name as a grant's check takes it ([A-Za-z0-9._:-], 1 to 255). */
int rbac_group_name_ok(const char *name);

/* 1 when group matches one of the comma-separated patterns ("" matches none). */
int rbac_group_matches(const char *patterns, const char *group);

/* The policy groups the subject holds action on (on everything or `own`), when only limited
 * grants hold it: *out gets
 * their patterns joined by commas (the caller frees it); NULL when a grant holds it on every
 * group, or no grant holds it. PURSER_EINTERNAL when out of memory. */
int rbac_group_limits(const struct rbac_policy *policy, const struct rbac_subject *subject,
                      const char *action, char **out);

/* 1 when pattern is within mine (comma-separated patterns): one of them, a plain group name
 * one of them matches, or anything when one of them is "*". */
int rbac_group_within(const char *mine, const char *pattern);

/* What patterns a and b (comma-separated; NULL: every group) have in common, approximated from
 * below (the patterns of each within the other): *out (the caller frees it; "" when none, NULL
 * when both are NULL). PURSER_EINTERNAL when out of memory. */
int rbac_group_common(const char *a, const char *b, char **out);

/* A limit binds what its holder makes (docs/operator/identity.md, "Grants by policy group"): the
 * policy groups a grant of role, made by maker through the action making (create_client,
 * write_cluster...), must be limited to. Each action the role holds (on everything or `own`), and
 * making itself, narrows it to the groups the maker holds that action on (or, for an action the
 * maker does not hold, making on). *out: the patterns joined by commas (the caller frees them),
 * NULL when the maker is limited on none of them (no limit); PURSER_EDENIED naming why when what
 * they have in common is no group. */
int rbac_made_limit(const struct rbac_policy *policy, const struct rbac_subject *maker,
                    const char *role, const char *making, char **out, struct purser_error *err);

/* 0 when grant (another principal's) reaches no further than one maker could make through
 * making (rbac_made_limit): so that maker may give that principal a credential.
 * PURSER_EDENIED naming the role and the patterns beyond the maker's otherwise. */
int rbac_grant_within(const struct rbac_policy *policy, const struct rbac_subject *maker,
                      const struct rbac_grant *grant, const char *making, struct purser_error *err);

/* How far an allowed action reaches: everything, or only the objects the subject created. */
enum rbac_scope { RBAC_ALL, RBAC_OWN };

/* 0 when subject may perform action on target, with *scope saying on what (scope may be
 * NULL: then only RBAC_ALL counts as allowed); PURSER_EDENIED with "missing permission:
 * action 'NAME'" otherwise. */
int rbac_decide(const struct rbac_policy *policy, const struct rbac_subject *subject,
                const struct rbac_target *target, const char *action, enum rbac_scope *scope,
                struct purser_error *err);

#endif
