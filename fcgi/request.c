/* request.c: request accessors, body reading, and response writing (the status mapping). */
#include "request.h"

#include "codec/yaml_codec.h"

#include "base/json_text.h"
#include "base/log.h"
#include "base/utf8.h"
#include "links.h"
#include "url.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *request_env(const struct request *req, const char *name)
{
    return FCGX_GetParam(name, req->fcgx->envp);
}

const char *request_header(const struct request *req, const char *name)
{
    char key[128] = "HTTP_";
    size_t n = 5;
    if (strcasecmp(name, "Content-Type") == 0)
        return request_env(req, "CONTENT_TYPE");
    if (strcasecmp(name, "Content-Length") == 0)
        return request_env(req, "CONTENT_LENGTH");
    for (; *name && n + 1 < sizeof(key); name++)
        key[n++] = *name == '-' ? '_' : (char)toupper((unsigned char)*name);
    key[n] = '\0';
    return request_env(req, key);
}

const char *request_param(const struct request *req, const char *name)
{
    for (size_t i = 0; i < req->param_count; i++)
        if (strcmp(req->param_names[i], name) == 0)
            return req->param_values[i];
    return NULL;
}

size_t request_query_all(const struct request *req, const char *name, const char ***out)
{
    return url_query_values(req->arena, req->query, name, out);
}

const char *request_query(const struct request *req, const char *name)
{
    const char **values;
    return url_query_values(req->arena, req->query, name, &values) ? values[0] : NULL;
}

int request_read_body(struct request *req)
{
    const char *length_text = request_env(req, "CONTENT_LENGTH");
    char *end, *body;
    unsigned long long declared = 0;
    int got;

    if (length_text && *length_text) {
        declared = strtoull(length_text, &end, 10);
        if (*end)
            return purser_error_set(&req->err, PURSER_EINVAL, "Content-Length is not a number");
    }
    if (!(body = arena_alloc(req->arena, (size_t)declared + 1)))
        return purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    got = declared ? FCGX_GetStr(body, (int)declared, req->fcgx->in) : 0;
    if (got < 0 || (unsigned long long)got != declared)
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "request body shorter than Content-Length");
    /* The end of the input (nginx's empty FCGI_STDIN record, normally already read with the
     * parameters): the connection then holds nothing unread and may simply be closed. */
    if (FCGX_GetChar(req->fcgx->in) != EOF)
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "request body longer than Content-Length");
    req->input_read = 1;
    body[got] = '\0';
    req->body = body;
    req->body_len = (size_t)got;
    return 0;
}

int request_json(struct request *req, json_t **out)
{
    json_error_t jerr;
    *out =
        req->body_len ? json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!*out && !req->body_len)
        return purser_error_set(&req->err, PURSER_EINVAL, "invalid JSON: the body is empty");
    if (!*out) /* jansson says what and where (a NUL, a key given twice, a syntax error) */
        return purser_error_set(&req->err, PURSER_EINVAL, "invalid JSON: %s at line %d, column %d",
                                jerr.text, jerr.line, jerr.column);
    if (arena_add_cleanup(req->arena, (void (*)(void *))json_decref, *out)) {
        *out = NULL;
        return purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    }
    return 0;
}

const char *request_base_url(struct request *req)
{
    const char *host = request_env(req, "HTTP_HOST");
    const char *scheme = request_env(req, "REQUEST_SCHEME");
    return arena_sprintf(req->arena, "%s://%s", scheme ? scheme : "https",
                         host ? host : "localhost");
}

static json_t *request_link(void *ctx, enum link_target target, const char *const *params,
                            size_t count)
{
    struct request *req = ctx;
    const char *pattern = link_pattern(target);
    const char *path = pattern ? route_fill(req->arena, pattern, params, count) : NULL;
    return path ? json_sprintf("%s%s", request_base_url(req), path) : NULL;
}

const struct links *request_links(struct request *req)
{
    struct links *links = arena_alloc(req->arena, sizeof(*links));
    if (links) {
        links->url = request_link;
        links->ctx = req;
    }
    return links;
}

