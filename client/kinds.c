/* kinds.c: the table of the kinds purserctl's resource verbs work on (each with the API's paths),
 * the operations they call, and finding a kind, its parents and names from a command line. */
#include "kinds.h"

#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS(...) ((const struct ctl_column[]){__VA_ARGS__, {NULL, NULL, 0}})
#define VIEW(kind, rows, keys, name, ...)                                                          \
    (&(const struct ctl_view){kind, rows, keys, name, COLUMNS(__VA_ARGS__)})
#define KEYED(kind) (&(const struct ctl_view){kind, NULL, 1, "@key", NULL})

/* The rows as written; a path beginning with @ is under its parent kind's item (the
 * registry's), and the {NULL} row is where the registry's generic kinds go (kinds_bind). */
static const struct kind kinds_written[] = {
    {"organization", "organizations", NULL, 1, REG_LIST, "/organizations/{name}", REG_LIST,
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_PATCH | K_DELETE, PAGE_NONE, "name",
     KEYED("organization"), NULL, "labels", "filter sort page-size"},
    {"user", "users", NULL, 1, REG_LIST, REG_ITEM, REG_LIST,
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_PATCH | K_DELETE, PAGE_NONE, "username",
     KEYED("user"), "key token", "labels", "filter sort page-size"},
    {"member", "members", NULL, 1, REG_LIST, REG_ITEM, REG_LIST, K_LIST | K_CREATE | K_DELETE,
     PAGE_NONE, "username",
     VIEW("member", NULL, 0, "user.username", {"USER", "user.username", COL_TEXT},
          {"ROLES", "user.roles", COL_TEXT}),
     NULL, "labels", "filter sort page-size"},
    {"client", "clients", NULL, 1, REG_LIST, REG_ITEM, REG_LIST,
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_PATCH | K_DELETE, PAGE_NONE, "name", KEYED("client"),
     "key", "labels", "filter sort page-size"},
    {"key", "keys", "user", 1, "/users/{user}/keys", "/users/{user}/keys/{key}",
     "/users/{user}/keys", K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE, "name",
     VIEW("key", NULL, 0, "name", {"NAME", "name", COL_TEXT}, {"EXPIRED", "expired", COL_TEXT}),
     NULL, NULL, NULL},
    {"key", "keys", "client", 1, ORG "/clients/{client}/keys", ORG "/clients/{client}/keys/{key}",
     ORG "/clients/{client}/keys", K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE,
     "name",
     VIEW("key", NULL, 0, "name", {"NAME", "name", COL_TEXT}, {"EXPIRED", "expired", COL_TEXT}),
     NULL, NULL, NULL},
    {"token", "tokens", "user", 1, REG_LIST, REG_ITEM, REG_LIST,
     K_LIST | K_CREATE | K_PATCH | K_DELETE, PAGE_NONE, NULL,
     VIEW("token", NULL, 0, "id", {"ID", "id", COL_TEXT}, {"DESCRIPTION", "description", COL_TEXT},
          {"ACTIVE", "active", COL_TEXT}, {"CREATED", "created_at", COL_TIME},
          {"EXPIRES", "expires_at", COL_TIME}, {"LAST USED", "last_used_at", COL_TIME}),
     NULL, "labels", "filter sort page-size"},
    {"principal", "principals", NULL, 1, NULL, ORG "/principals/{name}", NULL, K_GET, PAGE_NONE,
     NULL,
     VIEW("principal", "principals", 0, "name", {"NAME", "name", COL_TEXT},
          {"TYPE", "type", COL_TEXT}, {"MEMBER", "org_member", COL_TEXT}),
     NULL, NULL, NULL},
    {"permission", "permissions", NULL, 0, ORG "/permissions", NULL, NULL, K_LIST, PAGE_NONE, NULL,
     NULL, NULL, NULL, NULL},
    {"policy", "policies", NULL, 1, REG_LIST, REG_ITEM, NULL, K_LIST | K_GET | K_DELETE, PAGE_NONE,
     NULL, KEYED("policy"), "policy-revisions", NULL, "filter sort page-size"},
    {"policy-revision", "policy-revisions", NULL, 2, NULL, ORG "/policies/{name}/revisions/{rev}",
     ORG "/policies/{name}/revisions", K_GET | K_CREATE | K_DELETE, PAGE_NONE, NULL, NULL, NULL,
     NULL, NULL},
    {"policy-revision", "policy-revisions", "policy", 0, ORG "/policies/{name}/revisions", NULL,
     NULL, K_LIST, PAGE_NONE, NULL,
     VIEW("policy-revision", NULL, 1, "@key", {"REVISION", "@key", COL_TEXT},
          {"CREATED", "created_at", COL_TIME}, {"BY", "created_by", COL_TEXT},
          {"GROUPS", "policy_group_list", COL_LIST}),
     NULL, NULL, "filter sort page-size"},
    {"revision-group", "revision-groups", NULL, 2,
     ORG "/policies/{name}/revisions/{rev}/policy_groups", NULL, NULL, K_LIST, PAGE_NONE, NULL,
     KEYED("policy-group"), NULL, NULL, NULL},
    {"policy-group", "policy-groups", NULL, 1, REG_LIST, REG_ITEM, NULL, K_LIST | K_GET | K_DELETE,
     PAGE_NONE, NULL,
     (&(const struct ctl_view){
         "policy-group", NULL,
         1, "@key", COLUMNS({"NAME", "@key", COL_TEXT}, {"POLICIES", "policies", COL_COUNT})}),
     NULL, NULL, "filter sort page-size"},
    {"lock", "locks", NULL, 2, NULL, ORG "/policy_groups/{group}/policies/{name}", NULL,
     K_GET | K_REPLACE | K_DELETE, PAGE_NONE, NULL, NULL, NULL, NULL, NULL},
    {"node", "nodes", NULL, 1, REG_LIST, REG_ITEM, REG_LIST,
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE, "name", KEYED("node"), NULL, NULL,
     "filter sort page-size"},
    {"node", "nodes", "policy-group", 0, ORG "/policy_groups/{group}/nodes", NULL, NULL, K_LIST,
     PAGE_NONE, NULL, KEYED("node"), NULL, NULL, NULL},
    {"node", "nodes", "policy-group policy", 0, ORG "/policy_groups/{group}/policies/{name}/nodes",
     NULL, NULL, K_LIST, PAGE_NONE, NULL, KEYED("node"), NULL, NULL, NULL},
    {"cookbook", "cookbooks", NULL, 1, REG_LIST, REG_ITEM, NULL, K_LIST | K_GET, PAGE_NONE, NULL,
     KEYED("cookbook"), NULL, NULL, NULL},
    {"cookbook-artifact", "cookbook-artifacts", NULL, 2, NULL,
     ORG "/cookbook_artifacts/{name}/{identifier}", NULL, K_GET | K_REPLACE | K_DELETE, PAGE_NONE,
     NULL, NULL, NULL, NULL, NULL},
    /* the registry's kinds of the resource convention (clusters, ...): rows made from it */
    {NULL, NULL, NULL, 0, NULL, NULL, NULL, 0, PAGE_NONE, NULL, NULL, NULL, NULL, NULL},
    {"identity-provider", "identity-providers", NULL, 1, REG_LIST, REG_ITEM, REG_LIST,
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE | K_CONDITIONAL, PAGE_NONE, "metadata.name",
     VIEW("identity-provider", "items", 0, "metadata.name", {"NAME", "metadata.name", COL_TEXT},
          {"ISSUER", "spec.issuer", COL_TEXT}, {"CLIENT", "spec.client_id", COL_TEXT},
          {"MAPPINGS", "spec.mappings", COL_COUNT}, {"UPDATED", "metadata.updated_at", COL_TIME}),
     NULL, NULL, NULL},
    {"facts", "facts", "cluster", 0, "@/facts/history", NULL, "@/facts", K_LIST, PAGE_TOKEN, NULL,
     VIEW("facts", "items", 0, "version", {"VERSION", "version", COL_TEXT},
          {"AUTHOR", "author", COL_TEXT}, {"REPORTED", "created_at", COL_TIME},
          {"FACTS", "facts", COL_COUNT}),
     NULL, NULL, "page-size"},
    {"event", "events", NULL, 0, REG_LIST, NULL, NULL, K_LIST, PAGE_SINCE, NULL,
     VIEW("event", "events", 0, "seq", {"SEQ", "seq", COL_TEXT}, {"KIND", "kind", COL_TEXT},
          {"NAME", "name", COL_TEXT}, {"OP", "op", COL_TEXT}, {"ACTOR", "actor", COL_TEXT},
          {"AT", "at", COL_TIME}),
     NULL, NULL, "page-size"},
    {"revision", "revisions", NULL, 1, REG_LIST, REG_ITEM, NULL, K_LIST | K_GET | K_DELETE_ALL,
     PAGE_TOKEN, NULL,
     VIEW("revision", "results", 0, "id", {"ID", "id", COL_TEXT}, {"BUCKETS", "buckets", COL_LIST},
          {"TAGS", "tags", COL_LIST}, {"STATUS", "status", COL_TEXT},
          {"CREATED", "createdAt", COL_TIME}),
     "tag validation", NULL, "filter sort page-size"},
    {"document", "documents", "revision", 0, DOCS "/revisions/{id}/documents", NULL, NULL, K_LIST,
     PAGE_NONE, NULL,
     VIEW("document", NULL, 0, "metadata.name", {"SCHEMA", "schema", COL_TEXT},
          {"NAME", "metadata.name", COL_TEXT},
          {"LAYER", "metadata.layeringDefinition.layer", COL_TEXT},
          {"BUCKET", "status.bucket", COL_TEXT}, {"REVISION", "status.revision", COL_TEXT}),
     NULL, "metadata.label", "filter sort page-size"},
    {"document", "documents", NULL, 4, NULL, DOCS "/documents/{namespace}/{kind}/{version}/{name}",
     NULL, K_DELETE, PAGE_NONE, NULL, NULL, NULL, NULL, NULL},
    {"tag", "tags", "revision", 1, DOCS "/revisions/{id}/tags", DOCS "/revisions/{id}/tags/{tag}",
     DOCS "/revisions/{id}/tags/{tag}", K_LIST | K_GET | K_CREATE | K_DELETE | K_DELETE_ALL,
     PAGE_NONE, NULL,
     VIEW("tag", NULL, 1, "@key", {"TAG", "@key", COL_TEXT}, {"DATA", "@value", COL_TEXT}), NULL,
     NULL, NULL},
    {"validation", "validations", "revision", 1, DOCS "/revisions/{id}/validations",
     DOCS "/revisions/{id}/validations/{name}", DOCS "/revisions/{id}/validations/{name}",
     K_LIST | K_GET, PAGE_NONE, NULL,
     VIEW("validation", "results", 0, "name", {"NAME", "name", COL_TEXT},
          {"STATUS", "status", COL_TEXT}),
     NULL, NULL, NULL},
    {"validation-detail", "validation-details", "revision", 0,
     DOCS "/revisions/{id}/validations/detail", NULL, NULL, K_LIST, PAGE_NONE, NULL,
     VIEW("validation", "results", 0, "name", {"NAME", "name", COL_TEXT},
          {"STATUS", "status", COL_TEXT}, {"VALIDATOR", "validator.name", COL_TEXT},
          {"ERRORS", "errors", COL_COUNT}),
     NULL, NULL, NULL},
    {"validation-entry", "validation-entries", "revision", 2, NULL,
     DOCS "/revisions/{id}/validations/{name}/entries/{entry}", NULL, K_GET, PAGE_NONE, NULL, NULL,
     NULL, NULL, NULL},
};
#define KINDS_WRITTEN (sizeof(kinds_written) / sizeof(kinds_written[0]))

