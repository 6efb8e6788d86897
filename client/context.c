/* context.c: purserctl's contexts (~/.config/purser/config.yaml), login, config, bootstrap. */
#include "ctl.h"

#include "codec/yaml_codec.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fields of a context in the file, in the order written. */
static const struct {
    const char *key;
    size_t offset;
} context_fields[] = {
    {"url", offsetof(struct ctl_context, url)},
    {"ca", offsetof(struct ctl_context, ca)},
    {"organization", offsetof(struct ctl_context, organization)},
    {"token", offsetof(struct ctl_context, token)},
    {"client", offsetof(struct ctl_context, client)},
    {"key", offsetof(struct ctl_context, key)},
};
#define CONTEXT_FIELDS (sizeof(context_fields) / sizeof(context_fields[0]))

static const char **field(struct ctl_context *context, size_t i)
{
    return (const char **)((char *)context + context_fields[i].offset);
}

const char *ctl_config_path(struct ctl *ctl)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (ctl->config_path)
        return ctl->config_path;
    if (getenv("PURSER_CTL_CONFIG"))
        return ctl->config_path = getenv("PURSER_CTL_CONFIG");
    if (xdg && *xdg)
        return ctl->config_path = ctl_printf(ctl, "%s/purser/config.yaml", xdg);
    return ctl->config_path = ctl_printf(ctl, "%s/.config/purser/config.yaml", home ? home : ".");
}

/* The contexts file as {current-context, contexts: [...]}, empty when there is none. */
static int config_read(struct ctl *ctl, json_t **out)
{
    const char *path = ctl_config_path(ctl);
    int rc;
    if (access(path, F_OK) != 0) {
        *out = json_pack("{s:n, s:[]}", "current-context", "contexts");
        return CTL_OK;
    }
    if ((rc = ctl_read_value(out, path)))
        return rc;
    if (!json_is_object(*out) ||
        (json_object_get(*out, "contexts") && !json_is_array(json_object_get(*out, "contexts"))))
        return ctl_error(CTL_INVALID, "%s: a mapping with a list of contexts expected", path);
    if (!json_object_get(*out, "contexts"))
        json_object_set_new(*out, "contexts", json_array());
    return CTL_OK;
}

/* Writes the contexts file whole (mode 600, its folder 700), through a temporary file. */
static int config_write(struct ctl *ctl, const json_t *config)
{
    const char *path = ctl_config_path(ctl);
    char *dir = ctl_printf(ctl, "%s", path), *slash = strrchr(dir, '/');
    char *tmp = ctl_printf(ctl, "%s.tmp", path);
    FILE *f;
    int fd;

    if (slash) {
        *slash = '\0';
        for (char *p = dir + 1; *p; p++)
            if (*p == '/') {
                *p = '\0';
                mkdir(dir, 0700);
                *p = '/';
            }
        mkdir(dir, 0700);
    }
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 || !(f = fdopen(fd, "w")))
        return ctl_error(CTL_FAILED, "cannot write %s: %s", tmp, strerror(errno));
    fputs("# purserctl's contexts (purserctl login, purserctl config)\n", f);
    if (ctl_print_yaml(f, config) || fclose(f) != 0 || rename(tmp, path) != 0)
        return ctl_error(CTL_FAILED, "cannot write %s: %s", path, strerror(errno));
    return CTL_OK;
}

