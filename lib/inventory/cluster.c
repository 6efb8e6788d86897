/* cluster.c: clusters, their bootstrap tokens and dynamic facts (cluster.h). */
#include "inventory/cluster.h"

#include "auth/identity.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "resource/resource_values.h"
#include "store/events.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the kind ---- */

#define API_ENDPOINT_MAX 2048
#define TOKEN_LIFETIME_MAX 2592000 /* seconds: 30 days, as inventory.bootstrap_ttl's bound */
#define HOST_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-"

static int string_member(const json_t *obj, const char *key, const char *where,
                         struct purser_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (v && !json_is_string(v))
        return purser_error_set(err, PURSER_EINVAL, "%s%s must be a string", where, key);
    return 0;
}

int cluster_git_select_check(const json_t *select, struct purser_error *err)
{
    const json_t *buckets = json_object_get(select, "buckets");
    const json_t *labels = json_object_get(select, "labels"), *v;
    const char *key;
    size_t i;
    if (!json_is_object(select))
        return purser_error_set(err, PURSER_EINVAL, "spec.git_repo.select must be an object");
    json_object_foreach ((json_t *)select, key, v)
        if (strcmp(key, "buckets") && strcmp(key, "labels"))
            return purser_error_set(err, PURSER_EINVAL,
                                    "spec.git_repo.select.%.80s: unknown field (buckets, labels)",
                                    key);
    if (buckets && !json_is_array(buckets))
        return purser_error_set(err, PURSER_EINVAL,
                                "spec.git_repo.select.buckets must be a list of bucket names");
    json_array_foreach (buckets, i, v)
        if (!json_is_string(v) || !json_string_length(v))
            return purser_error_set(err, PURSER_EINVAL,
                                    "spec.git_repo.select.buckets must be a list of bucket names");
    if (labels && !json_is_object(labels))
        return purser_error_set(err, PURSER_EINVAL,
                                "spec.git_repo.select.labels must be a mapping of label to value");
    json_object_foreach ((json_t *)labels, key, v)
        if (!json_is_string(v))
            return purser_error_set(err, PURSER_EINVAL,
                                    "spec.git_repo.select.labels.%.80s must be a string", key);
    return 0;
}

static int check_git_repo(const json_t *repo, struct purser_error *err)
{
    static const char *const fields[] = {"url", "type", "host_keys", "deploy_key", "select"};
    const char *key, *type;
    const json_t *v;
    int rc = 0;
    if (!json_is_object(repo))
        return purser_error_set(err, PURSER_EINVAL, "spec.git_repo must be an object");
    json_object_foreach ((json_t *)repo, key, v) {
        size_t i = 0;
        while (i < 5 && strcmp(fields[i], key) != 0)
            i++;
        if (i == 5)
            rc = purser_error_set(err, PURSER_EINVAL, "spec.git_repo.%.80s: unknown field", key);
        else
            rc = i == 4 ? cluster_git_select_check(v, err)
                        : string_member(repo, key, "spec.git_repo.", err);
        if (rc)
            break;
    }
    type = json_string_value(json_object_get(repo, "type"));
    if (!rc && type && strcmp(type, "auto") != 0 && strcmp(type, "unmanaged") != 0)
        rc = purser_error_set(err, PURSER_EINVAL,
                              "spec.git_repo.type must be auto or unmanaged, not '%.40s'", type);
    return rc;
}

/* 1 when the n bytes at s are a URL's host and optional port: a DNS name or address
 * ([v6] in brackets), then :1 to :65535. */
static int url_authority(const char *s, size_t n)
{
    size_t host, port;
    if (n && s[0] == '[') { /* an IPv6 address */
        host = strspn(s + 1, "0123456789abcdefABCDEF:.") + 1;
        if (host < 3 || host >= n || s[host] != ']')
            return 0;
        host++;
    } else {
        host = strspn(s, HOST_CHARS); /* stops at the '/', '?' or '#' after n at the latest */
        if (host == 0 || !isalnum((unsigned char)s[0]))
            return 0;
    }
    if (host == n)
        return 1;
    port = n - host - 1;
    if (s[host] != ':' || port < 1 || port > 5 || strspn(s + host + 1, "0123456789") < port)
        return 0;
    return atoi(s + host + 1) >= 1 && atoi(s + host + 1) <= 65535;
}

