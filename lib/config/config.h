/* config.h: purser's configuration file (YAML), its documented defaults and its validation.
 *
 * The file is one YAML mapping of sections; every key is optional and has a default. Unknown
 * sections or keys, and values of the wrong type or out of range, are errors that name the key
 * (for example "fcgi.workers: must be an integer from 0 to 256"). config_describe() lists every
 * key with its default and meaning; docs/reference/configuration.md is the same text (make
 * manual-ref).
 */
#ifndef PURSER_CONFIG_H
#define PURSER_CONFIG_H

/* The release this source is (purser_build_info in GET /metrics). */
#define PURSER_VERSION "0.9.0"

#include "base/buf.h"
#include "base/err.h"

#include <stddef.h>

struct purser_config {
    /* fcgi: the FastCGI master and its workers */
    char *fcgi_socket;       /* unix socket path nginx connects to */
    char *fcgi_socket_group; /* its group (mode 0660); empty: the process's own */
    long fcgi_backlog;       /* listen() backlog */
    long workers;            /* worker processes; 0 = one per CPU */
    long max_requests;       /* a worker exits after this many requests (0 = never) */
    long pool_keep_bytes;    /* request memory a worker keeps warm (base/json_pool.h) */
    long pool_reserve_bytes; /* address space reserved for it; 0 = jansson uses malloc */
    long shutdown_timeout;   /* seconds SIGTERM waits for in-flight requests */
    /* http */
    long max_body_bytes; /* largest request body accepted (413 above) */
    long retry_after;    /* seconds in Retry-After when the database is down */
    char *external_url;  /* https://host[:port] clients reach purser at ("": each request's Host) */
    /* database */
    char *db_socket; /* unix socket; empty = TCP to host:port */
    char *db_host;
    long db_port;
    char *db_user;
    char *db_password_file; /* file holding the password; empty = no password */
    char *db_name;
    long db_connect_timeout; /* seconds */
    int db_causal_reads;     /* on a Galera node: wsrep_sync_wait once per request */
    /* auth */
    int metrics_open_loopback; /* GET /metrics without credentials from loopback */
    int development_mode;      /* unauthenticated requests act as a server admin (loopback only) */
    /* cache (per worker) */
    long cache_revisions;      /* policy revision bodies kept */
    long cache_ttl;            /* seconds an entry lives */
    long cache_principals;     /* authentication entries kept (tokens, keys, roles) */
    long cache_auth_ttl;       /* seconds they live: how late a revocation may take effect */
    long cache_rendered;       /* rendered document revisions kept (0 = none) */
    long cache_rendered_bytes; /* the bytes of their text kept at most */
    /* rbac */
    char *policy_file; /* RBAC policy (roles to actions) */
    /* documents */
    char *default_organization;  /* the organization of /api/v1.0/ */
    long max_yaml_nodes;         /* nodes a document API body may expand to */
    long max_yaml_alias_nodes;   /* nodes aliases may add to it */
    long render_match_steps;     /* PCRE2 steps per substitution pattern match */
    long render_max_string;      /* longest string a replacement may make */
    long render_max_output;      /* data one render's layering and substitution may make */
    long bootstrap_ttl;          /* seconds a cluster's bootstrap token is valid */
    long facts_versions;         /* dynamic facts versions kept per cluster */
    char *ca_file;               /* CA certificate the install manifest carries ("" = none) */
    long events_retention;       /* days events are kept */
    long expiry_interval;        /* seconds between two sweeps of what has expired (0: none) */
    char *events_publish_socket; /* nchan's publisher socket ("" = events are not published) */
    long events_follow_interval; /* ms between the events follower's looks (0: no follower) */
    /* git: the repositories of the document history and the catalogs (lib/git) */
    char *git_root; /* their folder (fcgiwrap's git-http-backend serves it read-only) */
    /* secrets */
    char *keyring_file; /* the keyring that seals encrypted documents; empty = none */
};

/* Fills cfg with the defaults. Strings are heap copies; release with config_release(). */
int config_init_defaults(struct purser_config *cfg);

/* Reads the file at path over the defaults. On failure cfg holds the defaults only and err
 * names the key at fault (or the YAML position). */
int config_load(struct purser_config *cfg, const char *path, struct purser_error *err);

/* The same from text already in memory (name is used in messages). */
int config_load_text(struct purser_config *cfg, const char *text, size_t len,
                     struct purser_error *err);

/* Frees the strings and zeroes cfg. Accepts NULL. */
void config_release(struct purser_config *cfg);

/* Appends one line per key: "section.key: default  # meaning". */
int config_describe(struct buf *out);

/* Reads a whole file into a new buffer (NUL-terminated; caller frees *out). At most max bytes:
 * PURSER_ETOOLARGE above. PURSER_ENOTFOUND when it does not exist. */
int file_read_all(char **out, size_t *len_out, const char *path, size_t max,
                  struct purser_error *err);

#endif
