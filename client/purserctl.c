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

#define ORG "/organizations/{org}"
#define DOCS "/api/v1.0"

const struct ctl_command ctl_commands[] = {
    {"login", cmd_login,
     "(--url URL [--ca FILE] [--org ORG] (--token T | --client NAME --key FILE) | --from "
     "STACK_ENV [--chef]) [--name CONTEXT]",
     "write a context (server, CA, organization, credential) and make it the current one; the "
     "credential is checked first",
     "purserctl login --from var/stack.env\n"
     "  purserctl login --url https://purser.example:443 --org acme --client alice --key alice.pem",
     "GET " ORG "/permissions;GET /organizations", "url ca org token client key from name chef"},
    {"config", cmd_config,
     "get-contexts | current-context | use-context NAME | delete-context NAME",
     "show and choose the contexts of ~/.config/purser/config.yaml",
     "purserctl config use-context prod", "", ""},
    {"get", cmd_get,
     "KIND [NAME...] [--user U|--client C|--policy-group G|--policy P|--revision "
     "R|--cluster C] [-l SELECTOR] [--filter EXPR] [--sort FIELD] [--page-size N]",
     "list a kind (every page), or show one; kinds: organizations users members clients keys "
     "tokens principal permissions policies policy-revision revision-groups policy-groups lock "
     "nodes cookbooks cookbook-artifact clusters facts events revisions documents tags validations "
     "validation-details validation-entry",
     "purserctl get clusters -l env=dev\n  purserctl get cluster c-edge-1 -o yaml\n"
     "  purserctl get documents --revision 3 -o yaml",
     "(per kind: purserctl operations)",
     "user client policy-group policy revision cluster selector "
     "filter sort page-size query"},
    {"describe", cmd_describe, "KIND NAME...", "show one thing in full, with what hangs off it",
     "purserctl describe cluster c-edge-1", "(per kind: purserctl operations)",
     "user client policy-group policy revision cluster"},
    {"create", cmd_create,
     "KIND [NAME...] [-f FILE] [--user U|--client C|--revision R|--cluster C]",
     "create one thing from FILE (JSON or YAML) or from its name alone",
     "purserctl create organization acme\n  purserctl create user alice -f alice.yaml\n"
     "  purserctl create tag released --revision 3 -f data.yaml",
     "(per kind: purserctl operations)", "filename user client revision cluster"},
    {"replace", cmd_replace, "KIND NAME... -f FILE [--if-match ETAG]",
     "replace one thing with FILE's content (PUT)",
     "purserctl replace cluster c-edge-1 -f edge-1.yaml", "(per kind: purserctl operations)",
     "filename if-match user client"},
    {"patch", cmd_patch, "KIND NAME... (-p JSON | -f FILE) [--if-match ETAG]",
     "change some fields of a user, a cluster or a token (a JSON merge patch, RFC 7396)",
     "purserctl patch user alice -p '{\"active\": false}'", "(per kind: purserctl operations)",
     "patch filename if-match user"},
    {"delete", cmd_delete, "KIND NAME... | KIND --all [--revision R] [--query force=true]",
     "delete one thing (revisions --all: purge every document revision; tags --all: a "
     "revision's tags)",
     "purserctl delete cluster c-edge-1\n  purserctl delete document example/Network/v1 "
     "oam-network",
     "(per kind: purserctl operations)", "all query if-match user client revision"},
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
     "filename bucket append policy-group"},
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
     "deep groups policy filename bucket policy-group"},
    {"promote", cmd_promote, "--to GROUP (--from GROUP [POLICY...] | POLICY --revision REV)",
     "point a group at what another group points at (all or the named policies, all or "
     "nothing), or one policy at an uploaded revision",
     "purserctl promote --from dev --to prod base\n  purserctl promote --to prod base --revision "
     "2b7c...",
     "POST " ORG "/policy_groups/{group}/promote;PUT " ORG
     "/policy_groups/{group}/policies/{name}/revision/{rev}",
     "from to revision"},
    {"render", cmd_render,
     "[REVISION] [--schema S] [--name N] [-l LABEL] [--bucket B] [--cleartext-secrets]",
     "a revision's documents layered, substituted and validated (default: the newest revision)",
     "purserctl render --schema example/Network/v1 -o yaml",
     "GET " DOCS "/revisions/{id}/rendered-documents;GET " DOCS "/revisions",
     "schema name selector bucket cleartext-secrets"},
    {"rollback", cmd_rollback, "REVISION",
     "a new revision with the documents of REVISION (0: none)", "purserctl rollback 3",
     "POST " DOCS "/rollback/{id}", ""},
    {"tag", cmd_tag, "REVISION TAG [-f DATA]",
     "tag a document revision (with an optional mapping of data)", "purserctl tag 4 released",
     "POST " DOCS "/revisions/{id}/tags/{tag}", "filename"},
    {"validation", cmd_validation,
     "report REVISION NAME --status success|failure [-f ERRORS] [--validator NAME]",
     "report a validation result for a document revision (as a validator such as Pegleg does)",
     "purserctl validation report 4 site-checks --status success",
     "POST " DOCS "/revisions/{id}/validations/{name}", "status filename validator"},
    {"facts", cmd_facts, "report CLUSTER -f FILE",
     "report a cluster's dynamic facts (kept as a version)",
     "purserctl facts report c-edge-1 -f examples/facts.json", "PUT " ORG "/clusters/{id}/facts",
     "filename"},
    {"reset-token", cmd_reset_token, "CLUSTER",
     "a new bootstrap token for a cluster (the old one stops working); shown once",
     "purserctl reset-token c-edge-1", "POST " ORG "/clusters/{id}/bootstrap-token", ""},
    {"bootstrap", cmd_bootstrap, "TOKEN|INSTALL_URL [--name CONTEXT] [--chef]",
     "redeem a cluster's bootstrap token and keep its credential as a context (its key beside "
     "the contexts file)",
     "purserctl bootstrap \"$INSTALL_URL\" --name edge-1", "GET /install/bootstrap.json",
     "name chef"},
    {"token", cmd_token,
     "create [--description D] [--expires-in DAYS] | list | revoke ID | disable ID | enable ID "
     "[--user U]",
     "your API tokens (or a user's, with --user): a new one is shown once",
     "purserctl token create --description ci --expires-in 30",
     "POST /users/{user}/tokens;GET /users/{user}/tokens;DELETE /users/{user}/tokens/{id};PATCH "
     "/users/{user}/tokens/{id}",
     "user description expires-in"},
    {"watch", cmd_watch, "[--since SEQ] [--kinds K,...] [--timeout SECONDS]",
     "follow the event feed as it happens, resuming from the last seq after a disconnect",
     "purserctl watch --kinds cluster,policy_group", "GET " ORG "/events", "since kinds timeout"},
    {"export", cmd_export, "[-f FILE] [--secrets]",
     "the organization as a YAML stream of resources, streamed to FILE (mode 600) or stdout",
     "purserctl export -f acme.yaml", "GET " ORG "/export", "filename secrets"},
    {"import", cmd_import, "-f FILE",
     "write an export into the (empty) organization, all or nothing",
     "purserctl --org acme2 import -f acme.yaml", "POST " ORG "/import", "filename"},
    {"cookbook", cmd_cookbook,
     "upload DIR [--name N] [--identifier ID] | download NAME IDENTIFIER DIR",
     "a cookbook artifact (as chef push uploads them): its files through a sandbox, then its "
     "manifest; or its files back",
     "purserctl cookbook upload ./hello --identifier $(git rev-parse HEAD)",
     "POST " ORG "/sandboxes;PUT " ORG "/file_store/{checksum};PUT " ORG "/sandboxes/{id};PUT " ORG
     "/cookbook_artifacts/{name}/{identifier};GET " ORG
     "/cookbook_artifacts/{name}/{identifier};GET " ORG "/file_store/{checksum}",
     "name identifier"},
    {"health", cmd_health, "[--deep]",
     "whether the server answers (with --deep: its database and schema)", "purserctl health --deep",
     "GET /healthz;GET /healthz/deep;GET " DOCS "/health", "deep"},
    {"version", cmd_version, "", "purserctl's version, the server's document API versions",
     "purserctl version", "GET /versions", ""},
    {"api", cmd_api, "METHOD PATH [-f FILE] [--content-type TYPE]",
     "any request, as purserctl signs it (the answer on stdout): also /metrics, /docs and "
     "/docs.yaml",
     "purserctl api GET /metrics\n  purserctl api GET /docs.yaml",
     "GET /metrics;GET /docs;GET /docs.yaml", "filename content-type"},
    {"operations", cmd_operations, "",
     "each API operation (as /docs has it) and the command that calls it",
     "purserctl operations -o json", "", ""},
    {"completion", cmd_completion, "bash",
     "the bash completion script, made from this command table",
     "purserctl completion bash > /etc/bash_completion.d/purserctl", "", ""},
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

