/* ctl.h: purserctl's shared parts: the command table, the context in force, requests over
 * HTTPS (libcurl), the answer's output, and the exit codes.
 *
 * Every command is a row of ctl_commands[] (purserctl.c): its name, its usage line, an example,
 * and the API operations it calls ("GET /organizations/{org}/clusters"). `purserctl
 * operations` lists those, t/9010 holds them to GET /docs, and the bash completion is made
 * from the same rows. A request names its operation by the same template (ctl_call), so the
 * list says what the code does.
 *
 * Memory: a command runs once and exits; strings it builds live in the struct ctl's arena
 * (freed at exit). jansson values are released where they are made.
 */
#ifndef PURSER_CTL_H
#define PURSER_CTL_H

#include "base/arena.h"
#include "base/buf.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The paths of the API's two families: an organization's, and the document API's (Deckhand's;
 * under /organizations/{org} when the context names one). */
#define ORG "/organizations/{org}"
#define DOCS "/api/v1.0"

/* A kind's path written REG_LIST or REG_ITEM is its registry row's (lib/registry, the row of
 * the kind's name): its collection's or one object's. ctl_registry_path gives it (any other
 * path as it is). */
#define REG_LIST "=list"
#define REG_ITEM "=item"
const char *ctl_registry_path(const char *name, const char *path);

/* Exit codes (README, "purserctl"): each class of failure its own, as scripts need. */
enum ctl_exit {
    CTL_OK = 0,
    CTL_DIFFERENT = 1,   /* diff: the two sides differ (as diff(1) and kubectl diff) */
    CTL_USAGE = 2,       /* the command line is wrong */
    CTL_NOTFOUND = 3,    /* 404 */
    CTL_CONFLICT = 4,    /* 409, 412: exists, changed meanwhile, or not empty */
    CTL_DENIED = 5,      /* 401, 403: no credential, a wrong one, or not allowed */
    CTL_UNAVAILABLE = 6, /* cannot connect, TLS failure, 429, 502, 503, 504 */
    CTL_INVALID = 7,     /* 400, 413, 415, 422, or a local file that cannot be read or parsed */
    CTL_FAILED = 8,      /* anything else: a 500, an answer that is not what the API says */
};

enum ctl_output { OUT_DEFAULT, OUT_TABLE, OUT_JSON, OUT_YAML, OUT_NAME };

/* The context in force: the configuration file's, then PURSER_* variables, then options. */
struct ctl_context {
    const char *name;
    const char *url;          /* https://host:port, no trailing slash */
    const char *ca;           /* a CA bundle file, or NULL for the system's */
    const char *organization; /* NULL: the document API's root routes, and no org routes */
    const char *token;        /* a bearer token, or */
    const char *client;       /* a principal's name and */
    const char *key;          /* the file of its private key, for Chef signing */
    const char *expires;      /* a sign-in's session: when it ends (RFC 3339, UTC), or NULL */
};

struct ctl {
    struct arena *arena;
    const struct ctl_command *command; /* the command running */
    struct ctl_context context;
    const char *config_path;  /* the contexts file */
    const char *context_flag; /* --context */
    enum ctl_output output;
    int anonymous; /* the command needs no credential (an open route, or a token in its query) */
    int quiet;     /* --quiet: no progress, no "unchanged" notes */
    int verbose;   /* --verbose: each request's method, URL and status on stderr */
    int progress_shown; /* a progress bar is on stderr's last line */
    void *curl;         /* the libcurl handle, made on the first request */
    char *key_pem;
};

/* An answer: its status, body and content type. */
struct ctl_answer {
    long status;
    struct buf body;
    char content_type[128];
};

void ctl_answer_release(struct ctl_answer *answer);

/* ---- the command table ------------------------------------------------------------------- */

struct ctl_command {
    const char *name;                                   /* "get", "token create" */
    int (*run)(struct ctl *ctl, int argc, char **argv); /* argv[0] is the command's last word */
    const char *usage;                                  /* the arguments, after the name */
    const char *summary;
    const char *example;
    const char *operations; /* the API operations it may call, ';'-separated: "GET /users" */
    const char *options;    /* its long options, space-separated, for the completion */
    const char *words;      /* its sub-verbs ("create list ..."), for the completion; or NULL */
    unsigned flags;         /* CMD_OFFLINE, CMD_ANONYMOUS */
};

enum ctl_command_flags {
    CMD_OFFLINE = 1,   /* needs no context loaded first (it has none yet, or finds its own) */
    CMD_ANONYMOUS = 2, /* needs a server but no credential */
};

extern const struct ctl_command ctl_commands[];
extern const size_t ctl_command_count;

/* 1 when the running command's row (or, for the verbs over kinds, the kinds' rows) lists the
 * operation: with PURSER_CTL_STRICT=1 (the tests), ctl_send refuses an operation that is not,
 * so that `purserctl operations` says what the code does. */
