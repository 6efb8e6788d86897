/* rbac.c: reading the policy file and deciding whether an action is allowed. */
#include "auth/rbac.h"

#include "base/buf.h"
#include "codec/yaml_codec.h"
#include "config/config.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rbac_policy {
    json_t *actions;       /* object: name -> description */
    json_t *authenticated; /* array of names */
    json_t *self;          /* array of names */
    json_t *roles;         /* object: role -> {description, actions: [names], own: [names],
                              policy_groups: [patterns]} */
    json_t *role_groups;   /* object: role -> its policy_groups joined by commas */
};

const json_t *rbac_actions(const struct rbac_policy *policy)
{
    return policy->actions;
}

void rbac_policy_free(struct rbac_policy *p)
{
    if (!p)
        return;
    json_decref(p->actions);
    json_decref(p->authenticated);
    json_decref(p->self);
    json_decref(p->roles);
    json_decref(p->role_groups);
    free(p);
}

static int is_string_array(const json_t *v)
{
    size_t i;
    json_t *item;
    if (!json_is_array(v))
        return 0;
    json_array_foreach (v, i, item)
        if (!json_is_string(item))
            return 0;
    return 1;
}

#define GROUP_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-"

int rbac_group_pattern_ok(const char *pattern)
{
    size_t n = strlen(pattern);
    return n > 0 && n <= 255 && strspn(pattern, GROUP_NAME_CHARS "*?") == n;
}

int rbac_group_name_ok(const char *name)
{
    size_t n = strlen(name);
    return n > 0 && n <= 255 && strspn(name, GROUP_NAME_CHARS) == n;
}