/* spec.api_endpoint: the API URL the cluster is to use (its install manifest's api_url). */
static int check_api_endpoint(const json_t *v, struct purser_error *err)
{
    const char *url = json_string_value(v), *rest;
    size_t scheme, authority;
    if (url && json_string_length(v) <= API_ENDPOINT_MAX) {
        scheme = !strncmp(url, "https://", 8) ? 8 : !strncmp(url, "http://", 7) ? 7 : 0;
        rest = url + scheme;
        authority = strcspn(rest, "/?#");
        if (scheme && url_authority(rest, authority) && !strchr(rest, '#')) {
            const unsigned char *c = (const unsigned char *)rest;
            while (*c > ' ' && *c < 0x7f)
                c++;
            if (!*c)
                return 0;
        }
    }
    return purser_error_set(err, PURSER_EINVAL,
                            "spec.api_endpoint must be an https:// or http:// URL: a host, an "
                            "optional port and path, no credentials, spaces or fragment, at most "
                            "%d characters (%.80s)",
                            API_ENDPOINT_MAX, url ? url : "not a string");
}

/* Seconds in a duration of numbers with units s, m, h and d ("4h", "1h30m"), or -1. */
static long duration_seconds(const char *text)
{
    long total = 0;
    if (!*text)
        return -1;
    while (*text) {
        size_t digits = strspn(text, "0123456789");
        const char *unit = digits && digits <= 7 ? strchr("smhd", text[digits]) : NULL;
        static const long scale[] = {1, 60, 3600, 86400};
        if (!unit || !*unit)
            return -1;
        total += strtol(text, NULL, 10) * scale[unit - "smhd"];
        if (total > TOKEN_LIFETIME_MAX)
            return -1;
        text += digits + 1;
    }
    return total;
}

/* spec.token_lifetime in seconds: 0 when absent, -1 when it is not a lifetime. */
static long token_lifetime(const json_t *spec)
{
    const json_t *v = json_object_get(spec, "token_lifetime");
    long seconds = -1;
    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) <= TOKEN_LIFETIME_MAX)
        seconds = (long)json_integer_value(v);
    else if (json_is_string(v))
        seconds = duration_seconds(json_string_value(v));
    return seconds < 1 ? -1 : seconds;
}

static int check_spec(const json_t *spec, struct purser_error *err)
{
    static const char *const fields[] = {"display_name", "facts",          "git_repo",
                                         "api_endpoint", "token_lifetime", NULL};
    const char *key;
    const json_t *v, *facts = json_object_get(spec, "facts");
    int rc = 0;
    json_object_foreach ((json_t *)spec, key, v) {
        size_t i = 0;
        while (fields[i] && strcmp(fields[i], key))
            i++;
        if (!fields[i])
            return purser_error_set(err, PURSER_EINVAL, "spec.%.80s: unknown field", key);
    }
    if ((v = json_object_get(spec, "api_endpoint")))
        rc = check_api_endpoint(v, err);
    if (!rc && token_lifetime(spec) < 0)
        rc = purser_error_set(err, PURSER_EINVAL,
                              "spec.token_lifetime must be seconds from 1 to %d (30 days): an "
                              "integer, or a duration such as \"4h\", \"30m\" or \"1h30m\" "
                              "(units s, m, h, d)",
                              TOKEN_LIFETIME_MAX);
    if (!rc)
        rc = string_member(spec, "display_name", "spec.", err);
    if (!rc && facts && !json_is_object(facts))
        rc = purser_error_set(err, PURSER_EINVAL, "spec.facts must be a mapping of strings");
    json_object_foreach ((json_t *)facts, key, v)
        if (!rc && !json_is_string(v)) /* Lieutenant drops such a fact silently */
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "spec.facts.%.80s must be a string (facts are strings; "
                                  "quote the value)",
                                  key);
    if (!rc && (v = json_object_get(spec, "git_repo")))
        rc = check_git_repo(v, err);
    return rc;
}

static const struct resource_field cluster_filters[] = {
    {"display_name", "$.display_name"},
    {"git_repo.type", "$.git_repo.type"},
};

