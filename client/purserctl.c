/* purserctl.c: the client for people and scripts: global options, the command table, help,
 * the operations list and the bash completion made from that table. */
#include "ctl.h"

#include "config/config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int cmd_operations(struct ctl *ctl, int argc, char **argv);
static int cmd_completion(struct ctl *ctl, int argc, char **argv);

const struct ctl_command ctl_commands[] = {
    {"login", cmd_login,
     "(--url URL [--ca FILE] [--org ORG] (--token T | --client NAME --key FILE | --sso "
     "[PROVIDER] [--device]) | --from STACK_ENV [--chef | --sso [PROVIDER] [--device]]) [--name "
     "CONTEXT]",
     "write a context (server, CA, organization, credential) and make it the current one; the "
     "credential is checked first. --sso signs in through an identity provider: in a browser "
     "(purserctl listens on 127.0.0.1 for the end of it; $BROWSER opens the address when set), "
     "or with --device by a code entered on another machine; the context keeps the session's end",
     "purserctl login --from var/stack.env\n"
     "  purserctl login --url https://purser.example:443 --org acme --client alice --key "
     "alice.pem\n"
     "  purserctl login --url https://purser.example:443 --org acme --sso corp",
     "GET " ORG "/permissions;GET /organizations;GET /auth/sso/providers;"
     "GET /auth/sso/{provider}/start;GET /auth/sso/callback;POST /auth/sso/session;"
     "POST /auth/sso/{provider}/device;POST /auth/sso/device/token",
     "url ca org token client key from name chef sso device", NULL, CMD_OFFLINE},
    {"logout", cmd_logout, "",
     "end the current context's session (a sign-in through an identity provider) on the server "
     "and forget its token",
     "purserctl logout", "POST /auth/sso/sign-out", "", NULL, 0},
    {"config", cmd_config,
     "get-contexts | current-context | use-context NAME | delete-context NAME",
     "show and choose the contexts of ~/.config/purser/config.yaml",
     "purserctl config use-context prod", "", "",
     "get-contexts current-context use-context delete-context", CMD_OFFLINE},
    {"get", cmd_get,
     "KIND [NAME...] [--user U|--client C|--policy-group G|--policy P|--revision "
     "R|--cluster C] [-l SELECTOR] [--filter EXPR] [--sort FIELD] [--page-size N] "
     "[--all-organizations [--organization ORG,...]]",
     "list a kind (every page), or show one (clusters --all-organizations: every "
     "organization's, for server admins); kinds: organizations users members clients keys "
     "tokens principal permissions policies policy-revisions policy-revision revision-groups "
     "policy-groups lock "
     "nodes cookbooks cookbook-artifact clusters facts events revisions documents tags validations "
     "validation-details validation-entry",
     "purserctl get clusters -l env=dev\n  purserctl get cluster c-edge-1 -o yaml\n"
     "  purserctl get clusters --filter 'dynamic_facts.kubernetes_version.gitVersion>=v1.29'\n"
     "  purserctl get clusters --all-organizations --organization acme,globex\n"
     "  purserctl get documents --revision 3 -o yaml",
     "(per kind: purserctl operations)",
     "user client policy-group policy revision cluster selector "
     "filter sort page-size query all-organizations organization",
     NULL, 0},
    {"describe", cmd_describe, "KIND NAME...", "show one thing in full, with what hangs off it",
     "purserctl describe cluster c-edge-1", "(per kind: purserctl operations)",
     "user client policy-group policy revision cluster", NULL, 0},
    {"create", cmd_create,
     "KIND [NAME...] [-f FILE] [--user U|--client C|--revision R|--cluster C]",
     "create one thing from FILE (JSON or YAML) or from its name alone",
     "purserctl create organization acme\n  purserctl create user alice -f alice.yaml\n"
     "  purserctl create tag released --revision 3 -f data.yaml",
     "(per kind: purserctl operations)", "filename user client revision cluster", NULL, 0},
    {"replace", cmd_replace, "KIND NAME... -f FILE [--if-match ETAG|*]",
     "replace one thing with FILE's content (PUT; a cluster at the revision it was read at: "
     "metadata.revision in FILE or --if-match, '*' for whatever is there)",
     "purserctl replace cluster c-edge-1 -f edge-1.yaml", "(per kind: purserctl operations)",
     "filename if-match user client", NULL, 0},
    {"patch", cmd_patch, "KIND NAME... (-p JSON | -f FILE) [--if-match ETAG]",
     "change some fields of a user, a cluster or a token (a JSON merge patch, RFC 7396, applied "
     "to what is there unless --if-match or its metadata.revision names the revision it must be)",
     "purserctl patch user alice -p '{\"active\": false}'", "(per kind: purserctl operations)",
     "patch filename if-match user", NULL, 0},
    {"delete", cmd_delete, "KIND NAME... | tags --all --revision R | revisions --all --yes",
     "delete one thing (revisions --all: purge every document revision; tags --all: a "
     "revision's tags)",
     "purserctl delete cluster c-edge-1\n  purserctl delete document example/Network/v1 "
     "oam-network",
     "(per kind: purserctl operations)", "all yes query if-match user client revision", NULL, 0},
    {"apply", cmd_apply, "-f FILE|- [--bucket NAME] [--append] [--policy-group G]",
     "create or update what a multi-document YAML file describes: Deckhand documents into their "
     "bucket, Policyfile locks pushed to a group (as chef push), an organization, its members' "
     "roles (added, never taken away), clusters and nodes; what is already so is left alone and "
     "said to be unchanged",
     "purserctl apply -f examples/site/site.yaml --bucket site\n"
     "  purserctl apply -f examples/policies/base.lock.json --policy-group dev",
     "PUT " DOCS "/buckets/{bucket}/documents;POST " DOCS "/documents;GET " DOCS
     "/revisions;GET " DOCS "/revisions/{id}/documents;POST " ORG
     "/policies/{name}/revisions;GET " ORG "/policy_groups/{group}/policies/{name};PUT " ORG
     "/policy_groups/{group}/policies/{name};GET /organizations/{name};POST /organizations;"
     "PUT /organizations/{name};GET " ORG "/users;POST " ORG "/users;GET " ORG
     "/clusters/{id};POST " ORG "/clusters;PUT " ORG "/clusters/{id};GET " ORG
     "/nodes/{node};POST " ORG "/nodes;PUT " ORG "/nodes/{node}",
     "filename bucket append policy-group", NULL, 0},
    {"diff", cmd_diff,
     "REVISION OTHER [--deep] | --groups FROM TO [--policy P] | -f FILE [--bucket B] "
     "[--policy-group G]",
     "what changes: between two document revisions (with --deep, the rendered documents), two "
     "policy groups, or a local file and the server: its bucket's documents, Policyfile locks "
     "(against --policy-group's, else the uploaded revision), clusters and nodes (exit 1 when "
     "they differ, as kubectl diff)",
     "purserctl diff 3 4 --deep\n  purserctl diff --groups dev prod\n"
     "  purserctl diff -f examples/site/site-v2.yaml --bucket site",
     "GET " DOCS "/revisions/{id}/diff/{other};GET " DOCS
     "/revisions/{id}/deepdiff/{other};GET " ORG "/policies/{name}/diff;GET " ORG
     "/policy_groups/{group};GET " DOCS "/revisions;GET " DOCS "/revisions/{id}/documents;GET " ORG
     "/policy_groups/{group}/policies/{name};GET " ORG "/policies/{name}/revisions/{rev};GET " ORG
     "/clusters/{id};GET " ORG "/nodes/{node}",
     "deep groups policy filename bucket policy-group", NULL, 0},
    {"promote", cmd_promote, "--to GROUP (--from GROUP [POLICY...] | POLICY --revision REV)",
     "point a group at what another group points at (all or the named policies, all or "
     "nothing), or one policy at an uploaded revision",
     "purserctl promote --from dev --to prod base\n  purserctl promote --to prod base --revision "
     "2b7c...",
     "POST " ORG "/policy_groups/{group}/promote;PUT " ORG
     "/policy_groups/{group}/policies/{name}/revision/{rev}",
     "from to revision", NULL, 0},
    {"collect", cmd_collect, "--keep N [--dry-run] [--policy P]...",
     "remove the policy revisions no group points at beyond the newest N of each policy (or of "
     "each --policy), then the cookbook artifacts no remaining revision names and the files only "
     "they used; with --dry-run, list what would go and remove nothing",
     "purserctl collect --keep 5 --dry-run\n  purserctl collect --keep 5 --policy base",
     "POST " ORG "/collect_policies", "keep dry-run policy", NULL, 0},
    {"render", cmd_render,
     "[REVISION] [--schema S] [--name N] [-l LABEL] [--bucket B] [--cleartext-secrets]",
     "a revision's documents layered, substituted and validated (default: the newest revision)",
     "purserctl render --schema example/Network/v1 -o yaml",
     "GET " DOCS "/revisions/{id}/rendered-documents;GET " DOCS "/revisions",
     "schema name selector bucket cleartext-secrets", NULL, 0},
    {"rollback", cmd_rollback, "REVISION",
     "a new revision with the documents of REVISION (0: none)", "purserctl rollback 3",
     "POST " DOCS "/rollback/{id}", "", NULL, 0},
    {"tag", cmd_tag, "REVISION TAG [-f DATA]",
     "tag a document revision (with an optional mapping of data)", "purserctl tag 4 released",
     "POST " DOCS "/revisions/{id}/tags/{tag}", "filename", NULL, 0},
    {"validation", cmd_validation,
     "report REVISION NAME --status success|failure [-f ERRORS] [--validator NAME]",
     "report a validation result for a document revision (as a validator such as Pegleg does)",
     "purserctl validation report 4 site-checks --status success",
     "POST " DOCS "/revisions/{id}/validations/{name}", "status filename validator", "report", 0},
    {"facts", cmd_facts, "report CLUSTER -f FILE",
     "report a cluster's dynamic facts (kept as a version)",
     "purserctl facts report c-edge-1 -f examples/facts.json", "PUT " ORG "/clusters/{id}/facts",
     "filename", "report", 0},
    {"git", cmd_git, "check [--cluster CLUSTER]",
     "whether you may fetch the organization's history repository (or a cluster's catalog), "
     "brought up to the latest revision; prints its URL for git clone (docs/inventory.md, "
     "\"Git repositories\")",
     "purserctl git check\n  git -c http.extraHeader=\"Authorization: Bearer $TOKEN\" clone "
     "$(purserctl git check --cluster c-edge-1)",
     "GET " ORG "/git-access;GET " ORG "/clusters/{id}/git-access", "cluster", "check", 0},
    {"reset-token", cmd_reset_token, "CLUSTER",
     "a new bootstrap token for a cluster (the old one stops working); shown once",
     "purserctl reset-token c-edge-1", "POST " ORG "/clusters/{id}/bootstrap-token", "", NULL, 0},
    {"bootstrap", cmd_bootstrap, "TOKEN|INSTALL_URL [--name CONTEXT] [--ca FILE] [--chef]",
     "redeem a cluster's bootstrap token and keep its credential as a context (its key beside "
     "the contexts file)",
     "purserctl bootstrap \"$INSTALL_URL\" --name edge-1", "GET /install/bootstrap.json",
     "name ca chef", NULL, CMD_OFFLINE},
    {"token", cmd_token,
     "create [--description D] [--expires-in DAYS] | list | revoke ID | disable ID | enable ID "
     "[--user U]",
     "your API tokens (or a user's, with --user): a new one is shown once",
     "purserctl token create --description ci --expires-in 30",
     "POST /users/{user}/tokens;GET /users/{user}/tokens;DELETE /users/{user}/tokens/{id};PATCH "
     "/users/{user}/tokens/{id};GET " ORG "/permissions",
     "user description expires-in", "create list revoke disable enable", 0},
    {"watch", cmd_watch,
     "[--since SEQ | --last N] [--kinds K,...] [--actor NAME] [--timeout SECONDS]",
     "follow the event feed as it happens (--last: its newest N first), resuming from the last "
     "seq after a disconnect",
     "purserctl watch --last 20 --kinds cluster,policy_group", "GET " ORG "/events",
     "since last kinds actor timeout", NULL, 0},
    {"export", cmd_export, "[-f FILE] [--secrets]",
     "the organization as a YAML stream of resources, streamed to FILE (mode 600) or stdout",
     "purserctl export -f acme.yaml", "GET " ORG "/export", "filename secrets", NULL, 0},
    {"import", cmd_import, "-f FILE",
     "write an export into the (empty) organization, all or nothing",
     "purserctl --org acme2 import -f acme.yaml", "POST " ORG "/import", "filename", NULL, 0},
    {"cookbook", cmd_cookbook,
     "upload DIR [--name N] [--identifier ID] | download NAME IDENTIFIER DIR",
     "a cookbook artifact (as chef push uploads them): its files through a sandbox, then its "
     "manifest; or its files back",
     "purserctl cookbook upload ./hello --identifier $(git rev-parse HEAD)",
     "POST " ORG "/sandboxes;PUT " ORG "/file_store/{checksum};PUT " ORG "/sandboxes/{id};PUT " ORG
     "/cookbook_artifacts/{name}/{identifier};GET " ORG
     "/cookbook_artifacts/{name}/{identifier};GET " ORG "/file_store/{checksum}",
     "name identifier", "upload download", 0},
    {"health", cmd_health, "[--deep]",
     "whether the server answers (with --deep: its database and schema)", "purserctl health --deep",
     "GET /healthz;GET /healthz/deep;GET " DOCS "/health", "deep", NULL, CMD_ANONYMOUS},
    {"version", cmd_version, "", "purserctl's version, the server's document API versions",
     "purserctl version", "GET /versions", "", NULL, 0},
    {"api", cmd_api, "METHOD PATH [-f FILE] [--content-type TYPE]",
     "any request, as purserctl signs it (the answer on stdout): also /metrics, /docs and "
     "/docs.yaml",
     "purserctl api GET /metrics\n  purserctl api GET /docs.yaml",
     "GET /metrics;GET /docs;GET /docs.yaml", "filename content-type", NULL, 0},
    {"operations", cmd_operations, "",
     "each API operation (as /docs has it) and the command that calls it",
     "purserctl operations -o json", "", "", NULL, CMD_OFFLINE},
    {"completion", cmd_completion, "bash",
     "the bash completion script, made from this command table",
     "purserctl completion bash > /etc/bash_completion.d/purserctl", "", "", "bash", CMD_OFFLINE},
};
const size_t ctl_command_count = sizeof(ctl_commands) / sizeof(ctl_commands[0]);

