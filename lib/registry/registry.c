/* registry.c: the one list of the kinds purser serves, one row each (registry.h). */
#include "registry/registry.h"

#include "auth/identity.h"
#include "auth/oidc_provider.h"
#include "docs/docstore.h"
#include "inventory/cluster.h"
#include "policy/cookbook.h"
#include "policy/policy.h"
#include "resource/resource.h"
#include "store/events.h"

#include <string.h>

#define ORG "/organizations/{org}"
#define EVENTS(...) ((const struct registry_event[]){__VA_ARGS__, {.kind = NULL}})
#define OWN REGISTRY_EVENT_OWN
#define COLUMNS(...) ((const struct registry_column[]){__VA_ARGS__, {NULL, NULL, REGISTRY_TEXT}})

/* In the admin pages' order (their navigation, the reference's areas). */
const struct registry_kind registry_kinds[] = {
    {.name = "policy",
     .plural = "policies",
     .page = "policy",
     .envelope = "PolicyRevision",
     .title = "Policies & policy groups",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/policies",
     .item = ORG "/policies/{name}",
     .read = "read_policy",
     .write = "write_policy",
     .remove = "delete_policy",
     .areas = "policies policy_groups collect_policies",
     .nav = "policies Policies",
     .events =
         EVENTS({.kind = "policy",
                 .description = "a policy was deleted with its revisions (name: the policy)",
                 .list = "policies"},
                {.kind = "policy_revision",
                 .description = "a policy revision was uploaded or deleted (name: policy/revision)",
                 .key = "policy_revision:{0}/{1}",
                 .page = "policies/{0}/{1}",
                 .list = "policies/{0}",
                 .parent = "policy:{0}",
                 .flags = OWN}),
     .export_rank = 40,
     .transfer = &policy_revision_transfer},
    {.name = "policy-group",
     .plural = "policy-groups",
     .page = "policy",
     .envelope = "PolicyGroup",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/policy_groups",
     .item = ORG "/policy_groups/{group}",
     .read = "read_policy_group",
     .write = "write_policy_group",
     .remove = "write_policy_group",
     .nav = "groups Policy groups",
     .events =
         EVENTS({.kind = "policy_group",
                 .description = "a policy group was deleted (name: the group)",
                 .list = "groups"},
                {.kind = "policy_group_pointer",
                 .description = "a group's pointer to a policy revision was set, moved (one per "
                                "pointer a promotion moves) or deleted (name: group/policy)",
                 .list = "groups/{0}"}),
     .export_rank = 50,
     .transfer = &policy_group_transfer},
    {.name = "node",
     .plural = "nodes",
     .page = "policy",
     .envelope = "Node",
     .title = "Nodes & cookbooks",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/nodes",
     .item = ORG "/nodes/{node}",
     .read = "read_node",
     .write = "write_node",
     .remove = "write_node",
     .areas = "nodes sandboxes file_store cookbook_artifacts",
     .nav = "nodes Nodes",
     .events = EVENTS({.kind = "node",
                       .description = "a node was created, changed or deleted (name: the node)",
                       .key = "node:{name}",
                       .page = "nodes/{name}",
                       .list = "nodes",
                       .flags = OWN}),
     .export_rank = 60,
     .transfer = &policy_node_transfer},
    {.name = "cookbook",
     .plural = "cookbooks",
     .envelope = "CookbookArtifact",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/cookbook_artifacts",
     .item = ORG "/cookbook_artifacts/{name}",
     .read = "read_cookbooks",
     .write = "write_cookbooks",
     .remove = "write_cookbooks",
     .events = EVENTS(
         {.kind = "cookbook_artifact",
          .description = "a cookbook artifact was uploaded or deleted (name: name/identifier)"}),
     .export_rank = 70,
     .transfer = &cookbook_transfer},
    {.name = "revision",
     .plural = "revisions",
     .page = "docs",
     .envelope = "DocumentBucket",
     .title = "Documents (Deckhand, /api/v1.0) & their git history",
     .scope = REGISTRY_ORGANIZATION,
     .list = "/api/v1.0/revisions",
     .item = "/api/v1.0/revisions/{id}",
     .read = "read_revision",
     .write = "write_cleartext_document",
     .remove = "delete_revisions",
     .areas = "api versions git-access",
     .nav = "documents Documents",
     .events = EVENTS(
         {.kind = "document_revision",
          .description = "a document revision was written (name: its id, with the buckets it "
                         "changed) or all were purged (name: *)",
          .key = "document_revision:{0}",
          .page = "documents/{0}",
          .list = "documents",
          .parent = "document_revision:*",
          .flags = OWN | REGISTRY_EVENT_ALL},
         {.kind = "tag",
          .description = "a revision tag was set or deleted (name: revision/tag)",
          .key = "document_revision:{0}",
          .page = "documents/{0}",
          .list = "documents",
          .parent = "document_revision:*"},
         {.kind = "validation",
          .description = "a validation of a revision was recorded (name: revision/validation)",
          .key = "document_revision:{0}",
          .page = "documents/{0}",
          .list = "documents",
          .parent = "document_revision:*"}),
     .export_rank = 80,
     .transfer = &docstore_transfer},
    {.name = "cluster",
     .plural = "clusters",
     .page = "inventory",
     .envelope = "Cluster",
     .title = "Clusters",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/clusters",
     .item = ORG "/clusters/{id}",
     .read = "read_cluster",
     .write = "write_cluster",
     .remove = "delete_cluster",
     .areas = "clusters install",
     .nav = "clusters Clusters",
     .events =
         EVENTS({.kind = "cluster",
                 .key = "cluster:{0}",
                 .page = "clusters/{0}",
                 .list = "clusters",
                 .flags = OWN},
                {.kind = "facts", .key = "cluster:{0}", .page = "clusters/{0}", .list = "clusters"},
                {.kind = "bootstrap_token_reset",
                 .key = "cluster:{0}",
                 .page = "clusters/{0}",
                 .list = "clusters"}),
     .resource = &cluster_kind,
     .generic = 1,
     .columns = COLUMNS({"BOOTSTRAPPED", "status.bootstrap_token.redeemed_at", REGISTRY_TIME},
                        {"FACTS", "status.dynamic_facts", REGISTRY_COUNT},
                        {"UPDATED", "metadata.updated_at", REGISTRY_TIME}),
     .all_organizations = "/clusters",
     .shown_once = "bootstrap_token.install_url",
     .shown_what = "its bootstrap install URL",
     .export_rank = 100},
    {.name = "member",
     .plural = "members",
     .page = "identity",
     .envelope = "Member",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/users",
     .item = ORG "/users/{user}",
     .read = "read_members",
     .write = "write_members",
     .remove = "write_members",
     .nav = "members Users & clients",
     .events = EVENTS(
         {.kind = "member",
          .description = "a user became a member, had its roles changed or left (name: the user)",
          .list = "members"}),
     .resource = &identity_member_kind,
     .export_rank = 20,
     .transfer = &identity_member_transfer},
    {.name = "client",
     .plural = "clients",
     .page = "identity",
     .envelope = "Client",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/clients",
     .item = ORG "/clients/{client}",
     .read = "read_clients",
     .write = "update_client",
     .remove = "delete_client",
     .events = EVENTS({.kind = "client",
                       .description = "a client was created, changed or deleted, also by a redeem "
                                      "or a cluster's deletion (name: the client)",
                       .key = "client:{name}",
                       .page = "clients/{name}",
                       .list = "members",
                       .flags = OWN}),
     .resource = &identity_client_kind,
     .export_rank = 30,
     .transfer = &identity_client_transfer},
    {.name = "user",
     .plural = "users",
     .page = "server",
     .envelope = "User",
     .title = "Users, clients & tokens",
     .scope = REGISTRY_SERVER,
     .list = "/users",
     .item = "/users/{user}",
     .read = "read_user",
     .write = "update_user",
     .remove = "delete_user",
     .areas = "users clients principals",
     .events = EVENTS({.kind = "user",
                       .description = "a member's user was changed or deleted (name: the user)",
                       .key = "user:{name}",
                       .page = "users/{name}",
                       .action = "",
                       .flags = OWN | REGISTRY_EVENT_SELF},
                      {.kind = "key",
                       .description = "a user's or client's key was added, changed or deleted "
                                      "(name: principal/key)"}),
     .resource = &identity_user_kind},
    {.name = "token",
     .plural = "tokens",
     .page = "identity",
     .envelope = "Token",
     .scope = REGISTRY_USER,
     .list = "/users/{user}/tokens",
     .item = "/users/{user}/tokens/{id}",
     .read = "read_user",
     .write = "update_user",
     .remove = "update_user",
     .nav = "tokens My tokens",
     .events =
         EVENTS({.kind = "token",
                 .description =
                     "an API token was made (also by a redeem), changed or deleted (name: its id)",
                 .key = "token:{name}",
                 .page = "tokens",
                 .action = "",
                 .flags = OWN | REGISTRY_EVENT_MINE}),
     .resource = &identity_token_kind},
    {.name = "event",
     .plural = "events",
     .page = "events",
     .title = "Events",
     .scope = REGISTRY_ORGANIZATION,
     .list = ORG "/events",
     .read = "read_events",
     .areas = "events",
     .nav = "events Recent changes"},
    {.name = "identity-provider",
     .plural = "identity-providers",
     .envelope = "IdentityProvider",
     .title = "Identity providers & sign-in",
     .scope = REGISTRY_SERVER,
     .list = "/identity-providers",
     .item = "/identity-providers/{id}",
     .read = "read_identity_providers",
     .write = "write_identity_providers",
     .remove = "write_identity_providers",
     .areas = "identity-providers auth",
     .events = EVENTS({.kind = "identity_provider",
                       .description = "an identity provider whose mappings name the organization "
                                      "was created, changed or deleted (name: the provider)"},
                      {.kind = "sign_in",
                       .description = "a user signed in through an identity provider (name: the "
                                      "user; detail: the provider)",
                       .key = "user:{name}",
                       .page = "users/{name}",
                       .action = "",
                       .flags = REGISTRY_EVENT_SELF},
                      {.kind = "sign_in_refused",
                       .description = "a sign-in through a provider that maps to the organization "
                                      "was refused (name: the provider; detail: the reason)"}),
     .export_rank = 90,
     .transfer = &oidc_provider_transfer},
    {.name = "organization",
     .plural = "organizations",
     .page = "server",
     .envelope = "Organization",
     .title = "Organizations",
     .scope = REGISTRY_SERVER,
     .list = "/organizations",
     .item = ORG,
     .read = "read_organization",
     .write = "update_organization",
     .remove = "delete_organization",
     .areas = "organizations . permissions export import",
     .nav = "organization Organization",
     .events =
         EVENTS({.kind = "organization",
                 .description = "an organization was created or changed (name: the organization)"}),
     .resource = &identity_org_kind,
     .export_rank = 10,
     .transfer = &identity_org_transfer},
};
const size_t registry_kind_count = sizeof(registry_kinds) / sizeof(registry_kinds[0]);