/* The identity kinds answer Chef's shape (which -l and --filter narrow) until a page is asked
 * for: with --page-size or --sort, the resource convention's pages of envelopes
 * (docs/inventory.md), each kind's list path with the table of its envelopes. */
static const struct {
    const char *name; /* the kind's */
    const char *list; /* its list's path (REG_LIST: the registry row's) */
    const struct ctl_view *view;
} paged_lists[] = {
    {"organization", REG_LIST,
     VIEW("organization", "items", 0, "metadata.name", {"NAME", "metadata.name", COL_TEXT},
          {"FULL NAME", "spec.full_name", COL_TEXT}, {"LABELS", "metadata.labels", COL_TEXT},
          {"EXTERNAL IDS", "spec.external_ids", COL_LIST},
          {"UPDATED", "metadata.updated_at", COL_TIME})},
    {"user", REG_LIST,
     VIEW("user", "items", 0, "metadata.name", {"NAME", "metadata.name", COL_TEXT},
          {"DISPLAY NAME", "spec.display_name", COL_TEXT}, {"EMAIL", "spec.email", COL_TEXT},
          {"ACTIVE", "spec.active", COL_TEXT}, {"LABELS", "metadata.labels", COL_TEXT},
          {"EXPIRES", "metadata.expires", COL_TIME})},
    {"member", REG_LIST,
     VIEW("member", "items", 0, "metadata.name", {"USER", "metadata.name", COL_TEXT},
          {"ROLES", "spec.roles", COL_LIST}, {"LABELS", "metadata.labels", COL_TEXT})},
    {"client", REG_LIST,
     VIEW("client", "items", 0, "metadata.name", {"NAME", "metadata.name", COL_TEXT},
          {"VALIDATOR", "spec.validator", COL_TEXT}, {"ACTIVE", "spec.active", COL_TEXT},
          {"LABELS", "metadata.labels", COL_TEXT}, {"EXPIRES", "metadata.expires", COL_TIME})},
    {"policy", REG_LIST,
     VIEW("policy", "items", 0, "name", {"NAME", "name", COL_TEXT},
          {"REVISIONS", "revision_count", COL_TEXT}, {"LATEST UPLOAD", "latest_at", COL_TIME})},
    {"policy-group", REG_LIST,
     VIEW("policy-group", "items", 0, "name", {"NAME", "name", COL_TEXT},
          {"POLICIES", "policy_count", COL_TEXT})},
    {"policy-revision", ORG "/policies/{name}/revisions",
     VIEW("policy-revision", "items", 0, "revision_id", {"REVISION", "revision_id", COL_TEXT},
          {"CREATED", "created_at", COL_TIME}, {"BY", "created_by", COL_TEXT},
          {"GROUPS", "policy_group_list", COL_LIST})},
    {"node", REG_LIST,
     VIEW("node", "items", 0, "name", {"NAME", "name", COL_TEXT},
          {"POLICY", "policy_name", COL_TEXT}, {"GROUP", "policy_group", COL_TEXT},
          {"REVISION", "revision_id", COL_TEXT}, {"PLATFORM", "platform", COL_TEXT},
          {"ADDRESS", "ipaddress", COL_TEXT}, {"UPDATED", "updated_at", COL_TIME})},
    {"token", REG_LIST,
     VIEW("token", "items", 0, "metadata.name", {"ID", "metadata.name", COL_TEXT},
          {"DESCRIPTION", "spec.description", COL_TEXT}, {"ACTIVE", "spec.active", COL_TEXT},
          {"LABELS", "metadata.labels", COL_TEXT}, {"EXPIRES", "metadata.expires", COL_TIME})},
};

