/* verbs.c: purserctl's verbs of one request or two: promote, render, rollback, tag, validation,
 * facts, reset-token, token, health, version, api. */
#include "ctl.h"

#include "codec/yaml_codec.h"
#include "config/config.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* Prints a JSON answer: -o json/yaml/name as asked, else as YAML (one object reads best so). */
static int print_answer(struct ctl *ctl, const json_t *answer, const char *kind, const char *name)
{
    if (ctl->output == OUT_NAME) {
        printf("%s/%s\n", kind, name);
        return CTL_OK;
    }
    if (ctl->output == OUT_JSON)
        return ctl_print(ctl, answer, NULL, NULL);
    return ctl_print_yaml(stdout, answer);
}

/* A document API write with a YAML body (value may be NULL: an empty body). */
static int docs_write(struct ctl *ctl, const char *template, const char *const *values,
                      const json_t *value, json_t **out)
{
    struct buf body = BUF_INIT;
    struct ctl_request request = {.method = "POST", .template = template, .values = values};
    int rc = value ? ctl_request_yaml(&request, &body, value) : CTL_OK;
    if (!rc)
        rc = ctl_call_json(ctl, &request, out);
    buf_release(&body);
    return rc;
}

/* ---- promote ------------------------------------------------------------------------------ */

int cmd_promote(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"from", required_argument, NULL, 'f'},
                                            {"to", required_argument, NULL, 't'},
                                            {"revision", required_argument, NULL, 'r'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("promote");
    const char *from = NULL, *to = NULL, *revision = NULL;
    json_t *answer = NULL;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
        switch (opt) {
        case 'f': from = optarg; break;
        case 't': to = optarg; break;
        case 'r': revision = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    if (!to || !!from == !!revision)
        return ctl_usage(self, "--to GROUP, and either --from GROUP or a POLICY with --revision");
    if (revision) {
        if (optind + 1 != argc)
            return ctl_usage(self, "--revision points one POLICY");
        const char *values[] = {to, argv[optind], revision, NULL};
        struct ctl_request request = {.method = "PUT",
                                      .template = ORG "/policy_groups/{group}/policies/{name}/"
                                                      "revision/{rev}",
                                      .values = values};
        rc = ctl_call_json(ctl, &request, &answer);
        if (!rc && (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE))
            printf("policy group %s: %s at %s\n", to, argv[optind], revision);
        else if (!rc)
            rc = print_answer(ctl, answer, "policy-group", to);
        json_decref(answer); /* (NULL after a failure) */
        return rc;
    }
    json_t *body = json_pack("{s:s}", "from", from);
    if (optind < argc) {
        json_t *names = json_array();
        for (int i = optind; i < argc; i++)
            json_array_append_new(names, json_string(argv[i]));
        json_object_set_new(body, "policies", names);
    }
    char *text = json_dumps(body, JSON_COMPACT);
    const char *values[] = {to, NULL};
    struct ctl_request request = {.method = "POST",
                                  .template = ORG "/policy_groups/{group}/promote",
                                  .values = values,
                                  .content_type = "application/json",
                                  .body = text,
                                  .body_len = strlen(text)};
    rc = ctl_call_json(ctl, &request, &answer);
    if (!rc && (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE)) {
        const char *name;
        json_t *v, *policies = json_object_get(answer, "policies");
        printf("policy group %s now points as %s does:\n", to, from);
        json_object_foreach (policies, name, v)
            printf("  %s  %s\n", name,
                   json_is_string(v) ? ctl_text(v, NULL) : ctl_text(v, "revision_id"));
    } else if (!rc)
        rc = print_answer(ctl, answer, "policy-group", to);
    free(text);
    json_decref(body);
    json_decref(answer);
    return rc;
}

/* ---- render, rollback, tag, validation ------------------------------------------------------ */

int cmd_render(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"schema", required_argument, NULL, 's'},      {"name", required_argument, NULL, 'n'},
        {"selector", required_argument, NULL, 'l'},    {"bucket", required_argument, NULL, 'b'},
        {"cleartext-secrets", no_argument, NULL, 'c'}, {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("render");
    static const struct ctl_column columns[] = {
        {"SCHEMA", "schema", COL_TEXT},
        {"NAME", "metadata.name", COL_TEXT},
        {"LAYER", "metadata.layeringDefinition.layer", COL_TEXT},
        {"BUCKET", "status.bucket", COL_TEXT},
        {NULL, NULL, 0}};
    static const struct ctl_view view = {"document", NULL, 0, "metadata.name", columns};
    struct buf query = BUF_INIT;
    struct ctl_answer answer;
    const char *id;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "l:", options, NULL)) != -1)
        switch (opt) {
        case 's': ctl_query_add(&query, "schema", optarg); break;
        case 'n': ctl_query_add(&query, "metadata.name", optarg); break;
        case 'l': ctl_query_add(&query, "metadata.label", optarg); break;
        case 'b': ctl_query_add(&query, "status.bucket", optarg); break;
        case 'c': ctl_query_add(&query, "cleartext-secrets", "true"); break;
        default: return ctl_usage(self, NULL);
        }
    if (argc - optind > 1)
        return ctl_usage(self, "one revision at most");
    id = optind < argc ? argv[optind] : NULL;
    if (!id && (rc = ctl_newest_revision(ctl, &id))) {
        buf_release(&query);
        return rc;
    }
    const char *values[] = {id, NULL};
    struct ctl_request request = {.method = "GET",
                                  .template = DOCS "/revisions/{id}/rendered-documents",
                                  .values = values,
                                  .query = query.len ? query.data : NULL};
    /* the rendered site is read as YAML: that is the default here, as Deckhand answers */
    if (ctl->output != OUT_JSON && ctl->output != OUT_TABLE && ctl->output != OUT_NAME)
        request.accept = "application/x-yaml";
    rc = ctl_call(ctl, &request, &answer);
    if (!rc && request.accept)
        fputs(answer.body.data, stdout);
    else if (!rc) {
        json_t *docs = json_loadb(answer.body.data, answer.body.len, 0, NULL);
        rc = docs ? ctl_print(ctl, docs, &view, answer.body.data)
                  : ctl_error(CTL_FAILED, "the rendered documents are not JSON");
        json_decref(docs);
    }
    ctl_answer_release(&answer);
    buf_release(&query);
    return rc;
}

