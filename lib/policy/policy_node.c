/* policy_node.c: nodes (Chef's node objects in policy mode), in Chef's shapes. */
#include "policy/policy.h"
#include "policy/policy_private.h"
#include "store/events.h"

#include "auth/identity.h"
#include "base/json_text.h"
#include "policy/policy_lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- nodes --------------------------------------------------------------------------------- */

/* Checks a node body and fills Chef's defaults; *node is a new reference. */
static int node_normalize(const json_t *body, const char *url_name, json_t **node,
                          struct purser_error *err)
{
    static const char *const attribute_sets[] = {"normal", "default", "override", "automatic"};
    static const char *const policy_fields[] = {"policy_name", "policy_group"};
    const json_t *name = json_object_get(body, "name");
    *node = NULL;
    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "invalid JSON");
    if (!name)
        return purser_error_set(err, PURSER_EINVAL, "Field 'name' missing");
    if (!json_is_string(name) || !identity_name_ok(json_string_value(name), 1))
        return purser_error_set(err, PURSER_EINVAL, "Field 'name' invalid");
    if (url_name && strcmp(json_string_value(name), url_name) != 0)
        return purser_error_set(err, PURSER_EINVAL, "Node name mismatch.");
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(body, policy_fields[i]);
        if (v && !json_is_null(v) && (!json_is_string(v) || !policy_name_ok(json_string_value(v))))
            return purser_error_set(err, PURSER_EINVAL, "Field '%s' invalid", policy_fields[i]);
    }
    if (json_object_get(body, "run_list") && !json_is_array(json_object_get(body, "run_list")))
        return purser_error_set(err, PURSER_EINVAL, "Field 'run_list' is not a valid run list");
    *node = json_copy((json_t *)body);
    if (!json_object_get(*node, "json_class"))
        json_object_set_new(*node, "json_class", json_string("Chef::Node"));
    if (!json_object_get(*node, "chef_type"))
        json_object_set_new(*node, "chef_type", json_string("node"));
    if (!json_object_get(*node, "chef_environment"))
        json_object_set_new(*node, "chef_environment", json_string("_default"));
    if (!json_object_get(*node, "run_list"))
        json_object_set_new(*node, "run_list", json_array());
    for (size_t i = 0; i < 4; i++) {
        const json_t *v = json_object_get(*node, attribute_sets[i]);
        if (v && !json_is_object(v)) {
            json_decref(*node);
            *node = NULL;
            return purser_error_set(err, PURSER_EINVAL, "Field '%s' is not a hash",
                                    attribute_sets[i]);
        }
        if (!v)
            json_object_set_new(*node, attribute_sets[i], json_object());
    }
    return 0;
}

static struct store_value optional_string_value(const json_t *node, const char *field)
{
    const json_t *v = json_object_get(node, field);
    return json_is_string(v) ? (struct store_value)STORE_STR(json_string_value(v))
                             : (struct store_value)STORE_NULLV;
}

int policy_node_list(struct store *store, struct arena *arena, const char *org,
                     const struct links *links, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p;
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc) {
        p = (struct store_value)STORE_INT(oid);
        rc = store_query(store, arena, &rows,
                         "SELECT name FROM nodes WHERE org_id = ? ORDER BY name", &p, 1, err);
    }
    if (!rc)
        *out = policy_node_uris(&rows, links, org);
    return rc;
}

int policy_node_creator_groups(struct store *store, struct arena *arena, long long creator_id,
                               struct store_rows *out, struct purser_error *err)
{
    struct store_value p = STORE_INT(creator_id);
    return store_query(store, arena, out,
                       "SELECT DISTINCT policy_group FROM nodes WHERE creator_id = ? AND "
                       "policy_group IS NOT NULL ORDER BY policy_group",
                       &p, 1, err);
}

json_t *policy_node_uris(const struct store_rows *rows, const struct links *links, const char *org)
{
    json_t *out = json_object();
    for (size_t i = 0; i < rows->count; i++)
        json_object_set_new(out, store_cell(rows, i, 0),
                            link_url(links, LINK_NODE, org, store_cell(rows, i, 0), NULL));
    return out;
}