const char *request_error_name(int rc)
{
    if (rc == HTTP_EMETHOD)
        return "method_not_allowed";
    if (rc == HTTP_ENOTACCEPT)
        return "not_acceptable";
    if (rc == HTTP_EMEDIATYPE)
        return "unsupported_media_type";
    return purser_err_name((enum purser_err)rc);
}

const char *http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 412: return "Precondition Failed";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 503: return "Service Unavailable";
    default: return status < 500 ? "Error" : "Internal Server Error";
    }
}

int http_status_for(enum purser_err code)
{
    static const struct {
        enum purser_err code;
        int status;
    } map[] = {
        {PURSER_OK, 200},        {PURSER_EINVAL, 400},    {PURSER_EUNAUTH, 401},
        {PURSER_EDENIED, 403},   {PURSER_ENOTFOUND, 404}, {HTTP_EMETHOD, 405},
        {HTTP_ENOTACCEPT, 406},  {PURSER_EEXISTS, 409},   {PURSER_ECOMPARE, 412},
        {PURSER_ETOOLARGE, 413}, {HTTP_EMEDIATYPE, 415},  {PURSER_ELIMIT, 429},
        {PURSER_EINTERNAL, 500}, {PURSER_EUNAVAIL, 503},  {PURSER_EGONE, 410},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (map[i].code == code)
            return map[i].status;
    return 500;
}

/* Chef's version header, {"min_version":"0","max_version":"2","request_version":"N",
 * "response_version":"N"}, for N = -1 (refused) and each version: made once per process. */
static const char *api_version_header(struct request *req)
{
    static char *headers[API_VERSION_MAX + 2];
    int v = req->api_version < 0 ? -1 : req->api_version;
    char **slot = &headers[v + 1];
    if (!*slot) {
        char version[16];
        json_t *h;
        snprintf(version, sizeof(version), "%d", v);
        h = json_pack("{s:s, s:s, s:s, s:s}", "min_version", API_VERSION_MIN_TEXT, "max_version",
                      API_VERSION_MAX_TEXT, "request_version", version, "response_version",
                      version);
        *slot = h ? json_text(h, JSON_COMPACT) : NULL;
        json_decref(h);
    }
    return *slot ? *slot : "";
}

int respond_text(struct request *req, int status, const char *content_type, const char *text,
                 size_t len, const char *extra_headers)
{
    int head_only = strcmp(req->method, "HEAD") == 0;
    char status_text[24], length_text[24];
    /* concatenated, not formatted: this runs for every answer */
    char *head =
        arena_concat(req->arena, "Status: ", decimal_text(status_text, (unsigned long long)status),
                     " ", http_reason(status), "\r\nContent-Type: ", content_type,
                     "\r\nContent-Length: ", decimal_text(length_text, len),
                     "\r\nX-Request-Id: ", req->request_id,
                     "\r\nX-Ops-Server-API-Version: ", api_version_header(req), "\r\n",
                     extra_headers ? extra_headers : "", "\r\n", (const char *)NULL);
    if (!head)
        return purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
    FCGX_PutStr(head, (int)strlen(head), req->fcgx->out);
    if (len && !head_only)
        FCGX_PutStr(text, (int)len, req->fcgx->out);
    req->status = status;
    req->bytes_sent = head_only ? 0 : len;
    req->responded = 1;
    return 0;
}

long long request_query_count(struct request *req, const char *name, long long fallback)
{
    const char *text = request_query(req, name);
    char *end;
    long long n;
    if (!text)
        return fallback;
    errno = 0;
    n = strtoll(text, &end, 10);
    if (!*text || *end || n < 0 || errno == ERANGE) {
        purser_error_set(&req->err, PURSER_EINVAL, "%s must be a non-negative integer, not '%.40s'",
                         name, text);
        return -1;
    }
    return n;
}

int request_etag_fresh(const struct request *req, const char *etag)
{
    const char *header = request_header(req, "If-None-Match");
    size_t n = strlen(etag);
    if (!header)
        return 0;
    if (strcmp(header, "*") == 0)
        return 1;
    for (const char *p = strchr(header, '"'); p; p = strchr(p + 1, '"')) {
        if (strncmp(p + 1, etag, n) == 0 && p[n + 1] == '"')
            return 1;
        p = strchr(p + 1, '"'); /* skip to the closing quote */
        if (!p)
            break;
    }
    return 0;
}

int respond_json(struct request *req, int status, const json_t *body, const char *extra_headers)
{
    char *text = json_text(body, JSON_COMPACT | JSON_ENCODE_ANY);
    int rc;
    if (!text)
        return purser_error_set(&req->err, PURSER_EINTERNAL, "cannot encode the response");
    rc = respond_text(req, status, "application/json", text, strlen(text), extra_headers);
    free(text);
    return rc;
}

int respond_owned(struct request *req, int rc, int status, json_t *out)
{
    if (!rc)
        rc = respond_json(req, status, out, NULL);
    json_decref(out);
    return rc;
}

int request_wants_json(const struct request *req)
{
    const char *accept = request_header(req, "Accept");
    size_t len;
    if (!accept)
        return 0;
    accept += strspn(accept, " \t");
    len = strcspn(accept, ",; \t");
    return len == 16 && strncasecmp(accept, "application/json", 16) == 0;
}

int respond_yaml_text(struct request *req, int status, const char *text, size_t len)
{
    return respond_yaml_text_with(req, status, text, len, NULL);
}

int respond_yaml_text_with(struct request *req, int status, const char *text, size_t len,
                           const char *extra_headers)
{
    json_t *docs = NULL;
    struct yaml_limits limits = yaml_limits_default;
    int rc;
    if (!request_wants_json(req))
        return respond_text(req, status, "application/x-yaml", text, len, extra_headers);
    /* the same content as JSON: what purser emitted reads back equal (yaml_codec_emit) */
    limits.max_bytes = len + 1;
    limits.max_nodes = (size_t)-1;
    rc = yaml_codec_parse(&docs, text, len, &limits, &req->err);
    if (!rc)
        rc = respond_json(req, status, docs, extra_headers);
    json_decref(docs);
    return rc;
}

int respond_yaml(struct request *req, int status, const json_t *docs)
{
    struct buf out = BUF_INIT;
    int rc;
    if (request_wants_json(req))
        return respond_json(req, status, docs, NULL);
    rc = yaml_codec_emit(&out, docs, &req->err);
    if (!rc)
        rc = respond_text(req, status, "application/x-yaml", out.data ? out.data : "", out.len,
                          NULL);
    buf_release(&out);
    return rc;
}

int respond_yaml_owned(struct request *req, int rc, int status, json_t *out)
{
    if (!rc && request_wants_json(req))
        rc = respond_json(req, status, out, NULL);
    else if (!rc) {
        json_t *docs = json_pack("[O]", out);
        rc = docs ? respond_yaml(req, status, docs)
                  : purser_error_set(&req->err, PURSER_EINTERNAL, "out of memory");
        json_decref(docs);
    }
    json_decref(out);
    return rc;
}

/* Deckhand's Status document (SPEC §5) for an error on a YAML route. */
static json_t *status_document(struct request *req, int status, const char *message, int rc)
{
    json_t *list = req->error_details ? json_incref(req->error_details)
                                      : json_pack("[{s:s, s:b}]", "message", message, "error", 1);
    const char *code = arena_sprintf(req->arena, "%d %s", status, http_reason(status));
    return json_pack("[{s:s, s:s, s:{}, s:s, s:s, s:s, s:{s:s, s:I, s:o}, s:s, s:b}]", "kind",
                     "Status", "apiVersion", "v1.0", "metadata", "status", "Failure", "message",
                     message, "reason", http_reason(status), "details", "errorType",
                     request_error_name(rc), "errorCount", (json_int_t)json_array_size(list),
                     "messageList", list, "code", code ? code : "", "retry", status >= 500);
}

void respond_error(struct request *req, int rc)
{
    int status = http_status_for((enum purser_err)rc);
    const char *message = req->err.message[0] ? req->err.message : request_error_name(rc);
    const char *extra = NULL;
    json_t *body;

    /* A message may quote what the client sent: what is not UTF-8 is written as \xNN. */
    if (!utf8_valid(message, strlen(message))) {
        char *escaped = utf8_escape(message);
        message = escaped ? arena_strdup(req->arena, escaped) : request_error_name(rc);
        free(escaped);
        if (!message)
            message = request_error_name(rc);
    }

    if (status == 500) {
        json_t *fields = json_pack("{s:s, s:s}", "request_id", req->request_id, "error", message);
        log_message("error", "internal error", fields);
        json_decref(fields);
        message = arena_sprintf(req->arena, "internal error (request %s)", req->request_id);
    }
    if (status == 503)
        extra = arena_sprintf(req->arena, "Retry-After: %ld\r\n", req->svc->config->retry_after);
    if (status == 405)
        extra = arena_sprintf(req->arena, "Allow: %s\r\n", req->allow ? req->allow : "");
    if (req->error_form == REQUEST_ERRORS_YAML && request_wants_json(req)) {
        /* Deckhand's Status document, as JSON (the same content) */
        json_t *doc = status_document(req, status, message ? message : "error", rc);
        if (!doc || respond_json(req, status, json_array_get(doc, 0), extra))
            respond_text(req, 500, "text/plain", "internal error\n", 15, NULL);
        json_decref(doc);
        return;
    }
    if (req->error_form == REQUEST_ERRORS_YAML) {
        json_t *doc = status_document(req, status, message ? message : "error", rc);
        struct buf out = BUF_INIT;
        int failed = doc ? yaml_codec_emit(&out, doc, NULL) : PURSER_EINTERNAL;
        if (!failed)
            failed = respond_text(req, status, "application/x-yaml", out.data ? out.data : "",
                                  out.len, extra);
        if (failed)
            respond_text(req, 500, "text/plain", "internal error\n", 15, NULL);
        buf_release(&out);
        json_decref(doc);
        return;
    }
    if (req->error_form == REQUEST_ERRORS_CHEF)
        body = json_pack("{s:[s]}", "error", message ? message : "error");
    else
        body = json_pack("{s:{s:s, s:s}}", "error", "code", request_error_name(rc), "message",
                         message ? message : "error");
    if (body && req->error_fields && status != 500 && json_object_update(body, req->error_fields)) {
        json_decref(body);
        body = NULL;
    }
    if (!body || respond_json(req, status, body, extra))
        respond_text(req, 500, "text/plain", "internal error\n", 15, NULL);
    json_decref(body);
}

int request_media_is(const struct request *req, const char *want)
{
    const char *type = request_env(req, "CONTENT_TYPE");
    size_t len = type ? strcspn(type, "; \t") : 0;
    return type && len == strlen(want) && strncasecmp(type, want, len) == 0;
}

int request_yaml_type(struct request *req)
{
    const char *type = request_env(req, "CONTENT_TYPE");
    if (req->body_len && !request_media_is(req, "application/x-yaml") &&
        !request_media_is(req, "application/yaml"))
        return purser_error_set(&req->err, HTTP_EMEDIATYPE,
                                "Content-Type must be application/x-yaml, not '%s'",
                                type ? type : "");
    return 0;
}

int request_yaml_failed(struct request *req, const struct purser_error *parse)
{
    if (parse->line)
        return purser_error_set(&req->err, parse->code, "the body %s: line %d, column %d: %.180s",
                                parse->code == PURSER_ETOOLARGE ? "is over a limit"
                                                                : "is not valid YAML",
                                parse->line, parse->column, parse->message);
    req->err = *parse;
    return parse->code;
}

int request_yaml(struct request *req, json_t **out)
{
    struct purser_error parse;
    int rc = request_yaml_type(req);
    *out = NULL;
    if (rc)
        return rc;
    if (yaml_codec_parse(out, req->body ? req->body : "", req->body_len, req->svc->document_yaml,
                         &parse))
        return request_yaml_failed(req, &parse);
    return 0;
}