/* ---- the rows, with the registry's (lib/registry) -------------------------------------------- */

#define KINDS_MAX 64
static struct kind kinds[KINDS_MAX];
static size_t kind_count;
static struct kind_all all_lists[8];
static size_t all_count;

static const enum ctl_column_kind column_kinds[] = {[REGISTRY_TEXT] = COL_TEXT,
                                                    [REGISTRY_TIME] = COL_TIME,
                                                    [REGISTRY_COUNT] = COL_COUNT,
                                                    [REGISTRY_LIST] = COL_LIST};

/* A generic kind's table: (ORGANIZATION,) NAME, LABELS, then the registry's columns. */
static const struct ctl_view *generic_view(const struct registry_kind *r, int all)
{
    size_t n = 0, more = 0;
    struct ctl_view *view = calloc(1, sizeof(*view));
    struct ctl_column *columns;
    while (r->columns && r->columns[more].title)
        more++;
    columns = calloc(more + 4, sizeof(*columns));
    if (!view || !columns) {
        fputs("purserctl: out of memory\n", stderr);
        exit(1);
    }
    if (all)
        columns[n++] = (struct ctl_column){"ORGANIZATION", "metadata.organization", COL_TEXT};
    columns[n++] = (struct ctl_column){"NAME", "metadata.name", COL_TEXT};
    columns[n++] = (struct ctl_column){"LABELS", "metadata.labels", COL_TEXT};
    for (size_t i = 0; i < more; i++)
        columns[n++] = (struct ctl_column){r->columns[i].title, r->columns[i].path,
                                           column_kinds[r->columns[i].type]};
    *view = (struct ctl_view){r->name, "items", 0, "metadata.name", columns};
    return view;
}