/* The cluster's credential goes with it: the client its bootstrap token made (status.client_id),
 * with that client's keys and tokens. An unredeemed bootstrap token goes with the row. */
/* The client a cluster's bootstrap made expires with the cluster (metadata.expires): its
 * credential is refused from that second on, whether or not anything reads the cluster. */
static int client_follows_expiry(struct store *store, long long id, struct purser_error *err)
{
    struct store_value p = STORE_INT(id);
    return store_exec(store,
                      "UPDATE principals p JOIN resources r ON r.id = ? AND p.org_id = r.org_id"
                      " AND p.kind = 'client' AND p.id = COALESCE(CAST(JSON_VALUE(r.status,"
                      " '$.client_id') AS INTEGER), 0) SET p.expires_at = r.expires_at",
                      &p, 1, NULL, NULL, err);
}

/* After a replace or patch: the client follows the expiry, and a git_repo of type auto
 * without a url gets the catalog's (status.catalog_url, set at registration). */
static int after_write(struct store *store, long long id, struct purser_error *err)
{
    struct store_value p = STORE_INT(id);
    int rc = client_follows_expiry(store, id, err);
    if (!rc)
        rc = store_exec(store,
                        "UPDATE resources SET spec = JSON_SET(spec, '$.git_repo.url',"
                        " JSON_VALUE(status, '$.catalog_url')) WHERE id = ?"
                        " AND JSON_VALUE(spec, '$.git_repo.type') = 'auto'"
                        " AND JSON_VALUE(spec, '$.git_repo.url') IS NULL"
                        " AND JSON_VALUE(status, '$.catalog_url') IS NOT NULL",
                        &p, 1, NULL, NULL, err);
    return rc;
}

/* The URL of cluster id's catalog repository: <base>/git/<org>/catalogs/<id>.git, base the
 * cluster's spec.api_endpoint when it has one, else the API's URL (arena memory). */
static char *catalog_url(const struct resource_scope *s, const json_t *spec, const char *api_base,
                         const char *id)
{
    const char *base = json_string_value(json_object_get(spec, "api_endpoint"));
    struct store_value p = STORE_INT(s->org_id);
    struct store_rows rows;
    struct purser_error err;
    size_t n;
    if (!base)
        base = api_base ? api_base : "";
    n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    int rc = store_query(s->store, s->arena, &rows, "SELECT name FROM organizations WHERE id = ?",
                         &p, 1, &err);
    if (rc || rows.count == 0)
        return NULL;
    return arena_sprintf(s->arena, "%.*s/git/%s/catalogs/%s.git", (int)n, base,
                         store_cell(&rows, 0, 0), id);
}

/* The registration's catalog URL in status (catalog_url), and in spec.git_repo.url when the
 * type is auto and no url is given. */
static int set_catalog_url(const struct resource_scope *s, json_t *body, json_t *state,
                           const char *api_base, const char *id, struct purser_error *err)
{
    json_t *repo = json_object_get(json_object_get(body, "spec"), "git_repo");
    const char *type = json_string_value(json_object_get(repo, "type"));
    char *url = catalog_url(s, json_object_get(body, "spec"), api_base, id);
    if (!url)
        return purser_error_set(err, PURSER_EUNAVAIL, "the organization cannot be read");
    json_object_set_new(state, "catalog_url", json_string(url));
    if (type && strcmp(type, "auto") == 0 && !json_object_get(repo, "url"))
        json_object_set_new(repo, "url", json_string(url));
    return 0;
}

static int delete_credential(struct store *store, long long id, const struct resource_scope *s,
                             struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_INT(id);
    int rc = store_query(store, s->arena, &rows,
                         "SELECT CAST(JSON_VALUE(status, '$.client_id') AS INTEGER) FROM "
                         "resources WHERE id = ?",
                         &p, 1, err);
    if (!rc && rows.count > 0 && store_cell(&rows, 0, 0))
        rc = identity_client_remove(store, s->actor, s->org_id,
                                    strtoll(store_cell(&rows, 0, 0), NULL, 10), err);
    return rc;
}

