/* resources.c: the kinds purserctl's get, describe, create, replace, patch and delete work on,
 * one row each with the API's paths, and those verbs over them. */
#include "ctl.h"

#include "codec/yaml_codec.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum kind_verbs {
    K_LIST = 1,
    K_GET = 2,
    K_CREATE = 4,
    K_REPLACE = 8,
    K_PATCH = 16,
    K_DELETE = 32,
    K_DELETE_ALL = 64
};
enum paging { PAGE_NONE, PAGE_TOKEN, PAGE_SINCE };

/* A kind. Its paths are /docs' templates; a request fills {org} from the context, then the
 * parents' option values in order, then the names given on the command line. */
struct kind {
    const char *name;    /* singular, as typed: "cluster" */
    const char *plural;  /* "clusters" */
    const char *parents; /* the options it needs, in template order: "user" (--user NAME) */
    int args;            /* the names that pick one: 1, or 2 ("policy-revision NAME REV") */
    const char *list, *item, *create;
    unsigned verbs;
    enum paging paging;
    const char *name_field; /* create NAME: where NAME goes in the body */
    const struct ctl_view *view;
    const char *related; /* describe also lists these kinds, with this one's name as parent */
};

#define COLUMNS(...) ((const struct ctl_column[]){__VA_ARGS__, {NULL, NULL, 0}})
#define VIEW(kind, rows, keys, name, ...)                                                          \
    (&(const struct ctl_view){kind, rows, keys, name, COLUMNS(__VA_ARGS__)})
#define KEYED(kind) (&(const struct ctl_view){kind, NULL, 1, "@key", NULL})

#define ORG "/organizations/{org}"
#define DOCS "/api/v1.0"

