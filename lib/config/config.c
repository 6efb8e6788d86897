/* config.c: the configuration table, defaults, YAML loading and validation. */
#include "config/config.h"

#include "codec/yaml_codec.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum option_type { OPT_STRING, OPT_INT, OPT_BOOL };

struct option {
    const char *section;
    const char *key;
    enum option_type type;
    size_t offset;
    const char *default_value; /* as text: parsed like a file value */
    long min, max;             /* integers */
    const char *meaning;
};

#define OPT(section, key, type, field, def, min, max, meaning)                                     \
    {                                                                                              \
        section, key, type, offsetof(struct purser_config, field), def, min, max, meaning          \
    }

static const struct option options[] = {
    OPT("fcgi", "socket", OPT_STRING, fcgi_socket, "var/run/purser-fcgi.sock", 0, 0,
        "unix socket the FastCGI master listens on (nginx's fastcgi_pass)"),
    OPT("fcgi", "socket_group", OPT_STRING, fcgi_socket_group, "", 0, 0,
        "group given the socket, mode 0660 (nginx's, www-data, in a production install); empty = "
        "the process's own, mode from its umask"),
    OPT("fcgi", "backlog", OPT_INT, fcgi_backlog, "128", 1, 65535, "listen backlog"),
    OPT("fcgi", "workers", OPT_INT, workers, "0", 0, 256, "worker processes; 0 = one per CPU"),
    OPT("fcgi", "max_requests", OPT_INT, max_requests, "10000", 0, 1000000000,
        "a worker is replaced after this many requests; 0 = never"),
    OPT("fcgi", "pool_keep_bytes", OPT_INT, pool_keep_bytes, "1048576", 0, 1073741824,
        "a worker's request memory kept warm between requests; the rest goes back"),
    OPT("fcgi", "pool_reserve_bytes", OPT_INT, pool_reserve_bytes, "4294967296", 0, 1099511627776,
        "address space a worker reserves for its requests' values; 0 = malloc"),
    OPT("fcgi", "shutdown_timeout", OPT_INT, shutdown_timeout, "30", 1, 3600,
        "seconds SIGTERM and SIGHUP wait for in-flight requests"),
    OPT("http", "max_body_bytes", OPT_INT, max_body_bytes, "16777216", 1024, 1073741824,
        "largest request body; larger ones get 413"),
    OPT("http", "retry_after", OPT_INT, retry_after, "5", 1, 3600,
        "Retry-After seconds on 503 when the database is unreachable"),
    OPT("http", "external_url", OPT_STRING, external_url, "", 0, 0,
        "https://HOST[:PORT] people and clients reach purser at: the sign-in's redirect_uri is "
        "made "
        "from it, and a sign-in begun at another Host is refused; empty = each request's Host"),
    OPT("http", "metrics_open_loopback", OPT_BOOL, metrics_open_loopback, "true", 0, 0,
        "GET /metrics answers loopback clients without credentials (others need read_metrics)"),
    OPT("database", "socket", OPT_STRING, db_socket, "", 0, 0,
        "MariaDB unix socket; empty = TCP to host and port"),
    OPT("database", "host", OPT_STRING, db_host, "127.0.0.1", 0, 0, "MariaDB host"),
    OPT("database", "port", OPT_INT, db_port, "3306", 1, 65535, "MariaDB port"),
    OPT("database", "user", OPT_STRING, db_user, "purser", 0, 0, "MariaDB user"),
    OPT("database", "password_file", OPT_STRING, db_password_file, "", 0, 0,
        "file holding the MariaDB password; empty = none"),
    OPT("database", "name", OPT_STRING, db_name, "purser", 0, 0, "database (schema) name"),
    OPT("database", "connect_timeout", OPT_INT, db_connect_timeout, "2", 1, 60,
        "seconds to wait for a connection"),
    OPT("database", "causal_reads", OPT_BOOL, db_causal_reads, "true", 0, 0,
        "on a Galera node, each request first waits until the node has applied every write "
        "the cluster committed before it (wsrep_sync_wait)"),
    OPT("auth", "development_mode", OPT_BOOL, development_mode, "false", 0, 0,
        "treat unauthenticated requests from loopback as a server admin; refused with a TCP "
        "FastCGI socket"),
    OPT("cache", "revisions", OPT_INT, cache_revisions, "1024", 1, 1000000,
        "policy revision bodies each worker keeps (they never change)"),
    OPT("cache", "ttl", OPT_INT, cache_ttl, "3600", 1, 86400, "seconds a cache entry lives"),
    OPT("cache", "principals", OPT_INT, cache_principals, "4096", 1, 1000000,
        "authentication entries each worker keeps (token and key owners, roles)"),
    OPT("cache", "auth_ttl", OPT_INT, cache_auth_ttl, "5", 1, 3600,
        "seconds they live at most: a revoked token or changed role is seen at once through "
        "this host's API and within a second elsewhere; this bounds it when the database's note "
        "of the change cannot be read"),
    OPT("cache", "rendered", OPT_INT, cache_rendered, "16", 0, 10000,
        "rendered document revisions each worker keeps (revisions never change); 0 = none"),
    OPT("cache", "rendered_bytes", OPT_INT, cache_rendered_bytes, "67108864", 1048576,
        1099511627776,
        "the bytes of rendered text each worker keeps at most (a revision larger than this "
        "alone is rendered on each read)"),
    OPT("rbac", "policy_file", OPT_STRING, policy_file, "policies/default.yaml", 0, 0,
        "RBAC policy: roles and the actions they grant"),
    OPT("documents", "default_organization", OPT_STRING, default_organization, "default", 0, 0,
        "the organization the Deckhand-compatible /api/v1.0/ paths act on"),
    OPT("documents", "max_yaml_nodes", OPT_INT, max_yaml_nodes, "1000000", 1000, 100000000,
        "most YAML nodes a request body may hold, aliases counted as what they expand to"),
    OPT("documents", "max_yaml_alias_nodes", OPT_INT, max_yaml_alias_nodes, "100000", 0, 100000000,
        "most YAML nodes that aliases in a request body may add (each alias counts "
        "the nodes of what it repeats)"),
    OPT("render", "max_pattern_steps", OPT_INT, render_match_steps, "1000000", 1000, 1000000000,
        "PCRE2 matching steps one substitution pattern match may take; past it the render fails"),
    OPT("render", "max_string_bytes", OPT_INT, render_max_string, "67108864", 65536, 1073741824,
        "longest string a substitution's replacement may make; past it the render fails"),
    OPT("render", "max_output_bytes", OPT_INT, render_max_output, "268435456", 65536, 17179869184,
        "most data (as JSON text) one render's layering and substitution may make; past it the "
        "render fails"),
    OPT("inventory", "bootstrap_ttl", OPT_INT, bootstrap_ttl, "1800", 1, 2592000,
        "seconds a cluster's bootstrap token stays valid"),
    OPT("inventory", "facts_versions", OPT_INT, facts_versions, "100", 1, 100000,
        "dynamic facts versions kept per cluster (older ones are deleted)"),
    OPT("inventory", "ca_file", OPT_STRING, ca_file, "", 0, 0,
        "CA certificate (PEM) the install manifest gives clusters; empty = none"),
    OPT("events", "retention", OPT_INT, events_retention, "7", 0, 3650,
        "days events are kept (purser gc-events deletes older ones; 0 keeps only the newest)"),
    OPT("expiry", "interval", OPT_INT, expiry_interval, "60", 0, 86400,
        "seconds between two looks for what has expired (users, clients, tokens, bootstrap "
        "tokens, resources), by one worker of all the hosts at a time; 0 = only when read"),
    OPT("events", "publish_socket", OPT_STRING, events_publish_socket, "", 0, 0,
        "unix socket of nginx's nchan publisher that committed events are posted to (waiting "
        "readers are held there); empty = no publishing, and wait= answers at once"),
    OPT("events", "follow_interval", OPT_INT, events_follow_interval, "0", 0, 10000,
        "milliseconds between two looks of this host's events follower at the events table, "
        "whose new events it posts to this host's nchan (several hosts: readers here wake for "
        "commits through any host); 0 = no follower (one host)"),
    OPT("git", "root", OPT_STRING, git_root, "/var/lib/purser/git", 0, 0,
        "folder of the git repositories written from the database: <org>.git, an "
        "organization's document history, and <org>/catalogs/<cluster>.git, a cluster's "
        "catalog (docs/inventory.md, \"Git repositories\"); nginx serves it through "
        "git-http-backend"),
    OPT("secrets", "keyring", OPT_STRING, keyring_file, "", 0, 0,
        "keyring file sealing encrypted documents (mode 600); empty = encrypted documents "
        "refused"),
};