/* The row of a generic kind of the registry: every verb, conditional writes, keyset pages. */
static struct kind generic_kind(const struct registry_kind *r)
{
    return (struct kind){.name = r->name,
                         .plural = r->plural,
                         .args = 1,
                         .list = r->list,
                         .item = r->item,
                         .create = r->list,
                         .verbs = K_LIST | K_GET | K_CREATE | K_REPLACE | K_PATCH | K_DELETE |
                                  K_CONDITIONAL,
                         .paging = PAGE_TOKEN,
                         .name_field = "metadata.name",
                         .view = generic_view(r, 0),
                         .selector = "labels",
                         .options = "filter sort page-size"};
}

/* A path beginning with @: under the parent kind's item. */
static const char *under_parent(const char *parents, const char *path)
{
    const struct registry_kind *r = path && path[0] == '@' ? registry_find(parents) : NULL;
    char *out;
    if (!r || !r->item || asprintf(&out, "%s%s", r->item, path + 1) < 0)
        return path;
    return out;
}

/* describe KIND also lists the kinds whose parent it is. */
static const char *related_of(const char *name)
{
    struct buf names = BUF_INIT;
    for (size_t i = 0; i < KINDS_WRITTEN; i++)
        if (kinds_written[i].parents && !strcmp(kinds_written[i].parents, name))
            buf_printf(&names, "%s%s", names.len ? " " : "", kinds_written[i].name);
    return names.len ? buf_cstr(&names) : NULL; /* kept for the process */
}