static const struct event_kind cluster_events[] = {
    {"cluster", "a cluster was registered, changed or deleted (name: the cluster)"},
    {"facts", "a cluster reported its dynamic facts (name: the cluster)"},
    {"bootstrap_token_reset", "a cluster's bootstrap token was reset (name: the cluster)"},
    {"catalog", "a cluster's catalog could not render a revision, or rendered again after one "
                "(name: the cluster; its status.catalog says which)"},
    {NULL, NULL},
};

/* One cluster as an export carries it: the envelope and its dynamic facts; no revision, no
 * times, no bootstrap token. */
static json_t *export_cluster(const json_t *cluster)
{
    const json_t *facts = json_object_get(json_object_get(cluster, "status"), "dynamic_facts");
    json_t *doc = resource_export_doc(&cluster_kind, cluster);
    if (doc && facts)
        json_object_set_new(doc, "status", json_pack("{s:O}", "dynamic_facts", facts));
    return doc;
}

/* An exported cluster registered again (a new bootstrap token), with its dynamic facts. */
static int import_cluster(const struct resource_scope *s, const json_t *doc,
                          const struct resource_import *in, json_t **out, struct purser_error *err)
{
    const json_t *facts = json_object_get(json_object_get(doc, "status"), "dynamic_facts");
    const char *name = json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
    json_t *body = json_pack("{s:O, s:O}", "metadata", json_object_get(doc, "metadata"), "spec",
                             json_object_get(doc, "spec"));
    int rc = cluster_create(s, body, in->token_ttl, NULL, in->base_url, out, err);
    json_decref(body);
    if (!rc && facts) {
        json_decref(*out);
        *out = NULL;
        rc = cluster_facts_put(s, name, facts, 100, 0, out, err);
    }
    return rc;
}

const struct resource_kind cluster_kind = {
    .kind = "Cluster",
    .version = "v1",
    .stored = "cluster",
    .filters = cluster_filters,
    .filter_count = sizeof(cluster_filters) / sizeof(cluster_filters[0]),
    .map_filter = "facts.",
    .map_path = "$.facts",
    .title = "display_name",
    .check_spec = check_spec,
    .on_delete = delete_credential,
    .on_write = after_write,
    .events = cluster_events,
    .export_kind = "Cluster",
    .export_doc = export_cluster,
    .import_doc = import_cluster,
    .values_filter = "dynamic_facts.",
    .id_prefix = "c-",
};

/* ---- ids ---- */

static int dns_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return 0;
    return 1;
}

int cluster_id(struct arena *arena, const char *given, const char **out, struct purser_error *err)
{
    static const char *const first[] = {"quiet", "bold",  "amber", "brisk", "calm",  "eager",
                                        "fair",  "green", "keen",  "lucky", "noble", "proud",
                                        "rapid", "solid", "tidy",  "vivid"};
    static const char *const second[] = {
        "river",  "stone",  "cloud",  "field", "harbor",  "forest",  "meadow", "summit",
        "canyon", "island", "valley", "delta", "glacier", "prairie", "reef",   "ridge"};
    const char *id;
    if (given) {
        const char *prefix = cluster_kind.id_prefix;
        id = strncmp(given, prefix, strlen(prefix)) == 0
                 ? given
                 : arena_sprintf(arena, "%s%s", prefix, given);
    } else {
        unsigned char r[4];
        if (crypto_random(r, sizeof(r)))
            return purser_error_set(err, PURSER_EINTERNAL, "no random bytes");
        id = arena_sprintf(arena, "%s%s-%s-%04u", cluster_kind.id_prefix, first[r[0] % 16],
                           second[r[1] % 16], (unsigned)(r[2] << 8 | r[3]) % 10000);
    }
    if (!id)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!dns_label(id))
        return purser_error_set(err, PURSER_EINVAL,
                                "metadata.name: '%.80s' is not a cluster id (a DNS label: at most "
                                "63 lower-case letters, digits and '-', beginning and ending with "
                                "a letter or digit; 'c-' is added when missing)",
                                id);
    *out = id;
    return 0;
}

/* ---- bootstrap tokens ---- */

struct token_write {
    const char *limit; /* the policy groups of its maker's limit (NULL: none) */
    char hash[65];
    char expires_sql[32]; /* "YYYY-MM-DD HH:MM:SS" (UTC, as the connection) */
    char expires_iso[32];
};