#define OPTION_COUNT (sizeof(options) / sizeof(options[0]))

static void *field_of(struct purser_config *cfg, const struct option *opt)
{
    return (char *)cfg + opt->offset;
}

/* Sets one option from a JSON value (a file's, or a default parsed from its text). */
static int option_set(struct purser_config *cfg, const struct option *opt, const json_t *value,
                      struct purser_error *err)
{
    switch (opt->type) {
    case OPT_STRING: {
        char **slot = field_of(cfg, opt);
        char *copy;
        if (!json_is_string(value))
            return purser_error_set(err, PURSER_EINVAL, "%s.%s: must be a string", opt->section,
                                    opt->key);
        if (!(copy = strdup(json_string_value(value))))
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        free(*slot);
        *slot = copy;
        return 0;
    }
    case OPT_INT: {
        long *slot = field_of(cfg, opt);
        json_int_t v;
        if (!json_is_integer(value) || (v = json_integer_value(value)) < opt->min || v > opt->max)
            return purser_error_set(err, PURSER_EINVAL, "%s.%s: must be an integer from %ld to %ld",
                                    opt->section, opt->key, opt->min, opt->max);
        *slot = (long)v;
        return 0;
    }
    case OPT_BOOL: {
        int *slot = field_of(cfg, opt);
        if (!json_is_boolean(value))
            return purser_error_set(err, PURSER_EINVAL, "%s.%s: must be true or false",
                                    opt->section, opt->key);
        *slot = json_is_true(value);
        return 0;
    }
    }
    return PURSER_EINTERNAL;
}