/* kinds: the rows written, the registry's generic kinds in place of the {NULL} row (each with
 * its list of every organization's, when it has one); once. */
static void kinds_bind(void)
{
    if (kind_count)
        return;
    for (size_t i = 0; i < KINDS_WRITTEN && kind_count < KINDS_MAX; i++) {
        struct kind k = kinds_written[i];
        if (k.name) {
            k.list = ctl_registry_path(k.name, k.list);
            k.item = ctl_registry_path(k.name, k.item);
            k.create = ctl_registry_path(k.name, k.create);
            k.list = under_parent(k.parents, k.list);
            k.item = under_parent(k.parents, k.item);
            k.create = under_parent(k.parents, k.create);
            kinds[kind_count++] = k;
        }
        for (size_t j = 0; !k.name && j < registry_kind_count && kind_count < KINDS_MAX; j++) {
            const struct registry_kind *r = &registry_kinds[j];
            if (!r->generic)
                continue;
            kinds[kind_count] = generic_kind(r);
            kinds[kind_count++].related = related_of(r->name);
            if (r->all_organizations && all_count < sizeof(all_lists) / sizeof(all_lists[0]))
                all_lists[all_count++] =
                    (struct kind_all){r->plural, r->all_organizations, generic_view(r, 1)};
        }
    }
}

const struct ctl_view *kind_page_view(const struct kind *k)
{
    for (size_t i = 0; k->list && i < sizeof(paged_lists) / sizeof(paged_lists[0]); i++)
        if (!strcmp(paged_lists[i].name, k->name) &&
            !strcmp(ctl_registry_path(k->name, paged_lists[i].list), k->list))
            return paged_lists[i].view;
    return NULL;
}

const char *ctl_registry_path(const char *name, const char *path)
{
    const struct registry_kind *r = path && path[0] == '=' ? registry_find(name) : NULL;
    if (!r)
        return path;
    return strcmp(path, REG_ITEM) ? r->list : r->item;
}

const struct kind_all *kind_all_organizations(const struct kind *k)
{
    kinds_bind();
    for (size_t i = 0; i < all_count; i++)
        if (!strcmp(all_lists[i].plural, k->plural) && (k->verbs & K_LIST) && !k->parents)
            return &all_lists[i];
    return NULL;
}

const char *ctl_kind_plural(size_t i)
{
    kinds_bind();
    for (size_t k = 0; k < kind_count; k++) {
        size_t j = 0;
        while (j < k && strcmp(kinds[j].plural, kinds[k].plural))
            j++;
        if (j == k && i-- == 0) /* the first row of that kind */
            return kinds[k].plural;
    }
    return NULL;
}

