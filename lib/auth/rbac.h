/* rbac.h: the RBAC policy (roles to actions) and the one decision function.
 *
 * The policy file (policies/default.yaml) declares every action with a description, the
 * actions every authenticated principal holds (`authenticated`), the actions a user holds
 * on its own /users/{user} paths (`self`), and the roles an organization can grant, each
 * with its actions and, under `own`, the actions it holds only on the objects its principal
 * created (a node client changes its own node and no other). Server admins hold every action. The policy is loaded once per worker
 * (at start and on SIGHUP); a decision is a few lookups in memory.
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

/* 1 when the role grants action. */
int rbac_role_allows(const struct rbac_policy *policy, const char *role, const char *action);

/* Who asks: a server admin, or a user or client with its roles in the target organization. */
struct rbac_subject {
    int server_admin;
    int is_user;
    const char *name;
    const char *const *roles;
    size_t role_count;
};

/* What the route touches: the {user} of the path, when it has one. */
struct rbac_target {
    const char *user;
};

/* How far an allowed action reaches: everything, or only the objects the subject created. */
enum rbac_scope { RBAC_ALL, RBAC_OWN };

/* 0 when subject may perform action on target, with *scope saying on what (scope may be
 * NULL: then only RBAC_ALL counts as allowed); PURSER_EDENIED with "missing permission:
 * action 'NAME'" otherwise. */
int rbac_decide(const struct rbac_policy *policy, const struct rbac_subject *subject,
                const struct rbac_target *target, const char *action, enum rbac_scope *scope,
                struct purser_error *err);

#endif