int config_init_defaults(struct purser_config *cfg)
{
    struct purser_error err;
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        json_t *docs, *value;
        int rc;
        const char *text = options[i].default_value;
        if (options[i].type == OPT_STRING) {
            value = json_string(text);
            docs = NULL;
        } else {
            if (yaml_codec_parse(&docs, text, strlen(text), NULL, &err))
                return PURSER_EINTERNAL;
            value = json_incref(json_array_get(docs, 0));
            json_decref(docs);
        }
        rc = option_set(cfg, &options[i], value, &err);
        json_decref(value);
        if (rc) {
            config_release(cfg);
            return rc;
        }
    }
    return 0;
}

static const struct option *option_find(const char *section, const char *key)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (strcmp(options[i].section, section) == 0 && (!key || strcmp(options[i].key, key) == 0))
            return &options[i];
    return NULL;
}

static int apply_document(struct purser_config *cfg, const json_t *doc, struct purser_error *err)
{
    const char *section, *key;
    const json_t *keys, *value;
    int rc = 0;

    if (!doc || json_is_null(doc)) /* an empty file, or only comments */
        return 0;
    if (!json_is_object(doc))
        return purser_error_set(err, PURSER_EINVAL, "configuration must be a mapping of sections");
    json_object_foreach ((json_t *)doc, section, keys) {
        if (!option_find(section, NULL))
            rc = purser_error_set(err, PURSER_EINVAL, "%s: unknown section", section);
        else if (!json_is_null(keys) && !json_is_object(keys))
            rc = purser_error_set(err, PURSER_EINVAL, "%s: must be a mapping", section);
        if (!rc) { /* a null section (keys) has no members */
            json_object_foreach ((json_t *)keys, key, value) {
                const struct option *opt = option_find(section, key);
                rc = opt ? option_set(cfg, opt, value, err)
                         : purser_error_set(err, PURSER_EINVAL, "%s.%s: unknown key", section, key);
                if (rc)
                    break;
            }
        }
        if (rc)
            break;
    }
    return rc;
}