const struct ctl_command *ctl_command_find(const char *name)
{
    for (size_t i = 0; i < ctl_command_count; i++)
        if (!strcmp(ctl_commands[i].name, name))
            return &ctl_commands[i];
    return NULL;
}

void ctl_command_help(FILE *out, const struct ctl_command *c)
{
    fprintf(out, "usage: purserctl %s %s\n\n%s.\n\nexample:\n  %s\n", c->name, c->usage, c->summary,
            c->example);
    if (*c->operations && *c->operations != '(') {
        fputs("\ncalls:", out);
        for (const char *p = c->operations; *p;) {
            size_t n = strcspn(p, ";");
            fprintf(out, "\n  %.*s", (int)n, p);
            p += n + (p[n] == ';');
        }
        fputc('\n', out);
    } else if (*c->operations) {
        fputs("\ncalls: one operation per kind (purserctl operations lists each operation with "
              "its command)\n",
              out);
    }
    fputs("\nglobal options: --context NAME, --org ORG, -o table|json|yaml|name, --quiet, "
          "--verbose\n",
          out);
}

int ctl_usage(const struct ctl_command *command, const char *fmt, ...)
{
    va_list ap;
    if (fmt) {
        fputs("purserctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    if (command)
        fprintf(stderr, "usage: purserctl %s %s\n(purserctl %s --help for more)\n", command->name,
                command->usage, command->name);
    return CTL_USAGE;
}

/* Prints text wrapped at 100 columns, each line after the first indented by indent. */
static void print_wrapped(FILE *out, const char *text, int indent, int column)
{
    while (*text) {
        int room = 100 - column, n = (int)strlen(text);
        if (n > room) {
            for (n = room; n > 0 && text[n] != ' '; n--)
                ;
            if (!n)
                n = room;
        }
        fprintf(out, "%.*s\n", n, text);
        text += n + (text[n] == ' ');
        if (*text)
            fprintf(out, "%*s", indent, "");
        column = indent;
    }
}

static void usage(FILE *out)
{
    fputs("usage: purserctl [--context NAME] [--org ORG] [-o table|json|yaml|name] [--quiet] "
          "[--verbose] COMMAND ...\n\ncommands:\n",
          out);
    for (size_t i = 0; i < ctl_command_count; i++) {
        fprintf(out, "  %-12s ", ctl_commands[i].name);
        print_wrapped(out, ctl_commands[i].summary, 15, 15);
    }
    fputs("\nContexts live in ~/.config/purser/config.yaml; PURSER_URL, PURSER_CA, PURSER_ORG and "
          "PURSER_TOKEN override the current one (not one named by --context).\n"
          "Exit codes: 0 done, 1 diff found differences, 2 usage, 3 not found (404, 410), 4 "
          "conflict (409, 412), 5 denied (401, 403), 6 unavailable (no answer, 408, 429, 502-504), "
          "7 invalid input (400, 405, 406, 413, 415, 422, a file that does not parse), 8 any other "
          "failure.\npurserctl COMMAND --help shows a command's options and an example.\n",
          out);
}

/* ---- purserctl operations ---------------------------------------------------------------- */

struct op_list {
    json_t *rows;
};

static void op_add(void *ctx, const char *method, const char *path, const char *command,
                   const char *query)
{
    struct op_list *list = ctx;
    json_t *row = json_pack("{s:s, s:s, s:s}", "method", method, "path", path, "command", command);
    if (query)
        json_object_set_new(row, "query", json_string(query));
    json_array_append_new(list->rows, row);
}

/* Every operation of the table: the commands' own, and the kinds' verbs. */
static json_t *operations(void)
{
    struct op_list list = {json_array()};
    for (size_t i = 0; i < ctl_command_count; i++) {
        const char *p = ctl_commands[i].operations;
        if (*p == '(')
            continue;
        while (*p) {
            size_t n = strcspn(p, ";"), m = strcspn(p, " ");
            char method[16], path[256];
            snprintf(method, sizeof(method), "%.*s", (int)m, p);
            snprintf(path, sizeof(path), "%.*s", (int)(n - m - 1), p + m + 1);
            op_add(&list, method, path, ctl_commands[i].name, NULL);
            p += n + (p[n] == ';');
        }
    }
    ctl_kind_operations(op_add, &list);
    return list.rows;
}

int ctl_operation_listed(const struct ctl *ctl, const char *method, const char *template)
{
    /* describe reads what get reads; any command may ask who its credential is */
    const char *name = strcmp(ctl->command->name, "describe") ? ctl->command->name : "get";
    json_t *rows = operations(), *row;
    size_t i, n = strlen(name);
    int listed = !strcmp(method, "GET") && !strcmp(template, ORG "/permissions");
    json_array_foreach (rows, i, row) {
        const char *command = json_string_value(json_object_get(row, "command"));
        listed |= !strcmp(json_string_value(json_object_get(row, "method")), method) &&
                  !strcmp(json_string_value(json_object_get(row, "path")), template) &&
                  !strncmp(command, name, n) && (!command[n] || command[n] == ' ');
    }
    json_decref(rows);
    return listed;
}

static int cmd_operations(struct ctl *ctl, int argc, char **argv)
{
    static const struct ctl_column columns[] = {{"METHOD", "method", COL_TEXT},
                                                {"PATH", "path", COL_TEXT},
                                                {"COMMAND", "command", COL_TEXT},
                                                {NULL, NULL, 0}};
    static const struct ctl_view view = {"operation", NULL, 0, "path", columns};
    json_t *rows = operations();
    int rc;
    (void)argv;
    if (argc > 1)
        return ctl_usage(ctl_command_find("operations"), "no arguments");
    rc = ctl_print(ctl, rows, &view, NULL);
    json_decref(rows);
    return rc;
}

/* ---- completion ---------------------------------------------------------------------------- */

/* The words bash completes after a command: its options, its sub-verbs, the kinds. */
static void completion_words(const struct ctl_command *c)
{
    for (const char *p = c->options; *p;) {
        size_t n = strcspn(p, " ");
        printf("--%.*s ", (int)n, p);
        p += n + (p[n] == ' ');
    }
    if (c->words)
        printf("%s ", c->words);
    if (*c->operations == '(') /* the verbs over kinds */
        for (size_t k = 0; ctl_kind_plural(k); k++)
            printf("%s ", ctl_kind_plural(k));
    fputs("--help", stdout);
}

static int cmd_completion(struct ctl *ctl, int argc, char **argv)
{
    (void)ctl;
    if (argc != 2 || strcmp(argv[1], "bash") != 0)
        return ctl_usage(ctl_command_find("completion"), "bash is the shell it knows");
    puts("# bash completion for purserctl (made by `purserctl completion bash`)");
    puts("_purserctl() {\n"
         "    local cur prev words cword\n"
         "    _init_completion || return\n"
         "    local cmd= i\n"
         "    for ((i = 1; i < cword; i++)); do\n"
         "        case ${words[i]} in\n"
         "            --context|--org|-o|--output) ((i++)) ;;\n"
         "            -*) ;;\n"
         "            *) cmd=${words[i]}; break ;;\n"
         "        esac\n"
         "    done\n"
         "    case $prev in\n"
         "        -o|--output) COMPREPLY=($(compgen -W 'table json yaml name' -- \"$cur\")); "
         "return ;;\n"
         "        -f|--filename|--key|--ca|--from) _filedir; return ;;\n"
         "    esac");
    fputs("    if [[ -z $cmd ]]; then\n        COMPREPLY=($(compgen -W '", stdout);
    for (size_t i = 0; i < ctl_command_count; i++)
        printf("%s ", ctl_commands[i].name);
    puts("--context --org --output --quiet --verbose --help --version' -- \"$cur\"))\n"
         "        return\n    fi\n    case $cmd in");
    for (size_t i = 0; i < ctl_command_count; i++) {
        printf("        %s) COMPREPLY=($(compgen -W '", ctl_commands[i].name);
        completion_words(&ctl_commands[i]);
        puts("' -- \"$cur\")) ;;");
    }
    puts("    esac\n}\ncomplete -F _purserctl purserctl");
    return CTL_OK;
}

/* ---- main ------------------------------------------------------------------------------------ */

static int output_of(const char *name, enum ctl_output *out)
{
    static const char *const names[] = {"table", "json", "yaml", "name"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) {
            *out = (enum ctl_output)(OUT_TABLE + i);
            return 0;
        }
    return ctl_usage(NULL, "-o: table, json, yaml or name, not %s", name);
}

/* A global option at argv[*i] (before or after the command: --context, --org, -o, --output,
 * each as "-o json", "-ojson" or "--output=json"; --quiet, --verbose): 1 when it was one (*i
 * moved past its value), 0 when not, or -CTL_USAGE. */
static int global_option(struct ctl *ctl, int argc, char **argv, int *i, const char **org)
{
    static const char *const valued[] = {"--context", "--org", "--output", "-o"};
    const char *a = argv[*i], *value = NULL;
    size_t which, n;

    if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
        return ctl->quiet = 1;
    if (!strcmp(a, "--verbose") || !strcmp(a, "-v"))
        return ctl->verbose = 1;
    for (which = 0; which < 4; which++) {
        n = strlen(valued[which]);
        if (!strncmp(a, valued[which], n) && (a[n] == '\0' || a[n] == '=' || which == 3))
            break;
    }
    if (which == 4)
        return 0;
    if (a[n] == '=' || (which == 3 && a[n]))
        value = a + n + (a[n] == '=');
    else if (*i + 1 < argc)
        value = argv[++*i];
    else
        return -ctl_usage(NULL, "%s needs a value", valued[which]);
    if (which == 0)
        ctl->context_flag = value;
    else if (which == 1)
        *org = value;
    else if (output_of(value, &ctl->output))
        return -CTL_USAGE;
    return 1;
}

/* Splits the command line: global options anywhere into ctl, the command's own words into
 * *args (its name first). CTL_OK, CTL_USAGE, or -1 when --help or --version answered. */
static int parse_line(struct ctl *ctl, int argc, char **argv, const char **org,
                      const struct ctl_command **command, char **args, int *n)
{
    for (int i = 1; i < argc; i++) {
        int g = global_option(ctl, argc, argv, &i, org);
        if (g < 0)
            return -g;
        if (g)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (*command)
                ctl_command_help(stdout, *command);
            else
                usage(stdout);
            return -1;
        }
        if (!*command && !strcmp(argv[i], "--version")) {
            printf("purserctl %s\n", PURSER_VERSION);
            return -1;
        }
        if (!*command && !(*command = ctl_command_find(argv[i]))) {
            usage(stderr);
            return ctl_usage(NULL, "unknown %s %s", argv[i][0] == '-' ? "option" : "command",
                             argv[i]);
        }
        args[(*n)++] = argv[i];
    }
    if (!*command) {
        usage(stderr);
        return CTL_USAGE;
    }
    return CTL_OK;
}

int main(int argc, char **argv)
{
    struct ctl ctl = {0};
    const struct ctl_command *command = NULL;
    const char *org = NULL;
    char **args = calloc((size_t)argc + 1, sizeof(char *));
    int n = 0, rc;

    if (!args)
        return CTL_FAILED;
    ctl.arena = arena_new();
    rc = parse_line(&ctl, argc, argv, &org, &command, args, &n);
    if (!rc) {
        ctl.command = command;
        ctl.anonymous = !!(command->flags & CMD_ANONYMOUS);
        if (!(command->flags & CMD_OFFLINE))
            rc = ctl_context_load(&ctl);
    }
    if (!rc && org)
        ctl.context.organization = org;
    if (!rc) {
        optind = 1;
        rc = command->run(&ctl, n, args);
    }
    free(args);
    ctl_release(&ctl);
    arena_free(ctl.arena);
    return rc < 0 ? CTL_OK : rc;
}