static int print_revision(struct ctl *ctl, const json_t *answer, const char *what)
{
    if (ctl->output != OUT_DEFAULT && ctl->output != OUT_TABLE)
        return print_answer(
            ctl, answer, "revision",
            ctl_printf(ctl, "%lld", (long long)json_integer_value(json_object_get(answer, "id"))));
    printf("%s: revision %lld\n", what,
           (long long)json_integer_value(json_object_get(answer, "id")));
    return CTL_OK;
}

int cmd_rollback(struct ctl *ctl, int argc, char **argv)
{
    json_t *answer = NULL;
    int rc;
    if (argc != 2)
        return ctl_usage(ctl_command_find("rollback"), "one revision");
    const char *values[] = {argv[1], NULL};
    rc = docs_write(ctl, DOCS "/rollback/{id}", values, NULL, &answer);
    if (!rc) {
        rc = print_revision(ctl, answer, ctl_printf(ctl, "rolled back to %s", argv[1]));
        json_decref(answer);
    }
    return rc;
}

int cmd_tag(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"filename", required_argument, NULL, 'f'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("tag");
    json_t *data = NULL, *answer = NULL;
    int opt, rc = CTL_OK;

    while (!rc && (opt = getopt_long(argc, argv, "f:", options, NULL)) != -1)
        switch (opt) {
        case 'f': rc = ctl_read_value(&data, optarg); break;
        default: return ctl_usage(self, NULL);
        }
    if (!rc && argc - optind != 2)
        rc = ctl_usage(self, "a REVISION and a TAG");
    if (!rc) {
        const char *values[] = {argv[optind], argv[optind + 1], NULL};
        rc = docs_write(ctl, DOCS "/revisions/{id}/tags/{tag}", values, data, &answer);
    }
    if (!rc && (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE))
        printf("revision %s tagged %s\n", argv[optind], argv[optind + 1]);
    else if (!rc)
        rc = print_answer(ctl, answer, "tag", argv[optind + 1]);
    json_decref(data);
    json_decref(answer);
    return rc;
}