/* http.external_url: empty, or https://HOST[:PORT] with nothing after (no path, no slash). */
static int external_url_check(const char *url, struct purser_error *err)
{
    const char *host = NULL;
    size_t n = 0;
    if (!*url)
        return 0;
    if (!strncmp(url, "https://", 8)) {
        host = url + 8;
        n = strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-[]:");
    }
    if (n == 0 || host[n] != '\0' || host[n - 1] == ':' || strlen(url) > 255)
        return purser_error_set(err, PURSER_EINVAL,
                                "http.external_url: must be https://HOST[:PORT] (no path)");
    return 0;
}

int config_load_text(struct purser_config *cfg, const char *text, size_t len,
                     struct purser_error *err)
{
    json_t *docs = NULL;
    int rc;

    if ((rc = config_init_defaults(cfg)))
        return purser_error_set(err, rc, "out of memory");
    if ((rc = yaml_codec_parse(&docs, text, len, NULL, err)))
        goto cleanup;
    if (json_array_size(docs) > 1) {
        rc = purser_error_set(err, PURSER_EINVAL, "configuration must be one YAML document");
        goto cleanup;
    }
    if ((rc = apply_document(cfg, json_array_get(docs, 0), err)))
        goto cleanup;
    rc = external_url_check(cfg->external_url, err);
cleanup:
    json_decref(docs);
    if (rc) {
        config_release(cfg);
        config_init_defaults(cfg);
    }
    return rc;
}

int config_load(struct purser_config *cfg, const char *path, struct purser_error *err)
{
    char *text = NULL;
    size_t len;
    int rc = file_read_all(&text, &len, path, 1 << 20, err);
    if (rc) {
        config_init_defaults(cfg);
        return rc;
    }
    rc = config_load_text(cfg, text, len, err);
    free(text);
    return rc;
}

void config_release(struct purser_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (options[i].type == OPT_STRING)
            free(*(char **)field_of(cfg, &options[i]));
    memset(cfg, 0, sizeof(*cfg));
}

int config_describe(struct buf *out)
{
    int rc = 0;
    for (size_t i = 0; i < OPTION_COUNT && !rc; i++) {
        const struct option *o = &options[i];
        rc = buf_printf(out, "%s.%s: %s%s%s  # %s\n", o->section, o->key,
                        o->type == OPT_STRING ? "\"" : "", o->default_value,
                        o->type == OPT_STRING ? "\"" : "", o->meaning);
    }
    return rc;
}

int file_read_all(char **out, size_t *len_out, const char *path, size_t max,
                  struct purser_error *err)
{
    struct buf b = BUF_INIT;
    FILE *f = fopen(path, "rb");
    char chunk[8192];
    size_t n;
    int rc = 0;

    *out = NULL;
    if (!f)
        return purser_error_set(err, errno == ENOENT ? PURSER_ENOTFOUND : PURSER_EINVAL, "%s: %s",
                                path, strerror(errno));
    b.limit = max;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if ((rc = buf_add(&b, chunk, n))) {
            purser_error_set(err, rc, "%s: larger than %zu bytes", path, max);
            break;
        }
    if (!rc && ferror(f))
        rc = purser_error_set(err, PURSER_EINVAL, "%s: read error", path);
    fclose(f);
    if (rc) {
        buf_release(&b);
        return rc;
    }
    *out = buf_detach(&b, len_out);
    return *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}