int policy_node_create(struct store *store, const char *actor, const char *org, const json_t *body,
                       long long creator_id, const struct links *links, json_t **out,
                       struct purser_error *err)
{
    json_t *node = NULL;
    char *text = NULL;
    struct arena *arena = arena_new();
    long long oid;
    int rc = arena ? node_normalize(body, NULL, &node, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc)
        rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc && !(text = json_text(node, JSON_COMPACT)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        const char *name = json_string_value(json_object_get(node, "name"));
        struct store_value p[] = {STORE_INT(oid),
                                  STORE_STR(name),
                                  optional_string_value(node, "policy_name"),
                                  optional_string_value(node, "policy_group"),
                                  STORE_STR(text),
                                  creator_id > 0 ? (struct store_value)STORE_INT(creator_id)
                                                 : (struct store_value)STORE_NULLV};
        rc = event_exec(store, actor, oid, NULL,
                        "INSERT INTO nodes (org_id, name, policy_name, policy_group, body,"
                        " creator_id) VALUES (?, ?, ?, ?, ?, ?)",
                        p, 6, NULL, "node", name, "put", err);
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "Node already exists");
        if (!rc)
            *out = json_pack("{s:o}", "uri", link_url(links, LINK_NODE, org, name, NULL));
    }
    free(text);
    json_decref(node);
    arena_free(arena);
    return rc;
}

/* The node's row (id, body, creator id or 0). PURSER_ENOTFOUND when there is none;
 * PURSER_EDENIED with Chef's "missing <verb> permission" when owner_only is not 0 and is not
 * the node's creator. */
static int node_row(struct store *store, struct arena *arena, const char *org, const char *name,
                    long long owner_only, const char *verb, struct store_rows *rows,
                    struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name)};
    int rc = store_query(store, arena, rows,
                         "SELECT n.id, n.body, COALESCE(n.creator_id, 0) FROM nodes n"
                         " JOIN organizations o ON o.id = n.org_id"
                         " WHERE o.name = ? AND n.name = ?",
                         p, 2, err);
    if (!rc && rows->count == 0)
        rc = policy_not_found(err, "node", name);
    if (!rc && owner_only && atoll(store_cell(rows, 0, 2)) != owner_only)
        rc = purser_error_set(err, PURSER_EDENIED, "missing %s permission", verb);
    return rc;
}

int policy_node_get(struct store *store, struct arena *arena, const char *org, const char *name,
                    json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    int rc = node_row(store, arena, org, name, 0, "read", &rows, err);
    if (!rc) {
        *out = policy_parse_stored(store_cell(&rows, 0, 1));
        rc = *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "stored node is not JSON");
    }
    return rc;
}

int policy_node_update(struct store *store, const char *actor, struct arena *arena, const char *org,
                       const char *name, const json_t *body, long long owner_only, json_t **out,
                       struct purser_error *err)
{
    struct store_rows rows;
    json_t *node = NULL;
    char *text = NULL;
    int rc = node_normalize(body, name, &node, err);
    if (!rc)
        rc = node_row(store, arena, org, name, owner_only, "update", &rows, err);
    if (!rc && !(text = json_text(node, JSON_COMPACT)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        struct store_value p[] = {optional_string_value(node, "policy_name"),
                                  optional_string_value(node, "policy_group"), STORE_STR(text),
                                  STORE_INT(atoll(store_cell(&rows, 0, 0)))};
        rc = event_exec(store, actor, 0, org,
                        "UPDATE nodes SET policy_name = ?, policy_group = ?, body = ? WHERE id = ?",
                        p, 4, NULL, "node", name, "put", err);
    }
    if (!rc)
        *out = json_incref(node);
    free(text);
    json_decref(node);
    return rc;
}

int policy_node_delete(struct store *store, const char *actor, struct arena *arena, const char *org,
                       const char *name, long long owner_only, json_t **out,
                       struct purser_error *err)
{
    struct store_rows rows;
    struct store_value id;
    int rc = node_row(store, arena, org, name, owner_only, "delete", &rows, err);
    if (!rc && !(*out = policy_parse_stored(store_cell(&rows, 0, 1))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "stored node is not JSON");
    if (!rc) {
        id = (struct store_value)STORE_INT(atoll(store_cell(&rows, 0, 0)));
        rc = policy_delete_read(store, actor, 0, "DELETE FROM nodes WHERE id = ?", &id, 1, org,
                                "node", name, out, err);
    }
    return rc;
}