const struct registry_kind *registry_find(const char *name)
{
    for (size_t i = 0; name && i < registry_kind_count; i++)
        if (!strcmp(registry_kinds[i].name, name) || !strcmp(registry_kinds[i].plural, name))
            return &registry_kinds[i];
    return NULL;
}

int registry_events_register(void)
{
    static struct event_kind kinds[64];
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < registry_kind_count; i++)
        for (const struct registry_event *e = registry_kinds[i].events; e && e->kind; e++)
            if (e->description && n + 1 < sizeof(kinds) / sizeof(kinds[0]))
                kinds[n++] = (struct event_kind){e->kind, e->description};
            else if (e->description)
                rc = PURSER_EINTERNAL;
    if (!rc)
        rc = event_kinds_register(kinds);
    return rc;
}

const struct registry_kind *registry_find_envelope(const char *envelope)
{
    for (size_t i = 0; envelope && i < registry_kind_count; i++)
        if (registry_kinds[i].envelope && !strcmp(registry_kinds[i].envelope, envelope))
            return &registry_kinds[i];
    return NULL;
}

size_t registry_resources(const struct resource_kind **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < registry_kind_count && n < max; i++) {
        const struct resource_kind *k = registry_kinds[i].resource;
        if (k)
            out[n++] = k;
    }
    return n;
}