int cmd_validation(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"status", required_argument, NULL, 's'},
                                            {"filename", required_argument, NULL, 'f'},
                                            {"validator", required_argument, NULL, 'v'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("validation");
    json_t *body = json_object(), *errors = NULL, *answer = NULL;
    const char *status = NULL, *validator = NULL;
    int opt, rc = CTL_OK;

    while (!rc && (opt = getopt_long(argc, argv, "f:", options, NULL)) != -1)
        switch (opt) {
        case 's': status = optarg; break;
        case 'v': validator = optarg; break;
        case 'f': rc = ctl_read_value(&errors, optarg); break;
        default: rc = ctl_usage(self, NULL);
        }
    if (!rc && (argc - optind != 3 || strcmp(argv[optind], "report") || !status))
        rc = ctl_usage(self, "report REVISION NAME --status success|failure");
    if (!rc) {
        const char *values[] = {argv[optind + 1], argv[optind + 2], NULL};
        json_object_set_new(body, "status", json_string(status));
        json_object_set_new(body, "validator",
                            json_pack("{s:s, s:s}", "name", validator ? validator : "purserctl",
                                      "version", PURSER_VERSION));
        if (errors)
            json_object_set(body, "errors",
                            json_is_array(errors) ? errors : json_object_get(errors, "errors"));
        rc = docs_write(ctl, DOCS "/revisions/{id}/validations/{name}", values, body, &answer);
        if (!rc && (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE))
            printf("revision %s: validation %s reported %s\n", argv[optind + 1], argv[optind + 2],
                   status);
        else if (!rc)
            rc = print_answer(ctl, answer, "validation", argv[optind + 2]);
    }
    json_decref(body);
    json_decref(errors);
    json_decref(answer);
    return rc;
}

/* ---- clusters: facts, reset-token ----------------------------------------------------------- */

int cmd_facts(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"filename", required_argument, NULL, 'f'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("facts");
    const char *file = NULL;
    json_t *facts = NULL, *answer = NULL;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "f:", options, NULL)) != -1)
        switch (opt) {
        case 'f': file = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    if (argc - optind != 2 || strcmp(argv[optind], "report") || !file)
        return ctl_usage(self, "report CLUSTER -f FILE");
    rc = ctl_read_value(&facts, file);
    if (!rc) {
        char *text = json_dumps(facts, JSON_COMPACT);
        const char *values[] = {argv[optind + 1], NULL};
        struct ctl_request request = {.method = "PUT",
                                      .template = ORG "/clusters/{id}/facts",
                                      .values = values,
                                      .content_type = "application/json",
                                      .body = text,
                                      .body_len = strlen(text)};
        rc = ctl_call_json(ctl, &request, &answer);
        if (!rc && (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE))
            printf("cluster %s: facts reported (revision %s)\n", argv[optind + 1],
                   ctl_text(answer, "metadata.revision"));
        else if (!rc)
            rc = print_answer(ctl, answer, "cluster", argv[optind + 1]);
        free(text);
        json_decref(facts);
        json_decref(answer);
    }
    return rc;
}

int cmd_reset_token(struct ctl *ctl, int argc, char **argv)
{
    json_t *answer = NULL;
    int rc;
    if (argc != 2)
        return ctl_usage(ctl_command_find("reset-token"), "one cluster");
    const char *values[] = {argv[1], NULL};
    struct ctl_request request = {
        .method = "POST", .template = ORG "/clusters/{id}/bootstrap-token", .values = values};
    rc = ctl_call_json(ctl, &request, &answer);
    if (!rc) {
        if (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE)
            printf("cluster %s: a new bootstrap token (shown once; the old one no longer works)\n"
                   "token:       %s\nexpires:     %s\ninstall URL: %s\n",
                   argv[1], ctl_text(answer, "bootstrap_token.token"),
                   ctl_text(answer, "bootstrap_token.expires_at"),
                   ctl_text(answer, "bootstrap_token.install_url"));
        else {
            if (ctl->output == OUT_NAME) /* the token would be lost */
                fprintf(stderr, "purserctl: note: the install URL, shown this once:\n%s\n",
                        ctl_text(answer, "bootstrap_token.install_url"));
            rc = print_answer(ctl, answer, "cluster", argv[1]);
        }
        json_decref(answer);
    }
    return rc;
}

/* ---- token ---------------------------------------------------------------------------------- */

static const struct ctl_column token_columns[] = {{"ID", "id", COL_TEXT},
                                                  {"DESCRIPTION", "description", COL_TEXT},
                                                  {"ACTIVE", "active", COL_TEXT},
                                                  {"CREATED", "created_at", COL_TIME},
                                                  {"EXPIRES", "expires_at", COL_TIME},
                                                  {"LAST USED", "last_used_at", COL_TIME},
                                                  {NULL, NULL, 0}};
static const struct ctl_view token_view = {"token", NULL, 0, "id", token_columns};

/* The user whose tokens: --user, else the context's own principal. */
static int token_user(struct ctl *ctl, const char *given, const char **out)
{
    *out = given;
    return given ? CTL_OK : ctl_whoami(ctl, out);
}

struct token_args {
    const char *values[3]; /* the user, the token's id */
    const char *verb, *description, *expires;
};

