/* context.c: purserctl's contexts (~/.config/purser/config.yaml), login, config, bootstrap. */
#include "ctl.h"

#include "base/secret_file.h"
#include "codec/yaml_codec.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
    {"expires", offsetof(struct ctl_context, expires)},
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
    rc = ctl_read_value(out, path);
    if (!rc && (!json_is_object(*out) || (json_object_get(*out, "contexts") &&
                                          !json_is_array(json_object_get(*out, "contexts")))))
        rc = ctl_error(CTL_INVALID, "%s: a mapping with a list of contexts expected", path);
    if (!rc && !json_object_get(*out, "contexts"))
        json_object_set_new(*out, "contexts", json_array());
    return rc;
}

/* Makes the folders of path (mode 700). */
static void make_folders(struct ctl *ctl, const char *path)
{
    char *dir = ctl_printf(ctl, "%s", path), *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0700);
            *p = '/';
        }
    mkdir(dir, 0700);
}

/* Writes head, yaml and text (each may be NULL) to path (base/secret_file: a new file of mode
 * 600 renamed over it, whatever was there); 0 or -1 (errno set). */
static int write_private(struct ctl *ctl, const char *path, const char *head, const json_t *yaml,
                         const char *text)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    int rc = f ? 0 : -1;

    make_folders(ctl, path);
    if (!rc && head)
        rc = fputs(head, f) < 0 ? -1 : 0;
    if (!rc && yaml)
        rc = ctl_print_yaml(f, yaml) ? -1 : 0;
    if (!rc && text)
        rc = fputs(text, f) < 0 ? -1 : 0;
    if (f && fclose(f) && !rc)
        rc = -1;
    if (!rc)
        rc = secret_file_write(path, data, len);
    if (data)
        memset(data, 0, len);
    free(data);
    return rc;
}

/* Writes the contexts file whole (mode 600, its folder 700). */
static int config_write(struct ctl *ctl, const json_t *config)
{
    const char *path = ctl_config_path(ctl);
    if (write_private(ctl, path, "# purserctl's contexts (purserctl login, purserctl config)\n",
                      config, NULL))
        return ctl_error(CTL_FAILED, "cannot write %s: %s", path, strerror(errno));
    return CTL_OK;
}