size_t registry_exports(const struct registry_kind **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < registry_kind_count && n < max; i++) {
        const struct registry_kind *k = &registry_kinds[i];
        size_t at = n;
        if (k->export_rank <= 0 ||
            !(k->transfer || (k->resource && k->resource->export_doc && k->resource->import_doc)))
            continue;
        for (; at > 0 && out[at - 1]->export_rank > k->export_rank; at--)
            out[at] = out[at - 1];
        out[at] = k;
        n++;
    }
    return n;
}

static const char *const scopes[] = {"server", "organization", "user"};

static json_t *event_json(const struct registry_event *e)
{
    json_t *out =
        json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:s?}", "kind", e->kind, "key", e->key, "page",
                  e->page, "list", e->list, "parent", e->parent, "action", e->action);
    static const struct {
        unsigned flag;
        const char *name;
    } flags[] = {{REGISTRY_EVENT_OWN, "own"},
                 {REGISTRY_EVENT_MINE, "mine"},
                 {REGISTRY_EVENT_SELF, "self"},
                 {REGISTRY_EVENT_ALL, "all"}};
    for (size_t i = 0; out && i < sizeof(flags) / sizeof(flags[0]); i++)
        if (e->flags & flags[i].flag)
            json_object_set_new(out, flags[i].name, json_true());
    return out;
}