static const struct kind kinds[] = {
    {"organization", "organizations", NULL, 1, "/organizations", "/organizations/{name}",
     "/organizations", K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE, "name",
     KEYED("organization"), NULL},
    {"user", "users", NULL, 1, "/users", "/users/{user}", "/users",
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_PATCH | K_DELETE, PAGE_NONE, "username",
     KEYED("user"), "key token"},
    {"member", "members", NULL, 1, ORG "/users", ORG "/users/{user}", ORG "/users",
     K_LIST | K_CREATE | K_DELETE, PAGE_NONE, "username",
     VIEW("member", NULL, 0, "user.username", {"USER", "user.username", COL_TEXT},
          {"ROLES", "user.roles", COL_TEXT}),
     NULL},
    {"client", "clients", NULL, 1, ORG "/clients", ORG "/clients/{client}", ORG "/clients",
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE, "name", KEYED("client"), "key"},
    {"key", "keys", "user", 1, "/users/{user}/keys", "/users/{user}/keys/{key}",
     "/users/{user}/keys", K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE, "name",
     VIEW("key", NULL, 0, "name", {"NAME", "name", COL_TEXT}, {"EXPIRED", "expired", COL_TEXT}),
     NULL},
    {"key", "keys", "client", 1, ORG "/clients/{client}/keys", ORG "/clients/{client}/keys/{key}",
     ORG "/clients/{client}/keys", K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE,
     "name",
     VIEW("key", NULL, 0, "name", {"NAME", "name", COL_TEXT}, {"EXPIRED", "expired", COL_TEXT}),
     NULL},
    {"token", "tokens", "user", 1, "/users/{user}/tokens", "/users/{user}/tokens/{id}",
     "/users/{user}/tokens", K_LIST | K_CREATE | K_PATCH | K_DELETE, PAGE_NONE, NULL,
     VIEW("token", NULL, 0, "id", {"ID", "id", COL_TEXT}, {"DESCRIPTION", "description", COL_TEXT},
          {"ACTIVE", "active", COL_TEXT}, {"CREATED", "created_at", COL_TIME},
          {"EXPIRES", "expires_at", COL_TIME}, {"LAST USED", "last_used_at", COL_TIME}),
     NULL},
    {"principal", "principals", NULL, 1, NULL, ORG "/principals/{name}", NULL, K_GET, PAGE_NONE,
     NULL,
     VIEW("principal", "principals", 0, "name", {"NAME", "name", COL_TEXT},
          {"TYPE", "type", COL_TEXT}, {"MEMBER", "org_member", COL_TEXT}),
     NULL},
    {"permission", "permissions", NULL, 0, ORG "/permissions", NULL, NULL, K_LIST, PAGE_NONE, NULL,
     NULL, NULL},
    {"policy", "policies", NULL, 1, ORG "/policies", ORG "/policies/{name}", NULL,
     K_LIST | K_GET | K_DELETE, PAGE_NONE, NULL, KEYED("policy"), NULL},
    {"policy-revision", "policy-revisions", NULL, 2, NULL, ORG "/policies/{name}/revisions/{rev}",
     ORG "/policies/{name}/revisions", K_GET | K_CREATE | K_DELETE, PAGE_NONE, NULL, NULL, NULL},
    {"revision-group", "revision-groups", NULL, 2,
     ORG "/policies/{name}/revisions/{rev}/policy_groups", NULL, NULL, K_LIST, PAGE_NONE, NULL,
     KEYED("policy-group"), NULL},
    {"policy-group", "policy-groups", NULL, 1, ORG "/policy_groups", ORG "/policy_groups/{group}",
     NULL, K_LIST | K_GET | K_DELETE, PAGE_NONE, NULL,
     (&(const struct ctl_view){
         "policy-group", NULL,
         1, "@key", COLUMNS({"NAME", "@key", COL_TEXT}, {"POLICIES", "policies", COL_COUNT})}),
     NULL},
    {"lock", "locks", NULL, 2, NULL, ORG "/policy_groups/{group}/policies/{name}", NULL,
     K_GET | K_REPLACE | K_DELETE, PAGE_NONE, NULL, NULL, NULL},
    {"node", "nodes", NULL, 1, ORG "/nodes", ORG "/nodes/{node}", ORG "/nodes",
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_DELETE, PAGE_NONE, "name", KEYED("node"), NULL},
    {"node", "nodes", "policy-group", 0, ORG "/policy_groups/{group}/nodes", NULL, NULL, K_LIST,
     PAGE_NONE, NULL, KEYED("node"), NULL},
    {"node", "nodes", "policy-group policy", 0, ORG "/policy_groups/{group}/policies/{name}/nodes",
     NULL, NULL, K_LIST, PAGE_NONE, NULL, KEYED("node"), NULL},
    {"cookbook", "cookbooks", NULL, 1, ORG "/cookbook_artifacts", ORG "/cookbook_artifacts/{name}",
     NULL, K_LIST | K_GET, PAGE_NONE, NULL, KEYED("cookbook"), NULL},
    {"cookbook-artifact", "cookbook-artifacts", NULL, 2, NULL,
     ORG "/cookbook_artifacts/{name}/{identifier}", NULL, K_GET | K_REPLACE | K_DELETE, PAGE_NONE,
     NULL, NULL, NULL},
    {"cluster", "clusters", NULL, 1, ORG "/clusters", ORG "/clusters/{id}", ORG "/clusters",
     K_LIST | K_GET | K_CREATE | K_REPLACE | K_PATCH | K_DELETE, PAGE_TOKEN, "metadata.name",
     VIEW("cluster", "items", 0, "metadata.name", {"NAME", "metadata.name", COL_TEXT},
          {"LABELS", "metadata.labels", COL_TEXT},
          {"BOOTSTRAPPED", "status.bootstrap_token.redeemed_at", COL_TIME},
          {"FACTS", "status.dynamic_facts", COL_COUNT},
          {"UPDATED", "metadata.updated_at", COL_TIME}),
     "facts"},
    {"facts", "facts", "cluster", 0, ORG "/clusters/{id}/facts/history", NULL,
     ORG "/clusters/{id}/facts", K_LIST, PAGE_TOKEN, NULL,
     VIEW("facts", "items", 0, "version", {"VERSION", "version", COL_TEXT},
          {"AUTHOR", "author", COL_TEXT}, {"REPORTED", "created_at", COL_TIME},
          {"FACTS", "facts", COL_COUNT}),
     NULL},
    {"event", "events", NULL, 0, ORG "/events", NULL, NULL, K_LIST, PAGE_SINCE, NULL,
     VIEW("event", "events", 0, "seq", {"SEQ", "seq", COL_TEXT}, {"KIND", "kind", COL_TEXT},
          {"NAME", "name", COL_TEXT}, {"OP", "op", COL_TEXT}, {"ACTOR", "actor", COL_TEXT},
          {"AT", "at", COL_TIME}),
     NULL},
    {"revision", "revisions", NULL, 1, DOCS "/revisions", DOCS "/revisions/{id}", NULL,
     K_LIST | K_GET | K_DELETE_ALL, PAGE_NONE, NULL,
     VIEW("revision", "results", 0, "id", {"ID", "id", COL_TEXT}, {"BUCKETS", "buckets", COL_LIST},
          {"TAGS", "tags", COL_LIST}, {"STATUS", "status", COL_TEXT},
          {"CREATED", "createdAt", COL_TIME}),
     "tag validation"},
    {"document", "documents", "revision", 0, DOCS "/revisions/{id}/documents", NULL, NULL, K_LIST,
     PAGE_NONE, NULL,
     VIEW("document", NULL, 0, "metadata.name", {"SCHEMA", "schema", COL_TEXT},
          {"NAME", "metadata.name", COL_TEXT},
          {"LAYER", "metadata.layeringDefinition.layer", COL_TEXT},
          {"BUCKET", "status.bucket", COL_TEXT}, {"REVISION", "status.revision", COL_TEXT}),
     NULL},
    {"document", "documents", NULL, 4, NULL, DOCS "/documents/{namespace}/{kind}/{version}/{name}",
     NULL, K_DELETE, PAGE_NONE, NULL, NULL, NULL},
    {"tag", "tags", "revision", 1, DOCS "/revisions/{id}/tags", DOCS "/revisions/{id}/tags/{tag}",
     DOCS "/revisions/{id}/tags/{tag}", K_LIST | K_GET | K_CREATE | K_DELETE | K_DELETE_ALL,
     PAGE_NONE, NULL,
     VIEW("tag", NULL, 1, "@key", {"TAG", "@key", COL_TEXT}, {"DATA", "@value", COL_TEXT}), NULL},
    {"validation", "validations", "revision", 1, DOCS "/revisions/{id}/validations",
     DOCS "/revisions/{id}/validations/{name}", DOCS "/revisions/{id}/validations/{name}",
     K_LIST | K_GET, PAGE_NONE, NULL,
     VIEW("validation", "results", 0, "name", {"NAME", "name", COL_TEXT},
          {"STATUS", "status", COL_TEXT}),
     NULL},
    {"validation-detail", "validation-details", "revision", 0,
     DOCS "/revisions/{id}/validations/detail", NULL, NULL, K_LIST, PAGE_NONE, NULL,
     VIEW("validation", "results", 0, "name", {"NAME", "name", COL_TEXT},
          {"STATUS", "status", COL_TEXT}, {"VALIDATOR", "validator.name", COL_TEXT},
          {"ERRORS", "errors", COL_COUNT}),
     NULL},
    {"validation-entry", "validation-entries", "revision", 2, NULL,
     DOCS "/revisions/{id}/validations/{name}/entries/{entry}", NULL, K_GET, PAGE_NONE, NULL, NULL,
     NULL},
};
#define KIND_COUNT (sizeof(kinds) / sizeof(kinds[0]))

