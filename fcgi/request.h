/* request.h: one HTTP request as the FastCGI layer sees it, and the ways to answer it.
 *
 * A request lives in its own arena from accept to the end of the log line. Handlers read the
 * method, path parameters, query, headers and body from here and answer with one of the
 * respond_* functions, or return a negative purser_err with req->err filled, which the worker
 * turns into the error response (respond_error: the one place that maps codes to statuses).
 */
#ifndef PURSER_REQUEST_H
#define PURSER_REQUEST_H

#include "auth/identity.h"
#include "base/arena.h"
#include "base/err.h"

#include <fcgiapp.h>
#include <jansson.h>
#include <stddef.h>

struct route;
struct purser_config;
struct rbac_policy;
struct store;
struct lru;
struct keyring;

/* What a request may use of the worker that serves it: all borrowed, owned by the worker,
 * valid for the whole request. Handlers take what they need from here (req->svc->store) and
 * never see the worker loop. */
struct request_services {
    const struct purser_config *config;
    const struct rbac_policy *policy;
    struct store *store;              /* the worker's connection (reconnects on loss) */
    struct lru *revision_cache;       /* policy revision bodies */
    struct lru *auth_cache;           /* token and key owners, roles */
    struct chef_key_cache *key_cache; /* parsed public keys of Chef signed requests */
    struct lru *render_cache;         /* rendered revisions; NULL when cache.rendered is 0 */
    const struct keyring *keyring;    /* NULL when none is configured or it could not be read */
    const struct yaml_limits *document_yaml;   /* the document API's YAML limits */
    const struct render_limits *render_limits; /* what a render may cost */
};

#define REQUEST_MAX_PARAMS 8

/* The Chef server API versions purser speaks (X-Ops-Server-API-Version). */
#define API_VERSION_MIN 0
#define API_VERSION_MAX 2
#define API_VERSION_MIN_TEXT "0"
#define API_VERSION_MAX_TEXT "2"

/* Failures only the web layer produces (lib/ never returns them): purser_err values in the
 * numbers err.h leaves free, mapped to statuses and names with the rest (http_status_for,
 * request_error_name). */
#define HTTP_EMETHOD ((enum purser_err) - 5)     /* the path exists, not with this method (405) */
#define HTTP_ENOTACCEPT ((enum purser_err) - 6)  /* not in the asked format or version (406) */
#define HTTP_EMEDIATYPE ((enum purser_err) - 10) /* unsupported content type (415) */

/* The body form of error answers (SPEC §2), from the route (JSON until one matched). */
enum request_error_form {
    REQUEST_ERRORS_JSON, /* {"error": {"code", "message"}} */
    REQUEST_ERRORS_CHEF, /* Chef's {"error": ["message"]} */
    REQUEST_ERRORS_YAML, /* Deckhand's Status document */
};

struct request {
    FCGX_Request *fcgx;
    struct arena *arena;
    const struct request_services *svc;
    const struct route *route;
    enum request_error_form error_form;
    const char *allow; /* the Allow header's methods after a 405 (arena memory), or NULL */
    const char *method;
    const char *path;  /* raw path, without the query */
    const char *query; /* raw query string, "" when none */
    size_t param_count;
    const char *param_names[REQUEST_MAX_PARAMS];
    const char *param_values[REQUEST_MAX_PARAMS]; /* percent-decoded */
    const char *body;
    size_t body_len;
    int input_read;        /* the whole input has been read (request_read_body) */
    const char *principal; /* who is asking, once authenticated; "-" until then */
    struct principal who;  /* the authenticated principal (valid when authenticated) */
    int authenticated;
    int auth_failure_counted; /* purser_auth_failures_total has this request (a reason known) */
    long long owner_only;     /* the principal's id when its role holds the route's action only on
                                 what it created (RBAC `own`, ROUTE_OWNED routes); 0 otherwise */
    int api_version;          /* X-Ops-Server-API-Version asked for (0 when absent) */
    char request_id[17];
    int status;        /* the status sent */
    size_t bytes_sent; /* body bytes sent */
    int responded;
    struct purser_error err;
    json_t *error_details; /* owned: the messageList of a YAML route's Status error, or NULL */
    json_t *error_fields;  /* owned: members set on a JSON or Chef error body beside (or in
                            * place of) "error": a 410's oldest_seq, Chef's not_found; or NULL */
};

/* A FastCGI parameter (CGI variable), or NULL. */
const char *request_env(const struct request *req, const char *name);

/* A request header by its HTTP name ("Content-Type", "If-Match"), or NULL. */
const char *request_header(const struct request *req, const char *name);

