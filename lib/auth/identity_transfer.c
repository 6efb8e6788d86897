/* identity_transfer.c: an organization, its members and its clients in an export and an import
 * (identity.h's identity_*_transfer, lib/resource/transfer_hooks.h). */
#include "auth/identity.h"
#include "resource/transfer_hooks.h"

/* ---- export --------------------------------------------------------------------------------- */

static int export_org(const struct transfer_ctx *c, long long oid, json_t *out,
                      struct purser_error *err)
{
    json_t *org = NULL, *doc;
    int rc = identity_org_get(c->store, c->arena, c->org, &org, NULL, err);
    (void)oid; /* one signature for every export */
    if (!rc) {
        doc = transfer_envelope("Organization", c->org,
                                json_pack("{s:O, s:O}", "full_name",
                                          json_object_get(org, "full_name"), "external_ids",
                                          json_object_get(org, "external_ids")));
        json_object_set(json_object_get(doc, "metadata"), "labels", json_object_get(org, "labels"));
        transfer_append(c, out, doc);
    }
    json_decref(org);
    return rc;
}

/* A member as an export carries it: its roles and their limits, and its user. */
static json_t *member_doc(const json_t *v)
{
    return transfer_envelope("Member", json_string_value(json_object_get(v, "name")),
                             json_pack("{s:O, s:O*, s:O}", "roles", json_object_get(v, "roles"),
                                       "policy_groups", json_object_get(v, "policy_groups"), "user",
                                       json_object_get(v, "user")));
}

static json_t *client_doc(const json_t *v)
{
    json_t *spec = json_deep_copy(v);
    json_object_del(spec, "name");
    return transfer_envelope("Client", json_string_value(json_object_get(v, "name")), spec);
}

/* The organization's members (with their user) or its clients, with public keys. */
static int export_principals(const struct transfer_ctx *c, int clients, json_t *out,
                             struct purser_error *err)
{
    json_t *members, *others, *v;
    size_t i;
    int rc = identity_org_principals(c->store, c->arena, c->org, &members, &others, err);
    json_array_foreach (clients ? others : members, i, v) /* (none when rc) */
        transfer_append(c, out, clients ? client_doc(v) : member_doc(v));
    json_decref(members);
    json_decref(others);
    return rc;
}

static int export_members(const struct transfer_ctx *c, long long oid, json_t *out,
                          struct purser_error *err)
{
    (void)oid; /* one signature for every export */
    return export_principals(c, 0, out, err);
}

static int export_clients(const struct transfer_ctx *c, long long oid, json_t *out,
                          struct purser_error *err)
{
    (void)oid; /* one signature for every export */
    return export_principals(c, 1, out, err);
}

/* ---- import --------------------------------------------------------------------------------- */

static int import_principal(const struct transfer_ctx *c, const char *org, const char *name,
                            const json_t *spec, const json_t *profile, struct purser_error *err)
{
    json_t *body = json_deep_copy(profile), *out = NULL, *key;
    long long pid;
    size_t i;
    int exists = 0, rc;
    json_object_del(body, "keys");
    json_object_del(body, "active");
    json_object_set_new(body, org ? "name" : "username", json_string(name));
    json_object_set_new(body, "create_key", json_false());
    if (!org) { /* a user: another organization of this installation may have made it */
        rc = identity_principal_id(c->store, c->arena, NULL, name, &pid, err);
        exists = rc == 0;
    }
    rc = exists
             ? 0
             : identity_principal_create(c->store, c->actor, org, body, NULL, c->links, &out, err);
    json_decref(body);
    json_decref(out);
    out = NULL;
    if (!rc)
        rc = identity_principal_id(c->store, c->arena, org, name, &pid, err);
    if (!rc && exists)
        return 0; /* an existing user's profile and keys stay as they are */
    json_array_foreach (json_object_get(spec, "keys"), i, key) {
        if (!rc)
            rc = identity_key_create(c->store, c->actor, pid, key, "", &out, err);
        if (rc)
            break;
        json_decref(out);
        out = NULL;
    }
    if (!rc && json_is_false(json_object_get(profile, "active"))) {
        json_t *off = json_pack("{s:b}", "active", 0);
        rc = identity_principal_update(c->store, c->actor, c->arena, org, name, off, NULL, &out,
                                       err);
        json_decref(off);
        json_decref(out);
    }
    return rc;
}