/* "clusters Clusters" as {path, title}. */
static json_t *nav_json(const char *nav)
{
    const char *space = strchr(nav, ' ');
    return space ? json_pack("{s:s%, s:s}", "path", nav, (size_t)(space - nav), "title", space + 1)
                 : json_pack("{s:s, s:s}", "path", nav, "title", nav);
}

static json_t *areas_json(const char *areas)
{
    json_t *out = json_array();
    while (out && areas && *areas) {
        size_t n = strcspn(areas, " ");
        /* "." is the organization itself (/organizations/{org}: no segment after it) */
        json_array_append_new(out, json_stringn(areas, n == 1 && *areas == '.' ? 0 : n));
        areas += n + (areas[n] == ' ');
    }
    return out;
}

static json_t *kind_json(const struct registry_kind *k)
{
    json_t *out =
        json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?}", "name", k->name,
                  "plural", k->plural, "envelope", k->envelope, "title", k->title, "scope",
                  scopes[k->scope], "list", k->list, "item", k->item, "read", k->read, "write",
                  k->write, "delete", k->remove, "page", k->page);
    json_t *events = json_array();
    for (const struct registry_event *e = k->events; e && e->kind; e++)
        json_array_append_new(events, event_json(e));
    if (out && k->areas)
        json_object_set_new(out, "areas", areas_json(k->areas));
    if (out && k->nav)
        json_object_set_new(out, "nav", nav_json(k->nav));
    if (out)
        json_object_set_new(out, "events", events);
    else
        json_decref(events);
    return out;
}

json_t *registry_json(void)
{
    json_t *out = json_array();
    for (size_t i = 0; out && i < registry_kind_count; i++)
        json_array_append_new(out, kind_json(&registry_kinds[i]));
    return out;
}