static int token_list(struct ctl *ctl, const struct token_args *a)
{
    struct ctl_request request = {
        .method = "GET", .template = "/users/{user}/tokens", .values = a->values};
    json_t *answer = NULL;
    int rc = ctl_call_json(ctl, &request, &answer);
    if (!rc)
        rc = ctl_print(ctl, answer, &token_view, NULL);
    json_decref(answer);
    return rc;
}

/* The new token's body: its description, and its lifetime (days, as people count them; the
 * API takes seconds). */
static int token_body(const struct token_args *a, json_t *body)
{
    char *end = NULL;
    long long days = a->expires ? strtoll(a->expires, &end, 10) : 0;
    if (a->expires && (!*a->expires || *end || days < 1 || days > 36500))
        return ctl_error(CTL_USAGE, "--expires-in: a number of days from 1 to 36500, not %s",
                         a->expires);
    if (a->description)
        json_object_set_new(body, "description", json_string(a->description));
    if (a->expires)
        json_object_set_new(body, "expires_in", json_integer(days * 86400));
    return CTL_OK;
}

static int token_create(struct ctl *ctl, const struct token_args *a)
{
    json_t *body = json_object(), *answer = NULL;
    char *text = NULL;
    int rc = token_body(a, body);
    if (!rc && (text = json_dumps(body, JSON_COMPACT))) {
        struct ctl_request request = {.method = "POST",
                                      .template = "/users/{user}/tokens",
                                      .values = a->values,
                                      .content_type = "application/json",
                                      .body = text,
                                      .body_len = strlen(text)};
        rc = ctl_call_json(ctl, &request, &answer);
    }
    if (!rc && (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE))
        printf("token %s for %s (shown once; keep it secret):\n%s\n", ctl_text(answer, "id"),
               a->values[0], ctl_text(answer, "token"));
    else if (!rc) {
        if (ctl->output == OUT_NAME) /* the token itself would be lost */
            fprintf(stderr, "purserctl: note: the token, shown this once:\n%s\n",
                    ctl_text(answer, "token"));
        rc = print_answer(ctl, answer, "token", ctl_text(answer, "id"));
    }
    free(text);
    json_decref(body);
    json_decref(answer);
    return rc;
}

static int token_revoke(struct ctl *ctl, const struct token_args *a)
{
    struct ctl_request request = {
        .method = "DELETE", .template = "/users/{user}/tokens/{id}", .values = a->values};
    struct ctl_answer raw;
    int rc = ctl_call(ctl, &request, &raw);
    if (!rc && !ctl->quiet)
        printf("token %s revoked\n", a->values[1]);
    ctl_answer_release(&raw);
    return rc;
}

/* token disable ID, token enable ID */
static int token_switch(struct ctl *ctl, const struct token_args *a)
{
    const char *body = a->verb[0] == 'd' ? "{\"active\":false}" : "{\"active\":true}";
    struct ctl_request request = {.method = "PATCH",
                                  .template = "/users/{user}/tokens/{id}",
                                  .values = a->values,
                                  .content_type = "application/merge-patch+json",
                                  .body = body,
                                  .body_len = strlen(body)};
    json_t *answer = NULL;
    int rc = ctl_call_json(ctl, &request, &answer);
    if (!rc && (ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE))
        printf("token %s %sd\n", a->values[1], a->verb);
    else if (!rc)
        rc = print_answer(ctl, answer, "token", a->values[1]);
    json_decref(answer);
    return rc;
}

static const struct {
    const char *verb;
    int takes_id;
    int (*run)(struct ctl *ctl, const struct token_args *a);
} token_verbs[] = {{"create", 0, token_create},
                   {"list", 0, token_list},
                   {"revoke", 1, token_revoke},
                   {"disable", 1, token_switch},
                   {"enable", 1, token_switch}};