const char *const ctl_kind_names[] = {"organizations",
                                      "users",
                                      "members",
                                      "clients",
                                      "keys",
                                      "tokens",
                                      "principal",
                                      "permissions",
                                      "policies",
                                      "policy-revision",
                                      "revision-groups",
                                      "policy-groups",
                                      "lock",
                                      "nodes",
                                      "cookbooks",
                                      "cookbook-artifact",
                                      "clusters",
                                      "facts",
                                      "events",
                                      "revisions",
                                      "documents",
                                      "tags",
                                      "validations",
                                      "validation-details",
                                      "validation-entry",
                                      NULL};

/* ---- the operations each verb calls (purserctl operations) ------------------------------------
 */

void ctl_kind_operations(void (*each)(void *ctx, const char *method, const char *path,
                                      const char *command),
                         void *ctx)
{
    for (size_t i = 0; i < KIND_COUNT; i++) {
        const struct kind *k = &kinds[i];
        char command[96];
#define EACH(verb, method, path, format, noun)                                                     \
    if ((k->verbs & (verb)) && (path)) {                                                           \
        snprintf(command, sizeof(command), format, noun);                                          \
        each(ctx, method, path, command);                                                          \
    }
        EACH(K_LIST, "GET", k->list, "get %s", k->plural);
        EACH(K_GET, "GET", k->item, "get %s", k->name);
        EACH(K_CREATE, "POST", k->create, "create %s", k->name);
        EACH(K_REPLACE, "PUT", k->item, "replace %s", k->name);
        EACH(K_PATCH, "PATCH", k->item, "patch %s", k->name);
        EACH(K_DELETE, "DELETE", k->item, "delete %s", k->name);
        EACH(K_DELETE_ALL, "DELETE", k->list, "delete %s --all", k->plural);
#undef EACH
    }
}