/* The context named name, and its index in the list (*index may be NULL). */
static json_t *context_find(json_t *config, const char *name, size_t *index)
{
    json_t *contexts = json_object_get(config, "contexts"), *c;
    size_t i;
    json_array_foreach (contexts, i, c)
        if (name && json_is_string(json_object_get(c, "name")) &&
            strcmp(json_string_value(json_object_get(c, "name")), name) == 0) {
            if (index)
                *index = i;
            return c;
        }
    return NULL;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The PURSER_* variables over the current context (never over an explicit --context: options
 * beat the environment). A URL from the environment that is not the context's drops the
 * context's CA and credential: they are another server's. */
static void context_from_env(struct ctl *ctl)
{
    const char *url = env("PURSER_URL");
    if (url && (!ctl->context.url || strcmp(url, ctl->context.url) != 0)) {
        ctl->context.url = url;
        ctl->context.ca = NULL;
        ctl->context.token = ctl->context.client = ctl->context.key = NULL;
    }
    if (env("PURSER_CA"))
        ctl->context.ca = env("PURSER_CA");
    if (env("PURSER_ORG"))
        ctl->context.organization = env("PURSER_ORG");
    if (env("PURSER_TOKEN")) {
        ctl->context.token = env("PURSER_TOKEN");
        ctl->context.client = ctl->context.key = NULL;
    }
}

/* 1 when expires (RFC 3339 UTC, "2030-01-02T03:04:05Z"; NULL: none) has passed. */
static int session_ended(const char *expires)
{
    struct tm tm = {0};
    const char *end = expires ? strptime(expires, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    return end && timegm(&tm) <= time(NULL);
}

int ctl_context_load(struct ctl *ctl)
{
    json_t *config = NULL, *c;
    const char *name;
    int rc = config_read(ctl, &config);

    if (!rc) {
        name = ctl->context_flag ? ctl->context_flag
                                 : json_string_value(json_object_get(config, "current-context"));
        c = context_find(config, name, NULL);
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
        if (!ctl->context_flag)
            context_from_env(ctl);
        if (!ctl->context.url)
            rc = ctl_error(CTL_USAGE, "no server: run `purserctl login --url URL ...` (or "
                                      "`purserctl login --from var/stack.env`), or set PURSER_URL");
    }
    if (!rc && !ctl->anonymous && !ctl->context.token && !ctl->context.client)
        rc = ctl_error(CTL_USAGE,
                       "no credential for %s: run `purserctl login ...` (a token, or a "
                       "client and its key), or set PURSER_TOKEN",
                       ctl->context.url);
    if (!rc && !ctl->anonymous && session_ended(ctl->context.expires))
        rc = ctl_error(CTL_DENIED,
                       "the session of context %s ended at %s: sign in again (purserctl login "
                       "--sso)",
                       ctl->context.name ? ctl->context.name : "-", ctl->context.expires);
    if (!rc) {
        while (*ctl->context.url && ctl->context.url[strlen(ctl->context.url) - 1] == '/')
            ctl->context.url =
                ctl_printf(ctl, "%.*s", (int)strlen(ctl->context.url) - 1, ctl->context.url);
    }
    return rc;
}

int ctl_context_save(struct ctl *ctl, const struct ctl_context *context, int make_current)
{
    json_t *config = NULL, *entry;
    int rc = config_read(ctl, &config);

    if (!rc) {
        entry = json_pack("{s:s}", "name", context->name);
        for (size_t i = 0; i < CONTEXT_FIELDS; i++) {
            const char *v = *field((struct ctl_context *)context, i);
            if (v)
                json_object_set_new(entry, context_fields[i].key, json_string(v));
        }
        size_t i;
        json_t *old = context_find(config, context->name, &i),
               *contexts = json_object_get(config, "contexts");
        if (old)
            json_array_set_new(contexts, i, entry);
        else
            json_array_append_new(contexts, entry);
        if (make_current)
            json_object_set_new(config, "current-context", json_string(context->name));
        rc = config_write(ctl, config);
        json_decref(config);
    }
    return rc;
}

/* ---- login ---------------------------------------------------------------------------------- */

/* Reads an `export NAME=VALUE` line of a stack's settings (tools/stack writes var/stack.env). */
static const char *stack_value(struct ctl *ctl, const char *text, const char *name)
{
    const char *key = ctl_printf(ctl, "export %s=", name);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line)
        if (!strncmp(line, key, strlen(key))) {
            line += strlen(key);
            return ctl_printf(ctl, "%.*s", (int)strcspn(line, "\n"), line);
        }
    return NULL;
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

/* The principal the organization's permissions name (a token's user): CTL_OK with *out (NULL
 * when the answer names none), or the call's failure. */
static int permissions_principal(struct ctl *ctl, const char **out)
{
    struct ctl_request request = {.method = "GET", .template = ORG "/permissions"};
    json_t *answer = NULL;
    int rc = ctl_call_json(ctl, &request, &answer);
    *out = NULL;
    if (!rc && json_is_string(json_object_get(answer, "principal")))
        *out = ctl_printf(ctl, "%s", json_string_value(json_object_get(answer, "principal")));
    json_decref(answer);
    return rc;
}

int ctl_whoami(struct ctl *ctl, const char **out)
{
    int rc = CTL_OK;
    *out = ctl->context.client;
    if (!*out && ctl->context.organization)
        rc = permissions_principal(ctl, out);
    if (!rc && !*out)
        rc = ctl_error(CTL_USAGE, "whose? this context does not say: give --user NAME");
    return rc;
}

/* Checks the credential works: the organization's permissions (or the first organization);
 * *who gets the principal when the answer names it. */
static int login_check(struct ctl *ctl, const char **who)
{
    struct ctl_request request = {
        .method = "GET", .template = "/organizations", .query = "page_size=1"};
    json_t *answer = NULL;
    int rc;
    if (ctl->context.organization)
        return permissions_principal(ctl, who);
    rc = ctl_call_json(ctl, &request, &answer);
    json_decref(answer);
    return rc;
}

/* Fills c from a stack's settings file: URL, CA, organization, and the admin's token (or with
 * chef, its name and key). */
static int login_from(struct ctl *ctl, struct ctl_context *c, const char *from, int chef)
{
    struct buf text = BUF_INIT;
    int rc = ctl_read_file(&text, from);
    if (!rc) {
        c->url = c->url ? c->url : stack_value(ctl, text.data, "PURSER_URL");
        c->ca = c->ca ? c->ca : stack_value(ctl, text.data, "PURSER_CA");
        c->organization =
            c->organization ? c->organization : stack_value(ctl, text.data, "PURSER_ORG");
        if (chef) {
            c->client = stack_value(ctl, text.data, "PURSER_ADMIN_USER");
            c->key = stack_value(ctl, text.data, "PURSER_ADMIN_KEY");
        } else if (!c->token && !c->client)
            c->token = stack_value(ctl, text.data, "PURSER_ADMIN_TOKEN");
        c->name = c->name ? c->name : "local";
        buf_release(&text);
        if (!c->url)
            rc = ctl_error(CTL_INVALID, "%s has no PURSER_URL: is it a stack's settings?", from);
    }
    return rc;
}

/* A token given as "-": read from standard input (so that it is in no process list). */
static int token_from_stdin(struct ctl *ctl, struct ctl_context *c)
{
    char line[4096];
    if (!c->token || strcmp(c->token, "-") != 0)
        return CTL_OK;
    if (!fgets(line, sizeof(line), stdin))
        return ctl_error(CTL_USAGE, "--token -: no token on standard input");
    line[strcspn(line, "\r\n")] = '\0';
    c->token = ctl_printf(ctl, "%s", line);
    return CTL_OK;
}

/* What a login must give: a URL (https), one credential, a key with a client. */
static int login_check_args(const struct ctl_command *self, const struct ctl_context *c)
{
    if (!c->url)
        return ctl_usage(self, "--url or --from is needed");
    if (!!c->token == !!c->client)
        return ctl_usage(self, "give one credential: --token, or --client with --key");
    if (c->client && !c->key)
        return ctl_usage(self, "--client needs --key, the file of its private key");
    if (strncmp(c->url, "https://", 8) != 0)
        return ctl_usage(self,
                         "--url: an https:// URL expected (credentials go only over TLS), "
                         "not %s",
                         c->url);
    return CTL_OK;
}

/* login --sso: the session made through the provider, then saved as the context. */
static int login_sso(struct ctl *ctl, const struct ctl_command *self, struct ctl_context *c,
                     const char *provider, int device)
{
    const char *who = NULL;
    int rc = CTL_OK;
    if (!c->url)
        return ctl_usage(self, "--url or --from is needed");
    if (strncmp(c->url, "https://", 8) != 0)
        return ctl_usage(self, "--url: an https:// URL expected, not %s", c->url);
    if (!c->name)
        c->name = ctl_printf(ctl, "%.*s", (int)strcspn(c->url + 8, "/"), c->url + 8);
    c->ca = absolute(ctl, c->ca);
    ctl->context = *c;
    ctl->anonymous = 1;
    rc = ctl_login_sso(ctl, c, provider, device, &who);
    if (!rc)
        rc = ctl_context_save(ctl, c, 1);
    if (!rc)
        printf("logged in to %s as %s (context %s, in %s); the session ends at %s: then sign in "
               "again\n",
               c->url, who ? who : "the provider's user", c->name, ctl_config_path(ctl),
               c->expires ? c->expires : "?");
    return rc;
}

int cmd_login(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"url", required_argument, NULL, 'u'},    {"ca", required_argument, NULL, 'a'},
        {"org", required_argument, NULL, 'o'},    {"token", required_argument, NULL, 't'},
        {"client", required_argument, NULL, 'c'}, {"key", required_argument, NULL, 'k'},
        {"from", required_argument, NULL, 'f'},   {"name", required_argument, NULL, 'n'},
        {"chef", no_argument, NULL, 'C'},         {"sso", no_argument, NULL, 'S'},
        {"device", no_argument, NULL, 'D'},       {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("login");
    struct ctl_context c = {.organization = ctl->context.organization}; /* a global --org */
    const char *from = NULL, *who = NULL;
    const char *provider = NULL;
    int opt, chef = 0, sso = 0, device = 0, rc = CTL_OK;

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
        case 'S': sso = 1; break;
        case 'D': device = 1; break;
        default: return ctl_usage(self, NULL);
        }
    if (sso && optind < argc)
        provider = argv[optind++];
    if (optind < argc)
        return ctl_usage(self, "unexpected argument %s", argv[optind]);
    if (device && !sso)
        return ctl_usage(self, "--device goes with --sso");
    if (from)
        rc = login_from(ctl, &c, from, chef);
    if (!rc && sso) {
        c.token = c.client = c.key = NULL; /* the sign-in makes the credential */
        return login_sso(ctl, self, &c, provider, device);
    }
    if (!rc)
        rc = token_from_stdin(ctl, &c);
    if (!rc)
        rc = login_check_args(self, &c);
    if (!rc) {
        if (!c.name)
            c.name = ctl_printf(ctl, "%.*s", (int)strcspn(c.url + 8, "/"), c.url + 8);
        c.ca = absolute(ctl, c.ca);
        c.key = absolute(ctl, c.key);
        ctl->context = c;
        rc = login_check(ctl, &who);
        if (!rc)
            rc = ctl_context_save(ctl, &c, 1);
    }
    if (!rc) {
        printf("logged in to %s as %s%s%s (context %s, in %s)\n", c.url,
               c.client ? c.client
               : who    ? who
                        : "the token's user",
               c.organization ? ", organization " : "", c.organization ? c.organization : "",
               c.name, ctl_config_path(ctl));
    }
    return rc;
}

/* ---- config --------------------------------------------------------------------------------- */

/* config get-contexts: a table without the tokens. */
static int contexts_print(struct ctl *ctl, const json_t *config)
{
    static const struct ctl_column columns[] = {{"CURRENT", "current", COL_TEXT},
                                                {"NAME", "name", COL_TEXT},
                                                {"URL", "url", COL_TEXT},
                                                {"ORGANIZATION", "organization", COL_TEXT},
                                                {"CREDENTIAL", "credential", COL_TEXT},
                                                {"CLIENT", "client", COL_TEXT},
                                                {NULL, NULL, 0}};
    static const struct ctl_view view = {"context", NULL, 0, "name", columns};
    const char *current = json_string_value(json_object_get(config, "current-context"));
    json_t *rows = json_array(), *c;
    size_t i;
    int rc;

    if (ctl->output == OUT_JSON || ctl->output == OUT_YAML)
        return ctl_error(CTL_USAGE, "get-contexts prints a table or names (tokens stay in %s)",
                         ctl_config_path(ctl));
    json_array_foreach (json_object_get(config, "contexts"), i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *row = json_deep_copy(c);
        json_object_set_new(row, "current",
                            json_string(current && name && !strcmp(current, name) ? "*" : ""));
        json_object_set_new(row, "credential",
                            json_string(json_object_get(c, "token") ? "token" : "chef key"));
        json_object_del(row, "token");
        json_array_append_new(rows, row);
    }
    rc = ctl_print(ctl, rows, &view, NULL);
    json_decref(rows);
    return rc;
}

/* config use-context NAME, config delete-context NAME. */
static int context_choose(struct ctl *ctl, json_t *config, const char *verb, const char *name)
{
    const char *current = json_string_value(json_object_get(config, "current-context"));
    size_t i;
    int rc;

    if (!context_find(config, name, &i))
        return ctl_error(CTL_NOTFOUND, "no context named %s in %s", name, ctl_config_path(ctl));
    if (!strcmp(verb, "use-context"))
        json_object_set_new(config, "current-context", json_string(name));
    else {
        if (current && !strcmp(current, name))
            json_object_set_new(config, "current-context", json_null());
        json_array_remove(json_object_get(config, "contexts"), i);
    }
    if (!(rc = config_write(ctl, config)))
        printf(verb[0] == 'u' ? "now using context %s\n" : "deleted context %s\n", name);
    return rc;
}

int cmd_config(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("config");
    const char *verb = argc > 1 ? argv[1] : "";
    json_t *config = NULL;
    const char *current;
    int rc = config_read(ctl, &config);

    if (!rc) {
        current = json_string_value(json_object_get(config, "current-context"));
        if (!strcmp(verb, "get-contexts") && argc == 2)
            rc = contexts_print(ctl, config);
        else if (!strcmp(verb, "current-context") && argc == 2) {
            if (current)
                printf("%s\n", current);
            else
                rc = ctl_error(CTL_NOTFOUND, "no current context (purserctl login)");
        } else if ((!strcmp(verb, "use-context") || !strcmp(verb, "delete-context")) && argc == 3)
            rc = context_choose(ctl, config, verb, argv[2]);
        else
            rc = ctl_usage(self,
                           "config %s: which? get-contexts, current-context, use-context NAME, "
                           "delete-context NAME",
                           verb);
        json_decref(config);
    }
    return rc;
}

/* ---- bootstrap ------------------------------------------------------------------------------ */

/* Writes a secret of a bootstrap manifest beside the contexts file (mode 600): its path, or NULL.
 */
static const char *save_secret(struct ctl *ctl, const char *file, const char *pem)
{
    char *dir = ctl_printf(ctl, "%s", ctl_config_path(ctl)), *slash = strrchr(dir, '/');
    const char *path;
    if (slash)
        *slash = '\0';
    path = ctl_printf(ctl, "%s/keys/%s", dir, file);
    return write_private(ctl, path, NULL, NULL, pem) ? NULL : path;
}

/* The CA file of a context for the server at url, or NULL (the system's CAs then). */
static const char *context_ca_for(struct ctl *ctl, const char *url)
{
    json_t *config = NULL, *c;
    const char *ca = NULL;
    size_t i;
    if (config_read(ctl, &config))
        return NULL;
    json_array_foreach (json_object_get(config, "contexts"), i, c)
        if (!ca && !strcmp(ctl_text(c, "url"), url) && json_is_string(json_object_get(c, "ca")))
            ca = ctl_printf(ctl, "%s", ctl_text(c, "ca"));
    json_decref(config);
    return ca;
}

/* The server and token of an install URL (https://host:port/install/bootstrap.json?token=T), or
 * of a token alone (the context's server). */
static int bootstrap_target(struct ctl *ctl, const char *given, const char *ca, const char **token)
{
    const char *at = strstr(given, "token=");
    *token = at ? ctl_printf(ctl, "%.*s", (int)strcspn(at + 6, "&"), at + 6) : given;
    if (!strncmp(given, "https://", 8)) {
        ctl->context.url = ctl_printf(ctl, "%.*s", 8 + (int)strcspn(given + 8, "/?"), given);
        ctl->context.ca = ca                 ? ca
                          : env("PURSER_CA") ? env("PURSER_CA")
                                             : context_ca_for(ctl, ctl->context.url);
        return CTL_OK;
    }
    if (!strncmp(given, "http://", 7))
        return ctl_error(CTL_USAGE, "an install URL is https://, not %s", given);
    ctl->anonymous = 1;
    int rc = ctl_context_load(ctl);
    if (!rc && ca)
        ctl->context.ca = ca;
    return rc;
}

/* The context a manifest makes: its cluster's credential (the token, or with chef the client
 * and its key, written beside the contexts file). */
static int manifest_context(struct ctl *ctl, const json_t *manifest, struct ctl_context *c,
                            int chef)
{
    const char *cluster = json_string_value(json_object_get(manifest, "cluster"));
    const char *org = json_string_value(json_object_get(manifest, "organization"));
    const char *client = json_string_value(ctl_dig(manifest, "client.name"));
    const char *key = json_string_value(ctl_dig(manifest, "client.private_key"));
    const char *token = json_string_value(json_object_get(manifest, "token"));
    const char *url = json_string_value(json_object_get(manifest, "api_url"));
    const char *ca = json_string_value(json_object_get(manifest, "ca_certificate"));

    if (!cluster || !org || !client || !key)
        return ctl_error(CTL_FAILED, "the install manifest lacks its cluster, organization or "
                                     "client");
    c->name = c->name ? c->name : ctl_printf(ctl, "%s", cluster);
    c->url = url ? ctl_printf(ctl, "%s", url) : ctl->context.url;
    c->ca = ca ? save_secret(ctl, ctl_printf(ctl, "%s-ca.pem", c->name), ca) : ctl->context.ca;
    c->organization = ctl_printf(ctl, "%s", org);
    if (!(c->key = save_secret(ctl, ctl_printf(ctl, "%s.pem", c->name), key)))
        return ctl_error(CTL_FAILED, "cannot write the client's key beside %s: %s",
                         ctl_config_path(ctl), strerror(errno));
    if (!chef && token) { /* the bearer token; the key file stays for Chef tooling */
        c->token = ctl_printf(ctl, "%s", token);
        c->key = NULL;
    } else
        c->client = ctl_printf(ctl, "%s", client);
    return CTL_OK;
}

int cmd_bootstrap(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"name", required_argument, NULL, 'n'},
                                            {"ca", required_argument, NULL, 'a'},
                                            {"chef", no_argument, NULL, 'C'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("bootstrap");
    const char *ca = NULL, *token;
    struct ctl_context c = {0};
    struct buf query = BUF_INIT;
    json_t *manifest = NULL;
    int opt, chef = 0, rc;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
        switch (opt) {
        case 'n': c.name = optarg; break;
        case 'a': ca = optarg; break;
        case 'C': chef = 1; break;
        default: return ctl_usage(self, NULL);
        }
    if (optind + 1 != argc)
        return ctl_usage(self, "one bootstrap token (or its install URL) expected");
    rc = bootstrap_target(ctl, argv[optind], absolute(ctl, ca), &token);
    if (!rc) {
        /* the install route is open: the token in the query is the credential, and nothing else
           goes with it */
        ctl->context.token = ctl->context.client = NULL;
        ctl_query_add(&query, "token", token);
        struct ctl_request request = {
            .method = "GET", .template = "/install/bootstrap.json", .query = query.data};
        rc = ctl_call_json(ctl, &request, &manifest);
        buf_release(&query);
        if (!rc)
            rc = manifest_context(ctl, manifest, &c, chef);
        if (!rc)
            rc = ctl_context_save(ctl, &c, 0);
        if (!rc)
            printf("cluster %s: its credential is context %s (purserctl --context %s ...)\n",
                   json_string_value(json_object_get(manifest, "cluster")), c.name, c.name);
        if (!rc && json_string_value(json_object_get(json_object_get(manifest, "git_repo"), "url")))
            printf("its git repository: %s\n", json_string_value(json_object_get(
                                                   json_object_get(manifest, "git_repo"), "url")));
        json_decref(manifest);
    }
    return rc;
}