int cmd_token(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"user", required_argument, NULL, 'u'},
                                            {"description", required_argument, NULL, 'd'},
                                            {"expires-in", required_argument, NULL, 'e'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("token");
    struct token_args a = {{NULL, NULL, NULL}, NULL, NULL, NULL};
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
        switch (opt) {
        case 'u': a.values[0] = optarg; break;
        case 'd': a.description = optarg; break;
        case 'e': a.expires = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    a.verb = optind < argc ? argv[optind] : "";
    for (size_t i = 0; i < sizeof(token_verbs) / sizeof(token_verbs[0]); i++) {
        if (strcmp(a.verb, token_verbs[i].verb))
            continue;
        if (argc - optind != 1 + token_verbs[i].takes_id)
            return ctl_usage(self, "token %s takes %s", a.verb,
                             token_verbs[i].takes_id ? "a token's ID" : "no argument");
        a.values[1] = token_verbs[i].takes_id ? argv[optind + 1] : NULL;
        rc = token_user(ctl, a.values[0], &a.values[0]);
        if (!rc)
            rc = token_verbs[i].run(ctl, &a);
        return rc;
    }
    return ctl_usage(self, "token %s: which? create, list, revoke, disable, enable", a.verb);
}

/* ---- health, version, api ------------------------------------------------------------------- */

int cmd_health(struct ctl *ctl, int argc, char **argv)
{
    int deep = argc == 2 && !strcmp(argv[1], "--deep"), rc;
    struct ctl_answer answer;
    if (argc > 2 || (argc == 2 && !deep))
        return ctl_usage(ctl_command_find("health"), NULL);
    struct ctl_request request = {.method = "GET", .template = deep ? "/healthz/deep" : "/healthz"};
    if ((rc = ctl_call(ctl, &request, &answer)) == CTL_OK) {
        struct ctl_answer docs;
        /* the document API's health is at the root only, as Deckhand has it */
        struct ctl_request document_api = {
            .method = "GET", .template = DOCS "/health", .literal = 1};
        rc = ctl_call(ctl, &document_api, &docs);
        if (ctl->output == OUT_JSON)
            printf("%s\n", answer.body.data);
        else if (!rc)
            printf("%s: %s; document API: answers\n", ctl->context.url,
                   deep ? "up, database reachable, schema current" : "up");
        ctl_answer_release(&docs);
    }
    ctl_answer_release(&answer);
    return rc;
}

int cmd_version(struct ctl *ctl, int argc, char **argv)
{
    struct ctl_request request = {.method = "GET", .template = "/versions"};
    json_t *answer = NULL;
    int rc;
    (void)argv;
    if (argc != 1)
        return ctl_usage(ctl_command_find("version"), NULL);
    if (ctl->output == OUT_JSON || ctl->output == OUT_YAML) {
        if ((rc = ctl_call_json(ctl, &request, &answer)) == CTL_OK) {
            json_t *both = json_pack("{s:s, s:O}", "client", PURSER_VERSION, "server", answer);
            rc = ctl_print(ctl, both, NULL, NULL);
            json_decref(both);
        }
        json_decref(answer);
        return rc;
    }
    printf("purserctl %s\n", PURSER_VERSION);
    if ((rc = ctl_call_json(ctl, &request, &answer)) == CTL_OK) {
        const char *key;
        json_t *v;
        json_object_foreach (answer, key, v)
            printf("server document API %s (%s) at %s\n", key, ctl_text(v, "status"),
                   ctl_text(v, "path"));
    }
    json_decref(answer);
    return rc;
}

int cmd_api(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"filename", required_argument, NULL, 'f'},
                                            {"content-type", required_argument, NULL, 'c'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("api");
    const char *file = NULL, *type = NULL;
    struct buf body = BUF_INIT;
    struct ctl_answer answer;
    int opt, rc = CTL_OK;
    char *path, *query;

    while ((opt = getopt_long(argc, argv, "f:", options, NULL)) != -1)
        switch (opt) {
        case 'f': file = optarg; break;
        case 'c': type = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    if (argc - optind != 2 || argv[optind + 1][0] != '/')
        return ctl_usage(self, "a METHOD and a PATH starting with /");
    if (file)
        rc = ctl_read_file(&body, file);
    if (!rc) {
        path = ctl_printf(ctl, "%s", argv[optind + 1]);
        for (char *m = argv[optind]; *m; m++) /* HTTP methods are case-sensitive: GET, not get */
            *m = (char)toupper((unsigned char)*m);
        if ((query = strchr(path, '?')))
            *query++ = '\0';
        /* the path as given: its braces are not a template's */
        struct ctl_request request = {.method = argv[optind], .template = path, .query = query};
        request.accept = "*/*";
        request.literal = 1;
        if (file) {
            request.body = body.data;
            request.body_len = body.len;
            request.content_type = type ? type : "application/json";
        }
        rc = ctl_send(ctl, &request, &answer);
        if (!rc) {
            fwrite(answer.body.data, 1, answer.body.len, stdout);
            if (answer.status < 200 || answer.status >= 300)
                rc = ctl_exit_of_status(answer.status);
        }
        ctl_answer_release(&answer);
        buf_release(&body);
    }
    return rc;
}