int ctl_operation_listed(const struct ctl *ctl, const char *method, const char *template);

/* Prints the command's usage, summary and example to out. */
void ctl_command_help(FILE *out, const struct ctl_command *command);

/* "usage: purserctl NAME USAGE" on stderr and CTL_USAGE, with a message first when not NULL. */
int ctl_usage(const struct ctl_command *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

const struct ctl_command *ctl_command_find(const char *name);

/* ---- requests ---------------------------------------------------------------------------- */

/* Resolves the context (config file, PURSER_* variables, --context): CTL_OK, or CTL_USAGE with
 * a message on stderr when there is no URL or no credential. */
int ctl_context_load(struct ctl *ctl);

/* The request's operation and its values: template is an operation's path as /docs has it
 * ("/organizations/{org}/clusters/{id}"); {org} is the context's organization, and each other
 * {name} takes the next of values in turn, escaped as one path segment. query (may be NULL) is
 * appended as it is after '?', so callers escape its values (ctl_query_add). A template under
 * "/api/v1.0/" is the document API: it goes under /organizations/{org} when the context names
 * one, at the root (the default organization) when not. */
struct ctl_request {
    const char *method;
    const char *template;
    const char *const *values;
    const char *query;
    const char *content_type; /* of body; NULL: none sent */
    const void *body;
    size_t body_len;
    const char *accept; /* NULL: application/json */
    FILE *download;     /* a 2xx answer's body is written here instead of kept */
    const char *if_match;
    int progress; /* show a progress bar on stderr for the transfer (when it is a terminal) */
    long timeout; /* seconds; 0: none */
    int literal;  /* template is a path as it is: no {org}, no values, no document API prefix */
};

/* Sends the request, signed or with the bearer token. CTL_OK with the answer (any status),
 * or CTL_UNAVAILABLE (message printed) when no answer came. */
int ctl_send(struct ctl *ctl, const struct ctl_request *request, struct ctl_answer *out);

/* Releases the libcurl handle and the key read for signing (wiped). */
void ctl_release(struct ctl *ctl);

/* ctl_send, then: a 2xx is CTL_OK; any other status prints "purserctl: MESSAGE" (the API's own
 * message, from any of its error shapes) and returns its exit code. */
int ctl_call(struct ctl *ctl, const struct ctl_request *request, struct ctl_answer *out);

/* ctl_call for a JSON answer, parsed into *out (the caller decrefs); CTL_FAILED when it is
 * not JSON. */
int ctl_call_json(struct ctl *ctl, const struct ctl_request *request, json_t **out);

/* The exit code of an HTTP status. */
int ctl_exit_of_status(long status);

/* Prints the API's error message of a failed answer ("purserctl: ...") and returns its exit code.
 */
int ctl_fail(const struct ctl_answer *answer);

/* Appends "&name=value" (or "name=value" first) with value escaped, to a query buffer. */
void ctl_query_add(struct buf *query, const char *name, const char *value);

/* ---- output ------------------------------------------------------------------------------ */

/* A column of a table: a header and where its value is ("metadata.name"; "" the row itself,
 * "@key" the key of a row of an object list). */
enum ctl_column_kind { COL_TEXT, COL_TIME, COL_LIST, COL_COUNT };
struct ctl_column {
    const char *header;
    const char *path;
    enum ctl_column_kind kind;
};

/* How a list answer holds its rows: under a key ("items"), the answer itself when an array
 * (NULL), or an object whose keys are the names (Chef's {name: url}: ROWS_KEYS). */
struct ctl_view {
    const char *kind;  /* the singular name for -o name: "cluster" */
    const char *rows;  /* the key of the rows' array; NULL: the answer is the array */
    int rows_are_keys; /* the answer is an object keyed by name */
    const char *name;  /* the path of a row's name, for -o name */
    const struct ctl_column *columns; /* ends with a NULL header */
};

/* Prints an answer (a JSON value) in the output asked: table (rows of view, or a one-row table
 * of an object), json (the API's text: raw when given), yaml, or name. raw may be NULL. */
int ctl_print(struct ctl *ctl, const json_t *answer, const struct ctl_view *view, const char *raw);

/* Prints value as YAML on out. */
int ctl_print_yaml(FILE *out, const json_t *value);

/* A time as people read it: "5m ago", "in 2h", "3d ago"; "-" for null or an empty string. */
const char *ctl_relative_time(struct ctl *ctl, const char *iso);

/* The value at a dotted path ("metadata.labels"), or NULL. */
json_t *ctl_dig(const json_t *value, const char *path);

/* A progress bar on stderr when it is a terminal (and not --quiet): done of total (0: unknown). */
void ctl_progress(struct ctl *ctl, const char *what, double done, double total);
void ctl_progress_end(struct ctl *ctl);

/* ---- files -------------------------------------------------------------------------------- */

/* Reads FILE ("-" for standard input) into *out (NUL-terminated). CTL_OK or CTL_INVALID. */
int ctl_read_file(struct buf *out, const char *path);

/* Parses a JSON or YAML file (one document) into *out. CTL_OK or CTL_INVALID. */
int ctl_read_value(json_t **out, const char *path);

/* A printf into the ctl's arena. */
char *ctl_printf(struct ctl *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The contexts file's path, and writing a context into it (the current one when make_current). */
const char *ctl_config_path(struct ctl *ctl);
int ctl_context_save(struct ctl *ctl, const struct ctl_context *context, int make_current);

/* The principal the context's credential is: its client name, else (a token) the principal the
 * organization's permissions name. CTL_OK with *out, or the failure (printed). */
int ctl_whoami(struct ctl *ctl, const char **out);

/* login --sso (sso.c): a session through the identity provider named provider (NULL: the
 * server's only one), by purserctl's loopback listener and the browser, or with device by the
 * device authorization grant; fills c's token and expires, *who the user. ctl->context is c,
 * without a credential. */
int ctl_login_sso(struct ctl *ctl, struct ctl_context *c, const char *provider, int device,
                  const char **who);

/* logout: the current context's session ends on the server, and its token leaves the file. */
int cmd_logout(struct ctl *ctl, int argc, char **argv);

/* The newest document revision's id: CTL_OK with *out, CTL_NOTFOUND when there is none, or the
 * call's failure (printed). */
int ctl_newest_revision(struct ctl *ctl, const char **out);

/* Appends value to out as one YAML document (what the document API takes). CTL_OK or
 * CTL_INVALID (printed). */
int ctl_yaml_text(struct buf *out, const json_t *value);

/* Writes docs (an array: one YAML document each; anything else: one document) into text and
 * makes it request's body, as application/x-yaml (text must outlive the request). CTL_OK or
 * CTL_INVALID (printed). */
int ctl_request_yaml(struct ctl_request *request, struct buf *text, const json_t *docs);

/* A string field's value, or "" when it is absent or not a string (for messages). */
const char *ctl_text(const json_t *value, const char *path);

/* Errors on stderr, prefixed "purserctl: "; returns code. */
int ctl_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the commands, by file --------------------------------------------------------------- */

/* resources.c: the kinds get, describe, create, replace, patch and delete work on */
int cmd_get(struct ctl *ctl, int argc, char **argv);
int cmd_describe(struct ctl *ctl, int argc, char **argv);
int cmd_create(struct ctl *ctl, int argc, char **argv);
int cmd_replace(struct ctl *ctl, int argc, char **argv);
int cmd_patch(struct ctl *ctl, int argc, char **argv);
int cmd_delete(struct ctl *ctl, int argc, char **argv);
/* The i-th kind's plural ("clusters"), each once, or NULL past the last: for the completion. */
const char *ctl_kind_plural(size_t i);
/* Calls each with every operation a kind's verb calls ("list cluster"), and the query
 * parameters it may send ("labelSelector filter sort page_size page_token"; NULL: none). */
void ctl_kind_operations(void (*each)(void *ctx, const char *method, const char *path,
                                      const char *command, const char *query),
                         void *ctx);

/* context.c */
int cmd_login(struct ctl *ctl, int argc, char **argv);
int cmd_config(struct ctl *ctl, int argc, char **argv);
int cmd_bootstrap(struct ctl *ctl, int argc, char **argv);

/* apply.c: apply; diff.c: diff (what both need: apply.h, private to the two) */
int cmd_apply(struct ctl *ctl, int argc, char **argv);
int cmd_diff(struct ctl *ctl, int argc, char **argv);

/* verbs.c */
int cmd_promote(struct ctl *ctl, int argc, char **argv);
int cmd_render(struct ctl *ctl, int argc, char **argv);
int cmd_rollback(struct ctl *ctl, int argc, char **argv);
int cmd_tag(struct ctl *ctl, int argc, char **argv);
int cmd_validation(struct ctl *ctl, int argc, char **argv);
int cmd_facts(struct ctl *ctl, int argc, char **argv);
int cmd_reset_token(struct ctl *ctl, int argc, char **argv);
int cmd_git(struct ctl *ctl, int argc, char **argv); /* git.c */
int cmd_token(struct ctl *ctl, int argc, char **argv);
int cmd_health(struct ctl *ctl, int argc, char **argv);
int cmd_version(struct ctl *ctl, int argc, char **argv);
int cmd_api(struct ctl *ctl, int argc, char **argv);

/* stream.c */
int cmd_watch(struct ctl *ctl, int argc, char **argv);
int cmd_export(struct ctl *ctl, int argc, char **argv);
int cmd_import(struct ctl *ctl, int argc, char **argv);

/* cookbook.c */
int cmd_cookbook(struct ctl *ctl, int argc, char **argv);

/* collect.c */
int cmd_collect(struct ctl *ctl, int argc, char **argv);

#endif