static void usage(FILE *out)
{
    fputs("usage: purserctl [--context NAME] [--org ORG] [-o table|json|yaml|name] [--quiet] "
          "[--verbose] COMMAND ...\n\ncommands:\n",
          out);
    for (size_t i = 0; i < ctl_command_count; i++) {
        const char *s = ctl_commands[i].summary;
        fprintf(out, "  %-12s %.*s\n", ctl_commands[i].name, (int)strcspn(s, ";:("), s);
    }
    fputs("\nContexts live in ~/.config/purser/config.yaml; PURSER_URL, PURSER_CA, PURSER_ORG and "
          "PURSER_TOKEN override the current one.\nExit codes: 0 done, 1 diff found differences, "
          "2 usage, 3 not found, 4 conflict, 5 denied, 6 unavailable, 7 invalid input, 8 other "
          "failure.\npurserctl COMMAND --help shows a command's options and an example.\n",
          out);
}

/* ---- purserctl operations ---------------------------------------------------------------- */

struct op_list {
    json_t *rows;
};

static void op_add(void *ctx, const char *method, const char *path, const char *command)
{
    struct op_list *list = ctx;
    json_array_append_new(list->rows, json_pack("{s:s, s:s, s:s}", "method", method, "path", path,
                                                "command", command));
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
            op_add(&list, method, path, ctl_commands[i].name);
            p += n + (p[n] == ';');
        }
    }
    ctl_kind_operations(op_add, &list);
    return list.rows;
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
        const struct ctl_command *c = &ctl_commands[i];
        printf("        %s) COMPREPLY=($(compgen -W '", c->name);
        for (const char *p = c->options; *p;) {
            size_t n = strcspn(p, " ");
            printf("--%.*s ", (int)n, p);
            p += n + (p[n] == ' ');
        }
        if (!strcmp(c->name, "get") || !strcmp(c->name, "describe") || !strcmp(c->name, "create") ||
            !strcmp(c->name, "replace") || !strcmp(c->name, "patch") || !strcmp(c->name, "delete"))
            for (size_t k = 0; ctl_kind_names[k]; k++)
                printf("%s ", ctl_kind_names[k]);
        if (!strcmp(c->name, "config"))
            fputs("get-contexts current-context use-context delete-context", stdout);
        if (!strcmp(c->name, "token"))
            fputs("create list revoke disable enable", stdout);
        if (!strcmp(c->name, "cookbook"))
            fputs("upload download", stdout);
        if (!strcmp(c->name, "completion"))
            fputs("bash", stdout);
        puts("--help' -- \"$cur\")) ;;");
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
    return -1;
}