/* A query parameter that must be a non-negative integer: fallback when absent, or -1 with a
 * 400 in req->err ("NAME must be a non-negative integer, not '...'"). */
long long request_query_count(struct request *req, const char *name, long long fallback);

/* 1 when the request's If-None-Match ("*", or a list of quoted tags, W/ or not) names etag
 * (given without quotes): the client has it and gets 304. */
int request_etag_fresh(const struct request *req, const char *etag);

/* A path parameter by the name in the route pattern ("org" for {org}), or NULL. */
const char *request_param(const struct request *req, const char *name);

/* The first value of a query parameter, percent-decoded with '+' as a space (url.h; arena
 * memory), or NULL. */
const char *request_query(const struct request *req, const char *name);

/* Every value of a repeated query parameter (percent-decoded, '+' as space), in order, in an
 * arena array; returns how many. */
size_t request_query_all(const struct request *req, const char *name, const char ***out);

/* The body parsed as JSON into *out, or PURSER_EINVAL "invalid JSON". The value is borrowed:
 * the request's arena owns it (released by an arena cleanup), as it owns everything a request
 * reads; a caller that keeps it past the request takes its own reference. */
int request_json(struct request *req, json_t **out);

/* The body as a YAML stream (application/x-yaml or application/yaml; an empty body is none)
 * parsed within the document API's limits: *out a list of documents. */
int request_yaml(struct request *req, json_t **out);

/* request_yaml's parts, for a body parsed elsewhere: 415 unless the body is sent as YAML; and
 * the answer for the parser's failure (its line and column in the message). */
int request_yaml_type(struct request *req);
int request_yaml_failed(struct request *req, const struct purser_error *parse);

/* "https://host:port": the base of absolute URLs in answers. */
const char *request_base_url(struct request *req);

/* The links of lib/'s answers to this request (base/links.h), built from the route table
 * (links.h); in the request's arena, NULL when out of memory (lib/ then answers null links). */
struct links;
const struct links *request_links(struct request *req);

/* Reads the body (Content-Length bytes, which the worker has already held to
 * http.max_body_bytes) into req->body, and the end of the input after it (a body longer than
 * Content-Length is PURSER_EINVAL); sets req->input_read. */
int request_read_body(struct request *req);

/* Answers with status and a JSON value (borrowed), as application/json. extra_headers is
 * NULL or "Name: value\r\n" lines. */
int respond_json(struct request *req, int status, const json_t *body, const char *extra_headers);

/* Answers with status and out (a new reference, consumed) when rc is 0; returns rc otherwise
 * (out may then be NULL). The shape of every JSON handler's last line. */
int respond_owned(struct request *req, int rc, int status, json_t *out);

/* Answers with status and the YAML stream of the documents in the array docs (borrowed), as
 * application/x-yaml. */
int respond_yaml(struct request *req, int status, const json_t *docs);

/* respond_yaml of one document (out, consumed) when rc is 0; returns rc otherwise. */
int respond_yaml_owned(struct request *req, int rc, int status, json_t *out);

/* 1 when the request's Accept names application/json first: the document API's YAML answers
 * (respond_yaml*, and its Status documents for errors) are then sent as JSON with the same
 * content (a stream as a list, one document as itself). YAML stays the default. */
int request_wants_json(const struct request *req);

/* 1 when the request's Content-Type is the media type want (parameters such as charset aside,
 * case ignored). */
int request_media_is(const struct request *req, const char *want);

/* A YAML stream already emitted (text), or the same as JSON when the request wants it. */
int respond_yaml_text(struct request *req, int status, const char *text, size_t len);
/* The same with extra_headers (NULL or "Name: value\r\n" lines). */
int respond_yaml_text_with(struct request *req, int status, const char *text, size_t len,
                           const char *extra_headers);

/* Answers with status and text as content_type. */
int respond_text(struct request *req, int status, const char *content_type, const char *text,
                 size_t len, const char *extra_headers);

/* Answers with the error in req->err (code rc): the one mapping from purser_err to HTTP
 * status, in the body format of the route (SPEC §2), with req->error_fields' members set on a
 * JSON or Chef body. Internal errors are logged with the request id and answered with a
 * sanitised message. A handler with more to say than the message sets req->error_fields and
 * returns its code; it never picks a status of its own. */
void respond_error(struct request *req, int rc);

/* The HTTP status for a purser_err. */
int http_status_for(enum purser_err code);

/* The code name of an error answer ("not_found", "method_not_allowed"). */
const char *request_error_name(int rc);

/* "404 Not Found" style reason phrase for a status. */
const char *http_reason(int status);

#endif