/* ---- the operations each verb calls (purserctl operations) ------------------------------------
 */

/* The query parameters k's list may send (resources.c, list_query), organization= with all. */
static const char *list_query_names(const struct kind *k, int all, char *out, size_t size)
{
    const char *options = k->options ? k->options : "";
    snprintf(out, size, "%s%s%s%s%s%s%s", k->selector ? k->selector : "",
             strstr(options, "filter") ? " filter" : "", strstr(options, "sort") ? " sort" : "",
             strstr(options, "page-size") ? " page_size" : "",
             k->paging == PAGE_TOKEN || (k->paging == PAGE_NONE && strstr(options, "page-size"))
                 ? " page_token"
                 : "",
             k->paging == PAGE_SINCE ? " since" : "", all ? " organization" : "");
    return out + strspn(out, " ");
}

void ctl_kind_operations(void (*each)(void *ctx, const char *method, const char *path,
                                      const char *command, const char *query),
                         void *ctx)
{
    kinds_bind();
    for (size_t i = 0; i < kind_count; i++) {
        const struct kind *k = &kinds[i];
        char command[96], query[160];
#define EACH(verb, method, path, format, noun, q)                                                  \
    if ((k->verbs & (verb)) && (path)) {                                                           \
        snprintf(command, sizeof(command), format, noun);                                          \
        each(ctx, method, path, command, q);                                                       \
    }
        EACH(K_LIST, "GET", k->list, "get %s", k->plural,
             list_query_names(k, 0, query, sizeof(query)));
        if (kind_all_organizations(k))
            EACH(K_LIST, "GET", kind_all_organizations(k)->list, "get %s --all-organizations",
                 k->plural, list_query_names(k, 1, query, sizeof(query)));
        EACH(K_GET, "GET", k->item, "get %s", k->name, NULL);
        EACH(K_CREATE, "POST", k->create, "create %s", k->name, NULL);
        EACH(K_REPLACE, "PUT", k->item, "replace %s", k->name, NULL);
        EACH(K_PATCH, "PATCH", k->item, "patch %s", k->name, NULL);
        EACH(K_DELETE, "DELETE", k->item, "delete %s", k->name, NULL);
        EACH(K_DELETE_ALL, "DELETE", k->list, "delete %s --all", k->plural, NULL);
#undef EACH
    }
}

/* ---- finding the kind ------------------------------------------------------------------------ */

/* The parents' options the verbs take. */
const char *const kind_parent_options[] = {
    "user", "client", "policy-group", "policy", "revision", "cluster", NULL};

static int parent_given(const char *const *given, const char *name)
{
    for (size_t i = 0; kind_parent_options[i]; i++)
        if (!strcmp(kind_parent_options[i], name))
            return given[i] != NULL;
    return 0;
}

/* Parents that may be left out: the newest revision, the signed-in user. */
static int parent_defaults(const char *name)
{
    return !strcmp(name, "revision") || !strcmp(name, "user");
}

/* The row of the typed kind that has verb and uses the most of the parents' options given,
 * none of its own missing (but those with defaults); the first row of that name otherwise, so
 * that the message says what is missing. */
const struct kind *kind_find(const char *typed, const char *const *given, unsigned verb)
{
    const struct kind *named = NULL, *best = NULL;
    int best_score = -1;
    kinds_bind();
    for (size_t i = 0; i < kind_count; i++) {
        const struct kind *k = &kinds[i];
        int score = 0, missing = 0;
        char parents[64];
        if (strcmp(typed, k->name) && strcmp(typed, k->plural))
            continue;
        named = named ? named : k;
        if (!(k->verbs & verb))
            continue;
        snprintf(parents, sizeof(parents), "%s", k->parents ? k->parents : "");
        for (char *save = NULL, *p = strtok_r(parents, " ", &save); p;
             p = strtok_r(NULL, " ", &save))
            if (parent_given(given, p))
                score++;
            else if (!parent_defaults(p))
                missing++;
        if (!missing && score > best_score)
            best = k, best_score = score;
    }
    return best ? best : named;
}