static json_t *context_find(json_t *config, const char *name)
{
    json_t *contexts = json_object_get(config, "contexts"), *c;
    size_t i;
    json_array_foreach (contexts, i, c)
        if (name && json_is_string(json_object_get(c, "name")) &&
            strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
            return c;
    return NULL;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int ctl_context_load(struct ctl *ctl)
{
    json_t *config = NULL, *c;
    const char *name;
    int rc = config_read(ctl, &config);

    if (rc)
        return rc;
    name = ctl->context_flag ? ctl->context_flag
                             : json_string_value(json_object_get(config, "current-context"));
    c = context_find(config, name);
    if (ctl->context_flag && !c) {
        json_decref(config);
        return ctl_error(CTL_USAGE, "no context named %s in %s (purserctl config get-contexts)",
                         ctl->context_flag, ctl_config_path(ctl));
    }
    if (c) {
        ctl->context.name = ctl_printf(ctl, "%s", name);
        for (size_t i = 0; i < CONTEXT_FIELDS; i++) {
            const char *v = json_string_value(json_object_get(c, context_fields[i].key));
            *field(&ctl->context, i) = v && *v ? ctl_printf(ctl, "%s", v) : NULL;
        }
    }
    json_decref(config);
    if (env("PURSER_URL"))
        ctl->context.url = env("PURSER_URL");
    if (env("PURSER_CA"))
        ctl->context.ca = env("PURSER_CA");
    if (env("PURSER_ORG"))
        ctl->context.organization = env("PURSER_ORG");
    if (env("PURSER_TOKEN")) {
        ctl->context.token = env("PURSER_TOKEN");
        ctl->context.client = ctl->context.key = NULL;
    }
    if (!ctl->context.url)
        return ctl_error(CTL_USAGE, "no server: run `purserctl login --url URL ...` (or "
                                    "`purserctl login --from var/stack.env`), or set PURSER_URL");
    if (!ctl->anonymous && !ctl->context.token && !ctl->context.client)
        return ctl_error(CTL_USAGE,
                         "no credential for %s: run `purserctl login ...` (a token, or a "
                         "client and its key), or set PURSER_TOKEN",
                         ctl->context.url);
    while (*ctl->context.url && ctl->context.url[strlen(ctl->context.url) - 1] == '/')
        ctl->context.url =
            ctl_printf(ctl, "%.*s", (int)strlen(ctl->context.url) - 1, ctl->context.url);
    return CTL_OK;
}

int ctl_context_save(struct ctl *ctl, const struct ctl_context *context, int make_current)
{
    json_t *config = NULL, *entry;
    int rc = config_read(ctl, &config);

    if (rc)
        return rc;
    entry = json_pack("{s:s}", "name", context->name);
    for (size_t i = 0; i < CONTEXT_FIELDS; i++) {
        const char *v = *field((struct ctl_context *)context, i);
        if (v)
            json_object_set_new(entry, context_fields[i].key, json_string(v));
    }
    json_t *old = context_find(config, context->name),
           *contexts = json_object_get(config, "contexts");
    size_t i;
    json_t *c;
    json_array_foreach (contexts, i, c)
        if (c == old)
            break;
    if (old)
        json_array_set_new(contexts, i, entry);
    else
        json_array_append_new(contexts, entry);
    if (make_current)
        json_object_set_new(config, "current-context", json_string(context->name));
    rc = config_write(ctl, config);
    json_decref(config);
    return rc;
}

/* ---- login ---------------------------------------------------------------------------------- */

/* Reads `export NAME=VALUE` lines of a stack's settings (tools/stack writes var/stack.env). */
static const char *stack_value(struct ctl *ctl, const char *text, const char *name)
{
    char *key = ctl_printf(ctl, "\nexport %s=", name);
    const char *at = strstr(text, key);
    if (!at && strncmp(text, key + 1, strlen(key) - 1) == 0)
        at = text - 1;
    if (!at)
        return NULL;
    at += strlen(key);
    return ctl_printf(ctl, "%.*s", (int)strcspn(at, "\n"), at);
}

/* An absolute path for a file named relative to the current folder. */
static const char *absolute(struct ctl *ctl, const char *path)
{
    char *real;
    if (!path || *path == '/')
        return path;
    if (!(real = realpath(path, NULL)))
        return path;
    arena_add_cleanup(ctl->arena, free, real);
    return real;
}

/* The principal the organization's permissions name (a token's user); NULL when not known. */
static const char *permissions_principal(struct ctl *ctl, int *rc)
{
    struct ctl_request request = {.method = "GET", .template = "/organizations/{org}/permissions"};
    json_t *answer = NULL;
    const char *name = NULL;
    if (!(*rc = ctl_call_json(ctl, &request, &answer)) &&
        json_is_string(json_object_get(answer, "principal")))
        name = ctl_printf(ctl, "%s", json_string_value(json_object_get(answer, "principal")));
    json_decref(answer);
    return name;
}

const char *ctl_whoami(struct ctl *ctl)
{
    int rc;
    if (ctl->context.client)
        return ctl->context.client;
    return ctl->context.organization ? permissions_principal(ctl, &rc) : NULL;
}

/* Checks the credential works: the organization's permissions (or the list of organizations);
 * *who gets the principal when the answer names it. */
static int login_check(struct ctl *ctl, const char **who)
{
    struct ctl_request request = {.method = "GET", .template = "/organizations"};
    json_t *answer = NULL;
    int rc;
    if (ctl->context.organization) {
        *who = permissions_principal(ctl, &rc);
        return rc;
    }
    rc = ctl_call_json(ctl, &request, &answer);
    json_decref(answer);
    return rc;
}

int cmd_login(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"url", required_argument, NULL, 'u'},    {"ca", required_argument, NULL, 'a'},
        {"org", required_argument, NULL, 'o'},    {"token", required_argument, NULL, 't'},
        {"client", required_argument, NULL, 'c'}, {"key", required_argument, NULL, 'k'},
        {"from", required_argument, NULL, 'f'},   {"name", required_argument, NULL, 'n'},
        {"chef", no_argument, NULL, 'C'},         {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("login");
    struct ctl_context c = {0};
    const char *from = NULL, *who = NULL;
    int opt, chef = 0, rc;
    struct buf text = BUF_INIT;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
        switch (opt) {
        case 'u': c.url = optarg; break;
        case 'a': c.ca = optarg; break;
        case 'o': c.organization = optarg; break;
        case 't': c.token = optarg; break;
        case 'c': c.client = optarg; break;
        case 'k': c.key = optarg; break;
        case 'f': from = optarg; break;
        case 'n': c.name = optarg; break;
        case 'C': chef = 1; break;
        default: return ctl_usage(self, NULL);
        }
    if (optind < argc)
        return ctl_usage(self, "unexpected argument %s", argv[optind]);
    if (from) {
        if ((rc = ctl_read_file(&text, from)))
            return rc;
        c.url = c.url ? c.url : stack_value(ctl, text.data, "PURSER_URL");
        c.ca = c.ca ? c.ca : stack_value(ctl, text.data, "PURSER_CA");
        c.organization =
            c.organization ? c.organization : stack_value(ctl, text.data, "PURSER_ORG");
        if (chef) {
            c.client = stack_value(ctl, text.data, "PURSER_ADMIN_USER");
            c.key = stack_value(ctl, text.data, "PURSER_ADMIN_KEY");
        } else if (!c.token && !c.client)
            c.token = stack_value(ctl, text.data, "PURSER_ADMIN_TOKEN");
        c.name = c.name ? c.name : "local";
        buf_release(&text);
        if (!c.url)
            return ctl_error(CTL_INVALID, "%s has no PURSER_URL: is it a stack's settings?", from);
    }
    if (!c.url)
        return ctl_usage(self, "--url or --from is needed");
    if (!!c.token == !!c.client)
        return ctl_usage(self, "give one credential: --token, or --client with --key");
    if (c.client && !c.key)
        return ctl_usage(self, "--client needs --key, the file of its private key");
    if (strncmp(c.url, "https://", 8) != 0 && strncmp(c.url, "http://", 7) != 0)
        return ctl_usage(self, "--url: an https:// URL expected, not %s", c.url);
    if (!c.name)
        c.name = ctl_printf(ctl, "%.*s", (int)strcspn(strstr(c.url, "//") + 2, "/"),
                            strstr(c.url, "//") + 2);
    c.ca = absolute(ctl, c.ca);
    c.key = absolute(ctl, c.key);
    ctl->context = c;
    if ((rc = login_check(ctl, &who)))
        return rc;
    if ((rc = ctl_context_save(ctl, &c, 1)))
        return rc;
    printf("logged in to %s as %s%s%s (context %s, in %s)\n", c.url,
           c.client ? c.client
           : who    ? who
                    : "the token's user",
           c.organization ? ", organization " : "", c.organization ? c.organization : "", c.name,
           ctl_config_path(ctl));
    return CTL_OK;
}

/* ---- config --------------------------------------------------------------------------------- */

int cmd_config(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("config");
    const char *verb = argc > 1 ? argv[1] : NULL;
    json_t *config = NULL, *contexts, *c;
    const char *current;
    size_t i;
    int rc;

    if (!verb)
        return ctl_usage(self, "which: get-contexts, current-context, use-context, delete-context");
    if ((rc = config_read(ctl, &config)))
        return rc;
    contexts = json_object_get(config, "contexts");
    current = json_string_value(json_object_get(config, "current-context"));
    if (strcmp(verb, "get-contexts") == 0 && argc == 2) {
        json_t *rows = json_array();
        json_array_foreach (contexts, i, c) {
            json_t *row = json_deep_copy(c);
            const char *name = json_string_value(json_object_get(c, "name"));
            json_object_set_new(row, "current",
                                json_string(current && name && !strcmp(current, name) ? "*" : ""));
            json_object_set_new(row, "credential",
                                json_string(json_object_get(c, "token") ? "token" : "chef key"));
            json_object_del(row, "token");
            json_array_append_new(rows, row);
        }
        static const struct ctl_column columns[] = {{"CURRENT", "current", COL_TEXT},
                                                    {"NAME", "name", COL_TEXT},
                                                    {"URL", "url", COL_TEXT},
                                                    {"ORGANIZATION", "organization", COL_TEXT},
                                                    {"CREDENTIAL", "credential", COL_TEXT},
                                                    {"CLIENT", "client", COL_TEXT},
                                                    {NULL, NULL, 0}};
        static const struct ctl_view view = {"context", NULL, 0, "name", columns};
        rc = ctl->output == OUT_JSON || ctl->output == OUT_YAML
                 ? ctl_error(CTL_USAGE, "get-contexts prints a table or names (tokens stay in %s)",
                             ctl_config_path(ctl))
                 : ctl_print(ctl, rows, &view, NULL);
        json_decref(rows);
    } else if (strcmp(verb, "current-context") == 0 && argc == 2) {
        if (current)
            printf("%s\n", current);
        else
            rc = ctl_error(CTL_NOTFOUND, "no current context (purserctl login)");
    } else if ((strcmp(verb, "use-context") == 0 || strcmp(verb, "delete-context") == 0) &&
               argc == 3) {
        if (!(c = context_find(config, argv[2])))
            rc =
                ctl_error(CTL_NOTFOUND, "no context named %s in %s", argv[2], ctl_config_path(ctl));
        else if (verb[0] == 'u')
            json_object_set_new(config, "current-context", json_string(argv[2]));
        else {
            json_array_foreach (contexts, i, c)
                if (!strcmp(json_string_value(json_object_get(c, "name")), argv[2]))
                    break;
            json_array_remove(contexts, i);
            if (current && !strcmp(current, argv[2]))
                json_object_set_new(config, "current-context", json_null());
        }
        if (!rc && !(rc = config_write(ctl, config)))
            printf(verb[0] == 'u' ? "now using context %s\n" : "deleted context %s\n", argv[2]);
    } else
        rc = ctl_usage(self, "unknown: config %s", verb);
    json_decref(config);
    return rc;
}

/* ---- bootstrap ------------------------------------------------------------------------------ */

/* Writes the private key of a bootstrap manifest beside the contexts file (mode 600). */
static const char *save_key(struct ctl *ctl, const char *name, const char *pem)
{
    char *dir = ctl_printf(ctl, "%s", ctl_config_path(ctl)), *slash = strrchr(dir, '/');
    const char *path;
    FILE *f;
    int fd;
    if (slash)
        *slash = '\0';
    mkdir(dir, 0700);
    mkdir(ctl_printf(ctl, "%s/keys", dir), 0700);
    path = ctl_printf(ctl, "%s/keys/%s.pem", dir, name);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 || !(f = fdopen(fd, "w")))
        return NULL;
    fputs(pem, f);
    return fclose(f) == 0 ? path : NULL;
}

int cmd_bootstrap(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"name", required_argument, NULL, 'n'},
                                            {"chef", no_argument, NULL, 'C'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("bootstrap");
    const char *name = NULL, *token, *at;
    struct ctl_context c = {0};
    struct buf query = BUF_INIT;
    json_t *manifest = NULL;
    int opt, chef = 0, rc;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
        switch (opt) {
        case 'n': name = optarg; break;
        case 'C': chef = 1; break;
        default: return ctl_usage(self, NULL);
        }
    if (optind + 1 != argc)
        return ctl_usage(self, "one bootstrap token (or its install URL) expected");
    token = argv[optind];
    if ((at = strstr(token, "token=")))
        token = ctl_printf(ctl, "%.*s", (int)strcspn(at + 6, "&"), at + 6);
    /* the install route is open: the token in the query is the credential */
    ctl->context.token = NULL;
    ctl->context.client = NULL;
    ctl_query_add(&query, "token", token);
    struct ctl_request request = {.method = "GET",
                                  .template = "/install/bootstrap.json",
                                  .values = NULL,
                                  .query = query.data};
    rc = ctl_call_json(ctl, &request, &manifest);
    buf_release(&query);
    if (rc)
        return rc;
    c.name = name ? name
                  : ctl_printf(ctl, "%s", json_string_value(json_object_get(manifest, "cluster")));
    c.url = json_string_value(json_object_get(manifest, "api_url"));
    c.url = c.url ? ctl_printf(ctl, "%s", c.url) : ctl->context.url;
    c.ca = ctl->context.ca;
    c.organization =
        ctl_printf(ctl, "%s", json_string_value(json_object_get(manifest, "organization")));
    c.client = ctl_printf(ctl, "%s", json_string_value(ctl_dig(manifest, "client.name")));
    if (json_is_string(json_object_get(manifest, "ca_certificate"))) {
        const char *ca = save_key(ctl, ctl_printf(ctl, "%s-ca", c.name),
                                  json_string_value(json_object_get(manifest, "ca_certificate")));
        c.ca = ca ? ca : c.ca;
    }
    c.key = save_key(ctl, c.name, json_string_value(ctl_dig(manifest, "client.private_key")));
    if (!chef && json_is_string(json_object_get(manifest, "token")))
        c.token = ctl_printf(ctl, "%s", json_string_value(json_object_get(manifest, "token")));
    if (!c.key)
        rc = ctl_error(CTL_FAILED, "cannot write the client's key beside %s", ctl_config_path(ctl));
    if (c.token) /* the bearer token; the key file stays for Chef tooling */
        c.client = c.key = NULL;
    json_decref(manifest);
    if (!rc && !(rc = ctl_context_save(ctl, &c, 0)))
        printf("cluster %s: its credential is context %s (purserctl --context %s ...)\n", c.name,
               c.name, c.name);
    return rc;
}