static int token_new(struct token_write *t, long ttl, char **token, struct purser_error *err)
{
    time_t at = time(NULL) + ttl;
    struct tm tm;
    if (!(*token = crypto_random_hex(32)))
        return purser_error_set(err, PURSER_EINTERNAL, "no random bytes");
    crypto_sha256_hex(t->hash, *token, strlen(*token));
    gmtime_r(&at, &tm);
    strftime(t->expires_sql, sizeof(t->expires_sql), "%Y-%m-%d %H:%M:%S", &tm);
    strftime(t->expires_iso, sizeof(t->expires_iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return 0;
}

/* Stores the token's hash for cluster id, in the write's transaction. */
static int token_hook(struct store *store, long long id, void *ctx, struct purser_error *err)
{
    struct token_write *t = ctx;
    struct store_value p[] = {STORE_INT(id), STORE_STR(t->hash), STORE_STR(t->expires_sql),
                              t->limit ? STORE_STR(t->limit) : STORE_NULLV};
    return store_exec(store,
                      "REPLACE INTO bootstrap_tokens (resource_id, token_sha256, expires_at, "
                      "used_at, policy_groups) VALUES (?, ?, ?, NULL, ?)",
                      p, 4, NULL, NULL, err);
}

/* The status members a new token gives the cluster (a new reference): its expiry and, when its
 * maker was limited, the policy groups the credential it makes will hold. */
static json_t *token_state(const struct token_write *t)
{
    return json_pack("{s:{s:s, s:n, s:o*}}", "bootstrap_token", "expires_at", t->expires_iso,
                     "redeemed_at", "policy_groups",
                     t->limit ? identity_split_groups(t->limit) : NULL);
}

/* What the answer shows of a new token, once: {token, expires_at, install_url}. */
static json_t *shown_token(const char *token, const struct token_write *t, const char *base)
{
    return json_pack("{s:s, s:s, s:s++}", "token", token, "expires_at", t->expires_iso,
                     "install_url", base, "/install/bootstrap.json?token=", token);
}

int cluster_create(const struct resource_scope *s, const json_t *body, long ttl, const char *limit,
                   const char *install_base, json_t **out, struct purser_error *err)
{
    const char *given =
        json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
    const char *id;
    struct token_write t = {.limit = limit};
    char *token = NULL;
    json_t *copy, *state;
    int rc;
    *out = NULL;
    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "the body must be a JSON object");
    if (json_object_get(json_object_get(body, "metadata"), "name") && !given)
        return purser_error_set(err, PURSER_EINVAL, "metadata.name must be a string");
    if (token_lifetime(json_object_get(body, "spec")) > 0) /* its own, else the default */
        ttl = token_lifetime(json_object_get(body, "spec"));
    rc = token_new(&t, ttl, &token, err);
    if (!rc) {
        state = token_state(&t);
        copy = json_deep_copy(body); /* with the final id as its name */
        if (!json_object_get(copy, "metadata"))
            json_object_set_new(copy, "metadata", json_object());
        /* a generated id that is taken is drawn again (a given one taken is 409) */
        for (int attempt = 0; attempt < (given ? 1 : 8); attempt++) {
            if ((rc = cluster_id(s->arena, given, &id, err)))
                break;
            json_object_set_new(json_object_get(copy, "metadata"), "name", json_string(id));
            if ((rc = set_catalog_url(s, copy, state, install_base, id, err)))
                break;
            if ((rc = resource_create(&cluster_kind, s, id, copy, state, token_hook, &t, out,
                                      err)) != PURSER_EEXISTS)
                break;
        }
        json_decref(copy);
        json_decref(state);
        if (!rc)
            json_object_set_new(*out, "bootstrap_token", shown_token(token, &t, install_base));
        crypto_free_secret(token);
    }
    return rc;
}

int cluster_token_reset(const struct resource_scope *s, const char *name, long ttl,
                        const char *limit, const char *install_base, json_t **out,
                        struct purser_error *err)
{
    struct token_write t = {.limit = limit};
    char *token = NULL;
    json_t *state, *cluster = NULL;
    int rc = resource_get(&cluster_kind, s, name, &cluster, NULL, err);
    *out = NULL;
    if (!rc) {
        if (token_lifetime(json_object_get(cluster, "spec")) > 0) /* its own, else the default */
            ttl = token_lifetime(json_object_get(cluster, "spec"));
        json_decref(cluster);
        cluster = NULL;
        rc = token_new(&t, ttl, &token, err);
    }
    if (!rc) {
        state = token_state(&t);
        rc = resource_set_status(&cluster_kind, s, name, state, "bootstrap_token_reset", token_hook,
                                 &t, &cluster, err);
        json_decref(state);
        if (!rc) { /* the answer of a creation: the cluster, and its new token once */
            *out = cluster;
            json_object_set_new(*out, "bootstrap_token", shown_token(token, &t, install_base));
        }
        crypto_free_secret(token);
    }
    return rc;
}

/* ---- dynamic facts ---- */

struct facts_write {
    const json_t *facts;
    const char *author, *name;
    long long org_id;
    long keep;
};

static int facts_hook(struct store *store, long long id, void *ctx, struct purser_error *err)
{
    struct facts_write *f = ctx;
    char *text = json_text(f->facts, JSON_COMPACT | JSON_PRESERVE_ORDER);
    struct store_rows rows;
    struct arena *arena = arena_new();
    int rc;
    if (!text || !arena) {
        free(text);
        arena_free(arena);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    {
        struct store_value p[] = {STORE_INT(id), STORE_STR(text), STORE_STR(f->author)};
        rc = store_exec(store,
                        "INSERT INTO cluster_facts (resource_id, facts, author, created_at) "
                        "VALUES (?, ?, ?, NOW(6))",
                        p, 3, NULL, NULL, err);
    }
    free(text);
    if (!rc) /* what lists filter on (filter=dynamic_facts.<path>...) */
        rc = resource_values_write(store, id, f->org_id, cluster_kind.stored, f->name, f->facts,
                                   err);
    if (!rc) { /* keep the newest f->keep */
        struct store_value p[] = {STORE_INT(id), STORE_INT(f->keep)};
        rc = store_query(store, arena, &rows,
                         "SELECT id FROM cluster_facts WHERE resource_id = ? ORDER BY id DESC "
                         "LIMIT 1 OFFSET ?",
                         p, 2, err);
    }
    if (!rc && rows.count) {
        struct store_value p[] = {STORE_INT(id),
                                  STORE_INT(strtoll(store_cell(&rows, 0, 0), NULL, 10))};
        rc = store_exec(store, "DELETE FROM cluster_facts WHERE resource_id = ? AND id <= ?", p, 2,
                        NULL, NULL, err);
    }
    arena_free(arena);
    return rc;
}

int cluster_facts_put(const struct resource_scope *s, const char *name, const json_t *facts,
                      long keep, long long owner, json_t **out, struct purser_error *err)
{
    struct facts_write f = {.facts = facts,
                            .author = s->actor ? s->actor : "",
                            .name = name,
                            .org_id = s->org_id,
                            .keep = keep};
    json_t *cluster;
    int rc = 0;
    *out = NULL;
    if (!json_is_object(facts))
        return purser_error_set(err, PURSER_EINVAL, "facts must be a JSON object");
    if (owner) {
        rc = resource_get(&cluster_kind, s, name, &cluster, NULL, err);
        if (!rc) {
            rc = resource_owner_check(&cluster_kind, cluster, owner, "write_cluster_facts", err);
            json_decref(cluster);
        }
    }
    if (!rc) {
        json_t *members = json_pack("{s:O}", "dynamic_facts", facts);
        rc =
            resource_set_status(&cluster_kind, s, name, members, "facts", facts_hook, &f, out, err);
        json_decref(members);
    }
    return rc;
}

int cluster_facts_history(const struct resource_scope *s, const char *name, const char *page_size,
                          const char *page_token, long long owner, json_t **out,
                          struct purser_error *err)
{
    struct store_rows rows;
    json_t *cluster, *items;
    long long id, after = 0;
    long size = resource_page_size(page_size, err);
    int rc;
    *out = NULL;
    if (size < 0)
        return (int)size;
    rc = resource_get(&cluster_kind, s, name, &cluster, &id, err);
    if (!rc) {
        rc = resource_owner_check(&cluster_kind, cluster, owner, "read_cluster", err);
        json_decref(cluster);
    }
    if (!rc) {
        if (page_token && *page_token) {
            char *end = NULL;
            if (page_token[0] == 'v')
                after = strtoll(page_token + 1, &end, 10);
            if (after <= 0 || !end || *end)
                return purser_error_set(
                    err, PURSER_EINVAL,
                    "page_token is not one this server made: use next_page_token "
                    "as it is");
        }
        {
            struct store_value p[] = {STORE_INT(id), STORE_INT(after), STORE_INT(after),
                                      STORE_INT(size + 1)};
            rc = store_query(
                s->store, s->arena, &rows,
                "SELECT id, facts, author, " STORE_ISO_TIME(
                    "created_at") " FROM cluster_facts WHERE resource_id = ? AND (? = 0 OR id < ?) "
                                  "ORDER BY id DESC LIMIT ?",
                p, 4, err);
        }
    }
    if (!rc) {
        items = json_array();
        for (size_t i = 0; i < rows.count && i < (size_t)size; i++) {
            json_t *facts = json_loads(store_cell(&rows, i, 1), 0, NULL);
            if (!facts)
                continue; /* a row that no longer decodes: skipped */
            json_array_append_new(items, json_pack("{s:s, s:o, s:s, s:s}", "version",
                                                   store_cell(&rows, i, 0), "facts", facts,
                                                   "author", store_cell(&rows, i, 2), "created_at",
                                                   store_cell(&rows, i, 3)));
        }
        *out =
            json_pack("{s:o, s:s}", "items", items, "next_page_token",
                      rows.count > (size_t)size
                          ? arena_sprintf(s->arena, "v%s", store_cell(&rows, (size_t)size - 1, 0))
                          : "");
    }
    return rc;
}

/* ---- redeeming a bootstrap token ---- */

struct redeem {
    const char *hash;
    struct cluster_credential *cred; /* made once the token is known good (not for a bad one:
                                        a key pair costs tens of milliseconds) */
    struct arena *arena;
    json_t *out;
};

static int make_credential(struct cluster_credential *c, struct purser_error *err)
{
    char *private_pem = NULL, *public_pem = NULL;
    int rc;
    if (c->private_key)
        return 0; /* a transaction run again keeps the first */
    rc = crypto_rsa_generate(&private_pem, &public_pem, 2048, err);
    if (!rc) {
        c->private_key = private_pem;
        c->public_key = public_pem;
        if (!(c->bearer = crypto_new_token()))
            rc = purser_error_set(err, PURSER_EINTERNAL, "no random bytes");
    }
    return rc;
}

static int redeem_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct redeem *r = ctx;
    struct store_rows rows;
    struct store_value p = STORE_STR(r->hash);
    struct resource_scope scope = {.store = store, .arena = r->arena};
    long long resource, client_id = 0;
    const char *cluster, *org;
    char token_id[17] = "";
    int rc = store_query(
        store, r->arena, &rows,
        "SELECT b.resource_id, r.name, r.org_id, o.name, b.used_at IS NULL AND "
        "b.expires_at > NOW(6), " STORE_ISO_TIME("b.expires_at") ", " STORE_ISO_TIME(
            "NOW(6)") ", COALESCE(CAST(JSON_VALUE(r.status, '$.client_id') AS INTEGER), 0), "
                      "JSON_VALUE(r.spec, '$.api_endpoint'), JSON_VALUE(r.spec, "
                      "'$.git_repo.type'), JSON_VALUE(r.spec, '$.git_repo.url'), b.policy_groups "
                      "FROM "
                      "bootstrap_tokens b JOIN "
                      "resources r ON "
                      "r.id = b.resource_id JOIN organizations o ON o.id = r.org_id WHERE "
                      "b.token_sha256 = ? FOR UPDATE",
        &p, 1, err);
    json_decref(r->out);
    r->out = NULL;
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_EUNAUTH, "invalid token");
    if (!rc && strcmp(store_cell(&rows, 0, 4), "1") != 0)
        rc = purser_error_set(err, PURSER_EUNAUTH, "token already used or expired");
    if (!rc) {
        resource = strtoll(store_cell(&rows, 0, 0), NULL, 10);
        cluster = store_cell(&rows, 0, 1);
        scope.org_id = strtoll(store_cell(&rows, 0, 2), NULL, 10);
        org = store_cell(&rows, 0, 3);
        scope.actor = cluster; /* the cluster's own credential is what this write makes */
        {
            struct store_value q = STORE_INT(resource);
            rc = store_exec(store,
                            "UPDATE bootstrap_tokens SET used_at = NOW(6) WHERE resource_id = ?",
                            &q, 1, NULL, NULL, err);
        }
        if (!rc)
            rc = make_credential(r->cred, err);
        if (!rc)
            rc = identity_client_credential(
                store, org, cluster, "cluster", store_cell(&rows, 0, 11), r->cred->public_key,
                r->cred->bearer, arena_sprintf(r->arena, "bootstrap of cluster %s", cluster),
                strtoll(store_cell(&rows, 0, 7), NULL, 10), &client_id, token_id, err);
        if (!rc) { /* the cluster's status says it was redeemed and by which client, its event too
                    */
            const char *limit = store_cell(&rows, 0, 11);
            json_t *members =
                json_pack("{s:{s:s, s:s, s:o*}, s:s, s:I}", "bootstrap_token", "expires_at",
                          store_cell(&rows, 0, 5), "redeemed_at", store_cell(&rows, 0, 6),
                          "policy_groups", limit ? identity_split_groups(limit) : NULL, "client",
                          cluster, "client_id", (json_int_t)client_id);
            rc = resource_set_status_in(&cluster_kind, &scope, cluster, members, NULL, err);
            json_decref(members);
        }
        if (!rc)
            rc = client_follows_expiry(store, resource, err);
        if (!rc)
            rc = event_append(store, scope.actor, scope.org_id, "client", cluster, "put", NULL,
                              NULL, err);
        if (!rc)
            rc = event_append(store, scope.actor, scope.org_id, "token", token_id, "put", NULL,
                              NULL, err);
        if (!rc) /* api_url: the cluster's own api_endpoint when it has one */
            r->out = json_pack("{s:s, s:s, s:{s:s, s:I, s:s}, s:s, s:s*}", "cluster", cluster,
                               "organization", org, "client", "name", cluster, "id",
                               (json_int_t)client_id, "private_key", r->cred->private_key, "token",
                               r->cred->bearer, "api_url", store_cell(&rows, 0, 8));
        if (r->out && store_cell(&rows, 0, 10)) /* its git_repo: the catalog when type is auto */
            json_object_set_new(r->out, "git_repo",
                                json_pack("{s:s, s:s?}", "url", store_cell(&rows, 0, 10), "type",
                                          store_cell(&rows, 0, 9)));
    }
    return rc;
}