static int count_parents(const struct kind *k)
{
    int n = 0;
    for (const char *p = k->parents; p && *p; p++)
        n += (p == k->parents || p[-1] == ' ');
    return n;
}

/* The path a verb uses. */
static const char *verb_template(const struct kind *k, unsigned verb)
{
    return verb == K_LIST || verb == K_DELETE_ALL ? k->list
           : verb == K_CREATE                     ? k->create
                                                  : k->item;
}

/* How many names the command line gives for verb: the template's values but the parents'
 * (a document's schema and name fill four); create may add the name its body takes. */
int kind_names_wanted(const struct kind *k, unsigned verb)
{
    const char *t = verb_template(k, verb);
    int n = 0;
    for (; t && *t; t++)
        n += *t == '{' && strncmp(t, "{org}", 5) != 0;
    n -= count_parents(k);
    if (k->args == 4)
        n = 2;
    return n;
}

const char *kind_verb_name(unsigned verb)
{
    switch (verb) {
    case K_LIST: return "listed";
    case K_GET: return "shown";
    case K_CREATE: return "created";
    case K_REPLACE: return "replaced";
    case K_PATCH: return "patched";
    default: return "deleted";
    }
}

int kind_is_document_api(const struct kind *k)
{
    const char *t = k->list ? k->list : k->item ? k->item : k->create;
    return t && !strncmp(t, DOCS "/", strlen(DOCS) + 1);
}

int kind_is_conditional(const struct kind *k)
{
    return (k->verbs & K_CONDITIONAL) != 0;
}

int ctl_newest_revision(struct ctl *ctl, const char **out)
{
    struct ctl_request request = {.method = "GET",
                                  .template = ctl_registry_path("revision", REG_LIST),
                                  .query = "sort=id&order=desc&limit=1"};
    json_t *answer = NULL, *id;
    int rc = ctl_call_json(ctl, &request, &answer);
    *out = NULL;
    id = json_object_get(json_array_get(json_object_get(answer, "results"), 0), "id");
    if (!rc && json_is_integer(id))
        *out = ctl_printf(ctl, "%lld", (long long)json_integer_value(id));
    else if (!rc)
        rc = ctl_error(CTL_NOTFOUND, "there is no document revision yet");
    json_decref(answer);
    return rc;
}

/* The value of a parent the command line left out: the newest revision, the context's user. */
static int parent_default(struct ctl *ctl, const struct kind *k, const char *parent,
                          const char **out)
{
    if (!strcmp(parent, "revision"))
        return ctl_newest_revision(ctl, out);
    if (!strcmp(parent, "user"))
        return ctl_whoami(ctl, out);
    return ctl_error(CTL_USAGE, "%s needs --%s NAME", k->plural, parent);
}

/* Fills t from the kind's parents (given) and the names (args). */
int kind_target_fill(struct ctl *ctl, struct target *t, const char *const *given, char **args,
                     int nargs)
{
    char parents[64];
    int rc = CTL_OK;
    snprintf(parents, sizeof(parents), "%s", t->kind->parents ? t->kind->parents : "");
    for (char *save = NULL, *p = strtok_r(parents, " ", &save); p && !rc;
         p = strtok_r(NULL, " ", &save))
        for (size_t i = 0; kind_parent_options[i] && !rc; i++)
            if (!strcmp(kind_parent_options[i], p)) {
                const char *v = given[i];
                if (!v)
                    rc = parent_default(ctl, t->kind, p, &v);
                if (!rc)
                    t->values[t->count++] = v;
            }
    for (int i = 0; !rc && i < nargs && t->count < 7; i++) {
        char *schema = args[i];
        if (t->kind->args == 4 && i == 0) { /* a document's schema: namespace/kind/version */
            char *a = strchr(schema, '/'), *b = a ? strchr(a + 1, '/') : NULL;
            if (!b)
                return ctl_error(CTL_USAGE, "a schema is namespace/Kind/version, not %s", schema);
            t->values[t->count++] = ctl_printf(ctl, "%.*s", (int)(a - schema), schema);
            t->values[t->count++] = ctl_printf(ctl, "%.*s", (int)(b - a - 1), a + 1);
            t->values[t->count++] = b + 1;
        } else
            t->values[t->count++] = args[i];
    }
    if (!rc)
        t->values[t->count] = NULL;
    return rc;
}