/* ---- finding the kind ------------------------------------------------------------------------ */

/* The parents' options the verbs take. */
static const char *const parent_options[] = {
    "user", "client", "policy-group", "policy", "revision", "cluster", NULL};

struct target {
    const struct kind *kind;
    const char *values[8]; /* the parents' values, then the names */
    size_t count;
};

static int parent_given(const char *const *given, const char *name)
{
    for (size_t i = 0; parent_options[i]; i++)
        if (!strcmp(parent_options[i], name))
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
static const struct kind *kind_find(const char *typed, const char *const *given, unsigned verb)
{
    const struct kind *named = NULL, *best = NULL;
    int best_score = -1;
    for (size_t i = 0; i < KIND_COUNT; i++) {
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
static int names_wanted(const struct kind *k, unsigned verb)
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

static const char *verb_name(unsigned verb)
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

static int is_document_api(const struct kind *k)
{
    const char *t = k->list ? k->list : k->item ? k->item : k->create;
    return t && !strncmp(t, DOCS "/", strlen(DOCS) + 1);
}

/* The newest document revision's id (when --revision is not given). */
static const char *latest_revision(struct ctl *ctl)
{
    struct ctl_request request = {.method = "GET",
                                  .template = DOCS "/revisions",
                                  .values = NULL,
                                  .query = "sort=id&order=desc&limit=1"};
    json_t *answer = NULL;
    const char *id = NULL;
    if (ctl_call_json(ctl, &request, &answer) == CTL_OK) {
        json_t *first = json_array_get(json_object_get(answer, "results"), 0);
        if (json_is_integer(json_object_get(first, "id")))
            id = ctl_printf(ctl, "%lld",
                            (long long)json_integer_value(json_object_get(first, "id")));
        else
            ctl_error(CTL_NOTFOUND, "there is no document revision yet");
    }
    json_decref(answer);
    return id;
}

/* Fills t from the kind's parents (given) and the names (args). */
static int target_fill(struct ctl *ctl, struct target *t, const char *const *given, char **args,
                       int nargs)
{
    char parents[64];
    snprintf(parents, sizeof(parents), "%s", t->kind->parents ? t->kind->parents : "");
    for (char *save = NULL, *p = strtok_r(parents, " ", &save); p; p = strtok_r(NULL, " ", &save))
        for (size_t i = 0; parent_options[i]; i++)
            if (!strcmp(parent_options[i], p)) {
                const char *v = given[i];
                if (!v && !strcmp(p, "revision") && !(v = latest_revision(ctl)))
                    return CTL_NOTFOUND;
                if (!v && !strcmp(p, "user"))
                    v = ctl_whoami(ctl);
                if (!v)
                    return ctl_error(CTL_USAGE, "%s needs --%s NAME", t->kind->plural, p);
                t->values[t->count++] = v;
            }
    for (int i = 0; i < nargs && t->count < 7; i++) {
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
    t->values[t->count] = NULL;
    return CTL_OK;
}

/* ---- the verbs ------------------------------------------------------------------------------- */

struct verb_options {
    const char *given[8]; /* parent_options' values */
    const char *file, *patch, *selector, *filter, *sort, *page_size, *query;
    const char *if_match;
    int all;
};

/* Parses the verb's options; *first gets the index of the first positional argument. */
static int verb_parse(const struct ctl_command *self, int argc, char **argv, struct verb_options *o,
                      int *first)
{
    static const struct option options[] = {
        {"user", required_argument, NULL, 0},         {"client", required_argument, NULL, 1},
        {"policy-group", required_argument, NULL, 2}, {"policy", required_argument, NULL, 3},
        {"revision", required_argument, NULL, 4},     {"cluster", required_argument, NULL, 5},
        {"filename", required_argument, NULL, 'f'},   {"patch", required_argument, NULL, 'p'},
        {"selector", required_argument, NULL, 'l'},   {"filter", required_argument, NULL, 'F'},
        {"sort", required_argument, NULL, 'S'},       {"page-size", required_argument, NULL, 'P'},
        {"query", required_argument, NULL, 'q'},      {"all", no_argument, NULL, 'A'},
        {"if-match", required_argument, NULL, 'M'},   {NULL, 0, NULL, 0}};
    int opt;
    memset(o, 0, sizeof(*o));
    while ((opt = getopt_long(argc, argv, "f:p:l:", options, NULL)) != -1)
        switch (opt) {
        case 0:
        case 1:
        case 2:
        case 3:
        case 4:
        case 5: o->given[opt] = optarg; break;
        case 'f': o->file = optarg; break;
        case 'p': o->patch = optarg; break;
        case 'l': o->selector = optarg; break;
        case 'F': o->filter = optarg; break;
        case 'S': o->sort = optarg; break;
        case 'P': o->page_size = optarg; break;
        case 'q': o->query = optarg; break;
        case 'A': o->all = 1; break;
        case 'M': o->if_match = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    if (optind >= argc)
        return ctl_usage(self, "which kind? (%s, ...)", ctl_kind_names[0]);
    *first = optind;
    return CTL_OK;
}

/* Resolves kind, parents and names for verb. */
static int target_of(struct ctl *ctl, const struct ctl_command *self, unsigned verb,
                     const struct verb_options *o, char **args, int nargs, struct target *t)
{
    int want, named = 0;
    memset(t, 0, sizeof(*t));
    if (!(t->kind = kind_find(args[0], o->given, verb)))
        return ctl_usage(self, "unknown kind %s (purserctl %s --help lists them)", args[0],
                         self->name);
    if (!(t->kind->verbs & verb))
        return ctl_error(CTL_USAGE, "%s are not %s by purserctl %s", t->kind->plural,
                         verb_name(verb), self->name);
    want = names_wanted(t->kind, verb);
    if (verb == K_CREATE && t->kind->name_field)
        named = nargs - 1 == want + 1 || (o->file && nargs - 1 == want);
    if (nargs - 1 != want && !named)
        return ctl_usage(self, "%s %s takes %d name%s", self->name, t->kind->name,
                         want + (verb == K_CREATE && t->kind->name_field),
                         want + (verb == K_CREATE && t->kind->name_field) == 1 ? "" : "s");
    return target_fill(ctl, t, o->given, args + 1, nargs - 1 - (named && nargs - 1 > want));
}

/* Follows a list's pages into one answer: page_token's items, or the event feed's since. */
static int list_all(struct ctl *ctl, const struct target *t, const struct verb_options *o,
                    json_t **out, struct ctl_answer *raw)
{
    struct buf query = BUF_INIT;
    struct ctl_request request = {.method = "GET", .template = t->kind->list, .values = t->values};
    const char *rows = t->kind->view ? t->kind->view->rows : NULL;
    char *token = NULL;
    long long since = 0;
    int rc;

    if (is_document_api(t->kind) && ctl->output == OUT_YAML)
        request.accept = "application/x-yaml";
    *out = NULL;
    do {
        json_t *page = NULL;
        buf_reset(&query);
        if (o->selector)
            ctl_query_add(&query, t->kind->paging == PAGE_TOKEN ? "labels" : "metadata.label",
                          o->selector);
        if (o->filter)
            ctl_query_add(&query, "filter", o->filter);
        if (o->sort)
            ctl_query_add(&query, "sort", o->sort);
        if (o->page_size)
            ctl_query_add(&query, "page_size", o->page_size);
        if (o->query)
            buf_printf(&query, "%s%s", query.len ? "&" : "", o->query);
        if (token)
            ctl_query_add(&query, "page_token", token);
        if (t->kind->paging == PAGE_SINCE)
            buf_printf(&query, "%ssince=%lld", query.len ? "&" : "", since);
        request.query = query.len ? query.data : NULL;
        if (request.accept) { /* YAML straight from the document API */
            rc = ctl_call(ctl, &request, raw);
            break;
        }
        if ((rc = ctl_call_json(ctl, &request, &page)))
            break;
        free(token);
        token = NULL;
        if (!*out)
            *out = json_incref(page);
        else
            json_array_extend(json_object_get(*out, rows), json_object_get(page, rows));
        if (t->kind->paging == PAGE_TOKEN &&
            json_string_length(json_object_get(page, "next_page_token")))
            token = strdup(json_string_value(json_object_get(page, "next_page_token")));
        if (t->kind->paging == PAGE_SINCE && json_array_size(json_object_get(page, "events"))) {
            since = json_integer_value(json_object_get(page, "next"));
            token = strdup("");
        }
        json_decref(page);
    } while (token);
    if (*out && t->kind->paging == PAGE_TOKEN)
        json_object_set_new(*out, "next_page_token", json_string(""));
    if (*out && t->kind->paging == PAGE_SINCE)
        json_object_set_new(*out, "next", json_integer(since));
    free(token);
    buf_release(&query);
    return rc;
}

int cmd_get(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("get");
    struct verb_options o;
    struct target t;
    struct ctl_answer raw = {0};
    json_t *answer = NULL;
    int first, rc = verb_parse(self, argc, argv, &o, &first);
    unsigned verb;

    if (rc)
        return rc;
    {
        const struct kind *list = kind_find(argv[first], o.given, K_LIST);
        verb = list && (list->verbs & K_LIST) && argc - first - 1 == names_wanted(list, K_LIST)
                   ? K_LIST
                   : K_GET;
    }
    if ((rc = target_of(ctl, self, verb, &o, argv + first, argc - first, &t)))
        return rc;
    if (verb == K_LIST)
        rc = list_all(ctl, &t, &o, &answer, &raw);
    else {
        struct ctl_request request = {
            .method = "GET", .template = t.kind->item, .values = t.values};
        if (is_document_api(t.kind) && ctl->output == OUT_YAML)
            request.accept = "application/x-yaml";
        rc = request.accept ? ctl_call(ctl, &request, &raw) : ctl_call_json(ctl, &request, &answer);
    }
    if (!rc && raw.body.data)
        fputs(raw.body.data, stdout);
    else if (!rc)
        rc = ctl_print(ctl, answer, verb == K_LIST ? t.kind->view : NULL, NULL);
    json_decref(answer);
    ctl_answer_release(&raw);
    return rc;
}

int cmd_describe(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("describe");
    struct verb_options o;
    struct target t;
    json_t *answer = NULL;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (rc || (rc = target_of(ctl, self, K_GET, &o, argv + first, argc - first, &t)))
        return rc;
    struct ctl_request request = {.method = "GET", .template = t.kind->item, .values = t.values};
    if ((rc = ctl_call_json(ctl, &request, &answer)))
        return rc;
    printf("%s %s\n", t.kind->name, argv[argc - 1]);
    ctl_print_yaml(stdout, answer);
    json_decref(answer);
    /* the kinds that hang off this one */
    char related[64];
    snprintf(related, sizeof(related), "%s", t.kind->related ? t.kind->related : "");
    for (char *save = NULL, *r = strtok_r(related, " ", &save); r && !rc;
         r = strtok_r(NULL, " ", &save)) {
        struct verb_options child = {0};
        struct target ct = {0};
        struct ctl_answer raw = {0};
        json_t *list = NULL;
        for (size_t i = 0; parent_options[i]; i++)
            if (!strcmp(parent_options[i], t.kind->name))
                child.given[i] = argv[argc - 1];
        if (!(ct.kind = kind_find(r, child.given, K_LIST)) ||
            target_fill(ctl, &ct, child.given, NULL, 0))
            continue;
        printf("\n%s:\n", ct.kind->plural);
        enum ctl_output was = ctl->output;
        ctl->output = OUT_TABLE;
        if (list_all(ctl, &ct, &child, &list, &raw) == CTL_OK)
            ctl_print(ctl, list, ct.kind->view, NULL);
        ctl->output = was;
        json_decref(list);
        ctl_answer_release(&raw);
    }
    return rc;
}

/* Sets body's value at a dotted path to name, making the objects on the way. */
static void set_name(json_t *body, const char *path, const char *name)
{
    const char *dot;
    while ((dot = strchr(path, '.'))) {
        char part[64];
        json_t *next;
        snprintf(part, sizeof(part), "%.*s", (int)(dot - path), path);
        if (!json_is_object(next = json_object_get(body, part)))
            json_object_set_new(body, part, next = json_object());
        body = next;
        path = dot + 1;
    }
    json_object_set_new(body, path, json_string(name));
}

/* Sends body (JSON) to the kind's path with method, printing the answer. */
static int send_body(struct ctl *ctl, const char *method, const char *template,
                     const char *const *values, const json_t *body, const char *content_type,
                     const char *if_match)
{
    char *text = NULL;
    if (!strncmp(template, DOCS "/", strlen(DOCS) + 1)) { /* the document API takes YAML only */
        struct buf yaml = BUF_INIT;
        json_t *docs = json_pack("[O]", body);
        struct purser_error err;
        if (!yaml_codec_emit(&yaml, docs, &err))
            text = buf_detach(&yaml, NULL);
        buf_release(&yaml);
        json_decref(docs);
        content_type = "application/x-yaml";
    } else
        text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
    struct ctl_request request = {.method = method,
                                  .template = template,
                                  .values = values,
                                  .query = NULL,
                                  .content_type = content_type,
                                  .body = text,
                                  .body_len = text ? strlen(text) : 0};
    struct ctl_answer answer;
    json_t *value;
    int rc;

    request.if_match = if_match;
    rc = ctl_call(ctl, &request, &answer);
    free(text);
    if (!rc) {
        value = json_loadb(answer.body.data, answer.body.len, JSON_DECODE_ANY, NULL);
        if (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE)
            ctl_print_yaml(stdout, value ? value : json_null());
        else
            ctl_print(ctl, value ? value : json_null(), NULL, answer.body.data);
        json_decref(value);
    }
    ctl_answer_release(&answer);
    return rc;
}

int cmd_create(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("create");
    struct verb_options o;
    struct target t;
    json_t *body = NULL;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (rc || (rc = target_of(ctl, self, K_CREATE, &o, argv + first, argc - first, &t)))
        return rc;
    if (o.file && (rc = ctl_read_value(&body, o.file)))
        return rc;
    if (!body)
        body = json_object();
    if (t.kind->name_field && argc - first - 1 > names_wanted(t.kind, K_CREATE))
        set_name(body, t.kind->name_field, argv[argc - 1]);
    rc = send_body(ctl, "POST", t.kind->create, t.values, body, "application/json", NULL);
    json_decref(body);
    return rc;
}

int cmd_replace(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("replace");
    struct verb_options o;
    struct target t;
    json_t *body = NULL;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (rc || (rc = target_of(ctl, self, K_REPLACE, &o, argv + first, argc - first, &t)))
        return rc;
    if (!o.file)
        return ctl_usage(self, "-f FILE: the whole new %s", t.kind->name);
    if ((rc = ctl_read_value(&body, o.file)))
        return rc;
    rc = send_body(ctl, "PUT", t.kind->item, t.values, body, "application/json", o.if_match);
    json_decref(body);
    return rc;
}

int cmd_patch(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("patch");
    struct verb_options o;
    struct target t;
    json_t *body = NULL;
    json_error_t error;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (rc || (rc = target_of(ctl, self, K_PATCH, &o, argv + first, argc - first, &t)))
        return rc;
    if (!!o.patch == !!o.file)
        return ctl_usage(self, "give the merge patch: -p JSON or -f FILE");
    if (o.patch && !(body = json_loads(o.patch, 0, &error)))
        return ctl_error(CTL_INVALID, "-p: %s", error.text);
    if (o.file && (rc = ctl_read_value(&body, o.file)))
        return rc;
    rc = send_body(ctl, "PATCH", t.kind->item, t.values, body, "application/merge-patch+json",
                   o.if_match);
    json_decref(body);
    return rc;
}

int cmd_delete(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("delete");
    struct verb_options o;
    struct target t;
    struct ctl_answer answer;
    int first, rc = verb_parse(self, argc, argv, &o, &first);
    unsigned verb;

    if (rc)
        return rc;
    verb = o.all ? K_DELETE_ALL : K_DELETE;
    if (o.all && argc - first != 1)
        return ctl_usage(self, "--all deletes every %s: no names with it", argv[first]);
    if (o.all) {
        memset(&t, 0, sizeof(t));
        if (!(t.kind = kind_find(argv[first], o.given, K_DELETE_ALL)) ||
            !(t.kind->verbs & K_DELETE_ALL))
            return ctl_usage(self, "--all works on revisions (purge) and tags");
        if ((rc = target_fill(ctl, &t, o.given, NULL, 0)))
            return rc;
    } else if ((rc = target_of(ctl, self, verb, &o, argv + first, argc - first, &t)))
        return rc;
    struct ctl_request request = {
        .method = "DELETE", .template = o.all ? t.kind->list : t.kind->item, .values = t.values};
    request.if_match = o.if_match;
    if (!strcmp(t.kind->name, "organization") && o.query)
        request.query = o.query;
    if ((rc = ctl_call(ctl, &request, &answer)) == CTL_OK && !ctl->quiet) {
        if (ctl->output == OUT_JSON && answer.body.len)
            printf("%s\n", answer.body.data);
        else
            printf("%s %s deleted\n", t.kind->name, o.all ? "(all)" : argv[argc - 1]);
    }
    ctl_answer_release(&answer);
    return rc;
}