int cluster_redeem(struct store *store, struct arena *arena, const char *token, json_t **out,
                   struct purser_error *err)
{
    char hash[65];
    struct cluster_credential cred = {0};
    struct redeem r = {.hash = hash, .cred = &cred, .arena = arena};
    int rc;
    *out = NULL;
    if (!token || !*token)
        return purser_error_set(err, PURSER_EINVAL, "token: the query parameter is required");
    if (strlen(token) != 64 || strspn(token, "0123456789abcdef") != 64)
        return purser_error_set(err, PURSER_EINVAL,
                                "token: a bootstrap token is 64 lower-case hex characters");
    crypto_sha256_hex(hash, token, strlen(token));
    rc = store_txn(store, 0, redeem_txn, &r, err);
    if (rc)
        json_decref(r.out);
    else
        *out = r.out;
    crypto_free_secret(cred.private_key);
    free(cred.public_key);
    crypto_free_secret(cred.bearer);
    return rc;
}

int cluster_tokens_expire(struct store *store, long grace, unsigned long long *deleted,
                          struct purser_error *err)
{
    struct store_value p = STORE_INT(grace);
    *deleted = 0;
    return store_exec(store,
                      "DELETE FROM bootstrap_tokens WHERE expires_at <= NOW(6) - INTERVAL ? "
                      "SECOND ORDER BY expires_at LIMIT 100",
                      &p, 1, deleted, NULL, err);
}