/* Commands that need no server. */
static int offline(const struct ctl_command *c)
{
    return c->run == cmd_config || c->run == cmd_login || c->run == cmd_operations ||
           c->run == cmd_completion;
}

int main(int argc, char **argv)
{
    struct ctl ctl = {0};
    const char *org = NULL;
    const struct ctl_command *command;
    int i, rc;

    /* global options come before the command; -o may also come after it */
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return CTL_OK;
        } else if (!strcmp(a, "--version")) {
            printf("purserctl %s\n", PURSER_VERSION);
            return CTL_OK;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            ctl.quiet = 1;
        else if (!strcmp(a, "--verbose") || !strcmp(a, "-v"))
            ctl.verbose = 1;
        else if ((!strcmp(a, "--context") || !strcmp(a, "--org") || !strcmp(a, "-o") ||
                  !strcmp(a, "--output")) &&
                 i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(a, "--context"))
                ctl.context_flag = v;
            else if (!strcmp(a, "--org"))
                org = v;
            else if (output_of(v, &ctl.output))
                return ctl_usage(NULL, "-o: table, json, yaml or name, not %s", v);
        } else {
            usage(stderr);
            return ctl_usage(NULL, "unknown option %s", a);
        }
    }
    if (i >= argc) {
        usage(stderr);
        return CTL_USAGE;
    }
    if (!(command = ctl_command_find(argv[i]))) {
        fprintf(stderr, "purserctl: unknown command %s\n", argv[i]);
        usage(stderr);
        return CTL_USAGE;
    }
    /* -o and --help anywhere after the command; the rest is the command's */
    int n = 0;
    char **args = calloc((size_t)(argc - i + 1), sizeof(char *));
    for (int j = i; j < argc; j++) {
        if ((!strcmp(argv[j], "-o") || !strcmp(argv[j], "--output")) && j + 1 < argc) {
            if (output_of(argv[++j], &ctl.output)) {
                free(args);
                return ctl_usage(command, "-o: table, json, yaml or name, not %s", argv[j]);
            }
            continue;
        }
        if (!strcmp(argv[j], "--help") || !strcmp(argv[j], "-h")) {
            free(args);
            ctl_command_help(stdout, command);
            return CTL_OK;
        }
        args[n++] = argv[j];
    }
    ctl.arena = arena_new();
    ctl.anonymous = command->run == cmd_bootstrap || command->run == cmd_health;
    rc = offline(command) ? CTL_OK : ctl_context_load(&ctl);
    if (!rc && org)
        ctl.context.organization = org;
    if (!rc) {
        optind = 1;
        rc = command->run(&ctl, n, args);
    }
    free(args);
    free(ctl.key_pem);
    if (ctl.curl)
        ctl_release(&ctl);
    arena_free(ctl.arena);
    return rc;
}