static int import_org(struct transfer_import *im, const json_t *doc, const char *name,
                      const json_t *spec, json_t **out, struct purser_error *err)
{ /* the organization's labels, full name and external ids */
    json_t *body = json_pack("{s:O?, s:O?}", "full_name", json_object_get(spec, "full_name"),
                             "external_ids", json_object_get(spec, "external_ids"));
    json_t *labels = json_object_get(json_object_get(doc, "metadata"), "labels");
    int rc;
    (void)name;
    if (labels)
        json_object_set(body, "labels", labels);
    rc = identity_org_update(im->c->store, im->c->actor, im->c->arena, im->c->org, body, NULL, out,
                             err);
    json_decref(body);
    return rc;
}

static int import_member(struct transfer_import *im, const json_t *doc, const char *name,
                         const json_t *spec, json_t **out, struct purser_error *err)
{
    const struct transfer_ctx *c = im->c;
    json_t *body =
        json_pack("{s:s, s:O?, s:O*}", "username", name, "roles", json_object_get(spec, "roles"),
                  "policy_groups", json_object_get(spec, "policy_groups"));
    int rc = import_principal(c, NULL, name, json_object_get(spec, "user"),
                              json_object_get(spec, "user"), err);
    (void)doc;
    if (!rc)
        rc = identity_member_add(c->store, c->actor, c->org, body, c->valid_role, c->role_ctx, out,
                                 err);
    json_decref(body);
    return rc;
}

/* A client's roles and their limits as exported: roles when not the one its creation gives
 * (validator or node), policy_groups for the limited ones. */
static int client_roles(struct transfer_import *im, const char *name, const json_t *spec,
                        struct purser_error *err)
{
    json_t *body = json_pack("{s:O*, s:O*}", "roles", json_object_get(spec, "roles"),
                             "policy_groups", json_object_get(spec, "policy_groups"));
    int rc;
    if (!json_object_get(body, "roles"))
        json_object_set_new(body, "roles", json_pack("[s]", identity_client_role(spec)));
    rc = identity_client_roles_set(im->c->store, im->c->org, name, body, im->c->valid_role,
                                   im->c->role_ctx, err);
    json_decref(body);
    return rc;
}

static int import_client(struct transfer_import *im, const json_t *doc, const char *name,
                         const json_t *spec, json_t **out, struct purser_error *err)
{
    json_t *profile =
        json_pack("{s:O?, s:O?, s:O*, s:O*}", "validator", json_object_get(spec, "validator"),
                  "labels", json_object_get(spec, "labels"), "sub_kind",
                  json_object_get(spec, "sub_kind"), "expires", json_object_get(spec, "expires"));
    int rc;
    (void)doc;
    (void)out;
    if (json_is_false(json_object_get(spec, "active")))
        json_object_set_new(profile, "active", json_false());
    rc = import_principal(im->c, im->c->org, name, spec, profile, err);
    json_decref(profile);
    if (!rc && (json_object_get(spec, "roles") || json_object_get(spec, "policy_groups")))
        rc = client_roles(im, name, spec, err);
    return rc;
}

const struct transfer_hooks identity_org_transfer = {{{"Organization", NULL, import_org}},
                                                     export_org};
const struct transfer_hooks identity_member_transfer = {{{"Member", NULL, import_member}},
                                                        export_members};
const struct transfer_hooks identity_client_transfer = {{{"Client", NULL, import_client}},
                                                        export_clients};