int rbac_group_matches(const char *patterns, const char *group)
{
    char one[256];
    for (const char *p = patterns; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n < sizeof(one)) {
            memcpy(one, p, n);
            one[n] = '\0';
            if (fnmatch(one, group, 0) == 0)
                return 1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/* A role's policy_groups: absent, or a non-empty list of patterns. */
static int check_role_groups(const char *role, const json_t *groups, struct purser_error *err)
{
    size_t i;
    json_t *item;
    if (!groups)
        return 0;
    if (!is_string_array(groups) || json_array_size(groups) == 0)
        return purser_error_set(err, PURSER_EINVAL,
                                "policy.roles.%s.policy_groups: must be a list of policy group "
                                "names or patterns",
                                role);
    json_array_foreach (groups, i, item)
        if (!rbac_group_pattern_ok(json_string_value(item)))
            return purser_error_set(err, PURSER_EINVAL,
                                    "policy.roles.%s.policy_groups[%zu]: '%.80s' is not a policy "
                                    "group name or pattern ([A-Za-z0-9._:-], * and ?)",
                                    role, i, json_string_value(item));
    return 0;
}

/* role -> its policy_groups joined by commas, for the roles that have them. */
static json_t *joined_role_groups(const json_t *roles)
{
    json_t *out = json_object(), *def, *item;
    const char *role;
    size_t i;
    json_object_foreach ((json_t *)roles, role, def) {
        json_t *groups = json_object_get(def, "policy_groups");
        struct buf b = BUF_INIT;
        if (!groups)
            continue;
        json_array_foreach (groups, i, item)
            buf_printf(&b, "%s%s", i ? "," : "", json_string_value(item));
        json_object_set_new(out, role, json_string(buf_cstr(&b)));
        buf_release(&b);
    }
    return out;
}

static int check_structure(const json_t *doc, struct purser_error *err)
{
    const char *key, *role;
    json_t *value, *def;
    int rc = 0;
    if (!json_is_object(doc))
        return purser_error_set(err, PURSER_EINVAL, "policy: must be a mapping");
    json_object_foreach ((json_t *)doc, key, value) {
        if (strcmp(key, "actions") && strcmp(key, "authenticated") && strcmp(key, "self") &&
            strcmp(key, "roles"))
            return purser_error_set(err, PURSER_EINVAL, "policy: unknown key '%s'", key);
    }
    if (!json_is_object(json_object_get(doc, "actions")))
        return purser_error_set(err, PURSER_EINVAL,
                                "policy.actions: must map names to descriptions");
    json_object_foreach (json_object_get(doc, "actions"), key, value) {
        if (!json_is_string(value))
            return purser_error_set(err, PURSER_EINVAL, "policy.actions.%s: needs a description",
                                    key);
    }
    if (!is_string_array(json_object_get(doc, "authenticated")))
        return purser_error_set(err, PURSER_EINVAL,
                                "policy.authenticated: must be a list of actions");
    if (!is_string_array(json_object_get(doc, "self")))
        return purser_error_set(err, PURSER_EINVAL, "policy.self: must be a list of actions");
    if (!json_is_object(json_object_get(doc, "roles")))
        return purser_error_set(err, PURSER_EINVAL, "policy.roles: must be a mapping of roles");
    json_object_foreach (json_object_get(doc, "roles"), role, def) {
        if (!json_is_object(def) || !is_string_array(json_object_get(def, "actions")))
            return purser_error_set(err, PURSER_EINVAL,
                                    "policy.roles.%s.actions: must be a list of actions", role);
        if (json_object_get(def, "own") && !is_string_array(json_object_get(def, "own")))
            return purser_error_set(err, PURSER_EINVAL,
                                    "policy.roles.%s.own: must be a list of actions", role);
        rc = check_role_groups(role, json_object_get(def, "policy_groups"), err);
        if (!rc && json_object_get(def, "people") &&
            !json_is_boolean(json_object_get(def, "people")))
            rc =
                purser_error_set(err, PURSER_EINVAL, "policy.roles.%s.people: true or false", role);
        json_object_foreach (def, key, value)
            if (!rc && strcmp(key, "description") && strcmp(key, "actions") && strcmp(key, "own") &&
                strcmp(key, "policy_groups") && strcmp(key, "people"))
                rc = purser_error_set(err, PURSER_EINVAL, "policy.roles.%s: unknown key '%s'", role,
                                      key);
        if (rc)
            break;
    }
    return rc;
}

int rbac_policy_parse(struct rbac_policy **out, const char *text, size_t len,
                      struct purser_error *err)
{
    json_t *docs = NULL, *doc;
    struct rbac_policy *p = NULL;
    int rc;

    *out = NULL;
    rc = yaml_codec_parse(&docs, text, len, NULL, err);
    if (!rc) {
        doc = json_array_get(docs, 0);
        if (json_array_size(docs) != 1)
            rc = purser_error_set(err, PURSER_EINVAL, "policy: must be one YAML document");
        else
            rc = check_structure(doc, err);
        if (!rc && !(p = calloc(1, sizeof(*p))))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (!rc) {
            p->actions = json_incref(json_object_get(doc, "actions"));
            p->authenticated = json_incref(json_object_get(doc, "authenticated"));
            p->self = json_incref(json_object_get(doc, "self"));
            p->roles = json_incref(json_object_get(doc, "roles"));
            p->role_groups = joined_role_groups(p->roles);
            *out = p;
        }
        json_decref(docs);
    }
    return rc;
}

int rbac_policy_load(struct rbac_policy **out, const char *path, struct purser_error *err)
{
    char *text = NULL;
    size_t len;
    int rc = file_read_all(&text, &len, path, 4 << 20, err);
    *out = NULL;
    if (!rc)
        rc = rbac_policy_parse(out, text, len, err);
    free(text);
    return rc;
}

static int list_has(const json_t *list, const char *name)
{
    size_t i;
    json_t *item;
    json_array_foreach (list, i, item)
        if (strcmp(json_string_value(item), name) == 0)
            return 1;
    return 0;
}

/* The first name in list that actions does not declare, or NULL. */
static const char *undeclared(const struct rbac_policy *p, const json_t *list)
{
    size_t i;
    json_t *item;
    json_array_foreach (list, i, item)
        if (!json_object_get(p->actions, json_string_value(item)))
            return json_string_value(item);
    return NULL;
}

/* Whether every route that uses action checks the owner (and at least one uses it). */
static int owner_checked(const struct rbac_use *used, size_t count, const char *action)
{
    int seen = 0;
    for (size_t i = 0; i < count; i++) {
        if (!used[i].action || strcmp(used[i].action, action) != 0)
            continue;
        if (!used[i].owner_checked)
            return 0;
        seen = 1;
    }
    return seen;
}

int rbac_policy_validate(const struct rbac_policy *p, const struct rbac_use *used, size_t count,
                         struct purser_error *err)
{
    const char *role, *bad;
    json_t *def, *item;
    size_t i;
    for (i = 0; i < count; i++)
        if (used[i].action && !json_object_get(p->actions, used[i].action))
            return purser_error_set(
                err, PURSER_EINVAL,
                "policy: the route table uses action '%s', which the policy does not declare",
                used[i].action);
    if ((bad = undeclared(p, p->authenticated)))
        return purser_error_set(err, PURSER_EINVAL, "policy.authenticated: unknown action '%s'",
                                bad);
    if ((bad = undeclared(p, p->self)))
        return purser_error_set(err, PURSER_EINVAL, "policy.self: unknown action '%s'", bad);
    json_object_foreach (p->roles, role, def) {
        json_t *actions = json_object_get(def, "actions");
        if (json_array_size(actions) == 0)
            return purser_error_set(err, PURSER_EINVAL, "policy.roles.%s: a role without actions",
                                    role);
        if ((bad = undeclared(p, actions)))
            return purser_error_set(err, PURSER_EINVAL, "policy.roles.%s: unknown action '%s'",
                                    role, bad);
        if ((bad = undeclared(p, json_object_get(def, "own"))))
            return purser_error_set(err, PURSER_EINVAL, "policy.roles.%s.own: unknown action '%s'",
                                    role, bad);
        json_array_foreach (json_object_get(def, "own"), i, item)
            if (!owner_checked(used, count, json_string_value(item)))
                return purser_error_set(err, PURSER_EINVAL,
                                        "policy.roles.%s.own: action '%s' is not one purser "
                                        "can limit to its owner (only routes that check the "
                                        "creator can; see fcgi/routes.c)",
                                        role, json_string_value(item));
    }
    return 0;
}

int rbac_role_exists(const struct rbac_policy *p, const char *role)
{
    return json_object_get(p->roles, role) != NULL;
}

int rbac_role_allows(const struct rbac_policy *p, const char *role, const char *action)
{
    json_t *def = json_object_get(p->roles, role);
    return def && list_has(json_object_get(def, "actions"), action);
}

/* 1 when the role holds action on everything or (`own`) on what its principal created. */
static int role_holds(const struct rbac_policy *p, const char *role, const char *action)
{
    json_t *def = json_object_get(p->roles, role);
    return rbac_role_allows(p, role, action) ||
           (def && list_has(json_object_get(def, "own"), action));
}

json_t *rbac_roles(const struct rbac_policy *p)
{
    json_t *out = json_object(), *def;
    const char *name;
    json_object_foreach (p->roles, name, def) {
        const char *d = json_string_value(json_object_get(def, "description"));
        json_object_set_new(out, name, json_string(d ? d : ""));
    }
    return out;
}

json_t *rbac_people_roles(const struct rbac_policy *p)
{
    json_t *out = json_array(), *def;
    const char *name;
    json_object_foreach (p->roles, name, def)
        if (json_is_true(json_object_get(def, "people")))
            json_array_append_new(out, json_string(name));
    return out;
}

const char *rbac_role_groups(const struct rbac_policy *p, const char *role)
{
    return json_string_value(json_object_get(p->role_groups, role));
}

/* The patterns a grant is limited to: the membership's, else the role's own, else NULL. */
static const char *grant_limit(const struct rbac_policy *p, const struct rbac_grant *g)
{
    return g->policy_groups ? g->policy_groups : rbac_role_groups(p, g->role);
}

/* Whether the grant reaches the target's policy group (any grant reaches a route without one). */
static int grant_reaches(const struct rbac_policy *p, const struct rbac_grant *g,
                         const struct rbac_target *t)
{
    const char *limit = t->policy_group ? grant_limit(p, g) : NULL;
    return !limit || rbac_group_matches(limit, t->policy_group);
}

int rbac_decide(const struct rbac_policy *p, const struct rbac_subject *s,
                const struct rbac_target *t, const char *action, enum rbac_scope *scope,
                struct purser_error *err)
{
    int own = 0, elsewhere = 0;
    if (scope)
        *scope = RBAC_ALL;
    if (s->server_admin || list_has(p->authenticated, action))
        return 0;
    if (t->user && s->is_user && s->name && strcmp(t->user, s->name) == 0 &&
        list_has(p->self, action))
        return 0;
    for (size_t i = 0; i < s->grant_count; i++) {
        const struct rbac_grant *g = &s->grants[i];
        json_t *def = json_object_get(p->roles, g->role);
        int reaches = grant_reaches(p, g, t);
        if (rbac_role_allows(p, g->role, action) && reaches)
            return 0;
        if (rbac_role_allows(p, g->role, action))
            elsewhere = 1; /* held, but on other policy groups */
        else if (reaches && def && list_has(json_object_get(def, "own"), action))
            own = 1;
    }
    if (own && scope) {
        *scope = RBAC_OWN;
        return 0;
    }
    if (elsewhere)
        return purser_error_set(err, PURSER_EDENIED,
                                "missing permission: action '%s' on policy group '%s'", action,
                                t->policy_group);
    return purser_error_set(err, PURSER_EDENIED, "missing permission: action '%s'", action);
}

int rbac_group_limits(const struct rbac_policy *p, const struct rbac_subject *s, const char *action,
                      char **out)
{
    struct buf b = BUF_INIT;
    int any = 0;
    *out = NULL;
    if (s->server_admin || list_has(p->authenticated, action))
        return 0;
    for (size_t i = 0; i < s->grant_count; i++)
        if (role_holds(p, s->grants[i].role, action) && !grant_limit(p, &s->grants[i]))
            return 0;
    for (size_t i = 0; i < s->grant_count; i++)
        if (role_holds(p, s->grants[i].role, action) &&
            buf_printf(&b, "%s%s", any++ ? "," : "", grant_limit(p, &s->grants[i]))) {
            buf_release(&b);
            return PURSER_EINTERNAL;
        }
    if (any && !(*out = strdup(buf_cstr(&b)))) {
        buf_release(&b);
        return PURSER_EINTERNAL;
    }
    buf_release(&b);
    return 0;
}

int rbac_group_within(const char *mine, const char *pattern)
{
    size_t n = strlen(pattern);
    for (const char *p = mine; *p;) {
        size_t len = strcspn(p, ",");
        if ((len == n && !strncmp(p, pattern, n)) || (len == 1 && *p == '*'))
            return 1;
        p += len + (p[len] == ',');
    }
    return !strpbrk(pattern, "*?") && rbac_group_matches(mine, pattern);
}

/* Appends to b (comma-separated) each pattern of from that is within other. */
static int keep_within(struct buf *b, const char *from, const char *other)
{
    char one[256];
    for (const char *p = from; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(one, sizeof(one), "%.*s", (int)n, p);
        p += n + (p[n] == ',');
        if (n < sizeof(one) && rbac_group_within(other, one) &&
            !rbac_group_within(buf_cstr(b), one) && buf_printf(b, "%s%s", b->len ? "," : "", one))
            return PURSER_EINTERNAL;
    }
    return 0;
}

int rbac_group_common(const char *a, const char *b, char **out)
{
    struct buf common = BUF_INIT;
    int rc = 0;
    *out = NULL;
    if (!a || !b) {
        const char *one = a ? a : b;
        return one && !(*out = strdup(one)) ? PURSER_EINTERNAL : 0;
    }
    rc = keep_within(&common, a, b);
    if (!rc)
        rc = keep_within(&common, b, a);
    if (!rc && !(*out = strdup(buf_cstr(&common))))
        rc = PURSER_EINTERNAL;
    buf_release(&common);
    return rc;
}

/* *limit (malloc'd) narrowed to what it has in common with patterns. */
static int narrow_within(const char *patterns, char **limit)
{
    char *common = NULL;
    int rc = rbac_group_common(*limit, patterns, &common);
    free(*limit);
    *limit = common;
    return rc;
}

/* Narrows *limit (malloc'd patterns; NULL: every group) to where the maker holds action, or,
 * when it does not hold it, holds making (what it makes holds more than it does: a validator's
 * node). */
static int narrow_to(const struct rbac_policy *p, const struct rbac_subject *maker,
                     const char *action, const char *making, char **limit)
{
    char *reach = NULL;
    int held = list_has(p->authenticated, action);
    int rc;
    for (size_t i = 0; i < maker->grant_count; i++)
        held |= role_holds(p, maker->grants[i].role, action);
    rc = rbac_group_limits(p, maker, held ? action : making, &reach);
    if (!rc && reach) {
        rc = narrow_within(reach, limit);
        free(reach);
    }
    return rc;
}

int rbac_made_limit(const struct rbac_policy *p, const struct rbac_subject *maker, const char *role,
                    const char *making, char **out, struct purser_error *err)
{
    json_t *def = json_object_get(p->roles, role), *item;
    const char *lists[] = {"actions", "own"}, *own = rbac_role_groups(p, role);
    size_t i;
    int rc = 0;
    *out = NULL;
    if (maker->server_admin)
        return 0;
    rc = narrow_to(p, maker, making, making, out);
    for (size_t l = 0; l < 2; l++)
        json_array_foreach (json_object_get(def, lists[l]), i, item)
            if (!rc)
                rc = narrow_to(p, maker, json_string_value(item), making, out);
    if (!rc && *out && own) /* and within the role's own groups */
        rc = narrow_within(own, out);
    if (rc) {
        free(*out);
        *out = NULL;
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (*out && !**out) {
        free(*out);
        *out = NULL;
        return purser_error_set(err, PURSER_EDENIED,
                                "the policy groups you hold %s on and those you hold a %s's "
                                "actions on%s%.100s%s have none in common: what you make would "
                                "reach none",
                                making, role, own ? " (and its own, " : "", own ? own : "",
                                own ? ")" : "");
    }
    return 0;
}

int rbac_grant_within(const struct rbac_policy *p, const struct rbac_subject *maker,
                      const struct rbac_grant *grant, const char *making, struct purser_error *err)
{
    const char *has = grant_limit(p, grant);
    char *need = NULL, one[256];
    int rc = rbac_made_limit(p, maker, grant->role, making, &need, err);
    if (!rc && need && !has)
        rc = purser_error_set(err, PURSER_EDENIED,
                              "its role %s holds every policy group, and your %s only %.120s",
                              grant->role, making, need);
    for (const char *q = has; !rc && need && q && *q;) {
        size_t n = strcspn(q, ",");
        snprintf(one, sizeof(one), "%.*s", (int)n, q);
        q += n + (q[n] == ',');
        if (!rbac_group_within(need, one))
            rc = purser_error_set(err, PURSER_EDENIED,
                                  "its role %s holds policy groups '%.80s', beyond yours for "
                                  "%s (%.120s)",
                                  grant->role, one, making, need);
    }
    free(need);
    return rc;
}
