/* http.c: purserctl's requests over HTTPS with libcurl, bearer or Chef-signed, and what a
 * failed answer says. */
#include "ctl.h"

#include "auth/chef_auth.h"
#include "codec/yaml_codec.h"
#include "config/config.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void ctl_answer_release(struct ctl_answer *answer)
{
    buf_release(&answer->body);
}

int ctl_exit_of_status(long status)
{
    if (status >= 200 && status < 300)
        return CTL_OK;
    switch (status) {
    case 404:
    case 410: return CTL_NOTFOUND;
    case 409:
    case 412: return CTL_CONFLICT;
    case 401:
    case 403: return CTL_DENIED;
    case 408:
    case 429:
    case 502:
    case 503:
    case 504: return CTL_UNAVAILABLE;
    case 400:
    case 405:
    case 406:
    case 413:
    case 415:
    case 422: return CTL_INVALID;
    default: return CTL_FAILED;
    }
}

int ctl_error(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("purserctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* The message of any of the API's error shapes: {"error": {"message"}} (purser's),
 * {"error": ["..."]} (Chef's), a Deckhand Status ({"message", details.messageList}), in JSON
 * or YAML. NULL when the body says nothing readable. */
static char *error_message(const struct ctl_answer *answer)
{
    json_t *docs = NULL, *body, *error, *list;
    struct buf text = BUF_INIT;
    struct purser_error err;
    size_t i;

    if (!answer->body.len)
        return NULL;
    if (!(body = json_loadb(answer->body.data, answer->body.len, 0, NULL)) &&
        yaml_codec_parse(&docs, answer->body.data, answer->body.len, NULL, &err) == 0 &&
        json_array_size(docs) == 1)
        body = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    error = json_object_get(body, "error");
    if (json_is_string(json_object_get(error, "message")))
        buf_adds(&text, json_string_value(json_object_get(error, "message")));
    else if (json_is_array(error))
        for (i = 0; i < json_array_size(error); i++)
            buf_printf(&text, "%s%s", i ? "; " : "", ctl_text(json_array_get(error, i), NULL));
    else if (json_is_string(error))
        buf_adds(&text, json_string_value(error));
    else if (json_is_string(json_object_get(body, "message"))) {
        buf_adds(&text, json_string_value(json_object_get(body, "message")));
        list = ctl_dig(body, "details.messageList");
        for (i = 0; i < json_array_size(list); i++) {
            const char *m = json_string_value(json_object_get(json_array_get(list, i), "message"));
            if (m && strcmp(m, buf_cstr(&text)) != 0 && text.len < 4000)
                buf_printf(&text, "\n  %s", m);
        }
    }
    json_decref(body);
    if (!text.len && answer->body.len < 300 && !strchr(answer->body.data, '<'))
        buf_adds(&text, answer->body.data);
    while (text.len && (text.data[text.len - 1] == '\n' || text.data[text.len - 1] == ' '))
        text.data[--text.len] = '\0';
    return text.len ? buf_detach(&text, NULL) : (buf_release(&text), NULL);
}

int ctl_fail(const struct ctl_answer *answer)
{
    char *message = error_message(answer);
    int code = ctl_exit_of_status(answer->status);
    ctl_error(code, "%s (HTTP %ld)", message ? message : "the server refused the request",
              answer->status);
    free(message);
    return code;
}

void ctl_query_add(struct buf *query, const char *name, const char *value)
{
    char *escaped = curl_easy_escape(NULL, value, 0);
    buf_printf(query, "%s%s=%s", query->len ? "&" : "", name, escaped ? escaped : "");
    curl_free(escaped);
}

/* The URL as messages show it: a token in the query (a bootstrap token) is a secret, and
 * shown as "token=..." only. */
static const char *url_shown(struct ctl *ctl, const char *url)
{
    const char *at = strstr(url, "token=");
    if (!at || (at[-1] != '?' && at[-1] != '&'))
        return url;
    return ctl_printf(ctl, "%.*stoken=...%s", (int)(at - url), url, at + 6 + strcspn(at + 6, "&"));
}

/* The path of the request: the template with {org} and the values put in, each escaped. */
static int build_path(struct ctl *ctl, struct buf *out, const struct ctl_request *request)
{
    const char *t = request->template;
    size_t next = 0;

    if (request->literal)
        return buf_adds(out, t) ? CTL_FAILED : CTL_OK;
    if (strncmp(t, "/api/v1.0/", 10) == 0 && ctl->context.organization) {
        char *org = curl_easy_escape(NULL, ctl->context.organization, 0);
        buf_printf(out, "/organizations/%s", org);
        curl_free(org);
    }
    while (*t) {
        const char *close;
        char *escaped;
        if (*t != '{' || !(close = strchr(t, '}'))) {
            buf_addc(out, *t++);
            continue;
        }
        if (strncmp(t, "{org}", 5) == 0) {
            if (!ctl->context.organization)
                return ctl_error(CTL_USAGE, "no organization: give --org, set PURSER_ORG, or "
                                            "log in with --org");
            escaped = curl_easy_escape(NULL, ctl->context.organization, 0);
        } else {
            if (!request->values || !request->values[next])
                return ctl_error(CTL_FAILED, "internal: %s needs more values", request->template);
            escaped = curl_easy_escape(NULL, request->values[next++], 0);
        }
        buf_adds(out, escaped);
        curl_free(escaped);
        t = close + 1;
    }
    return CTL_OK;
}

struct transfer {
    struct ctl *ctl;
    const struct ctl_request *request;
    struct ctl_answer *answer;
    CURL *curl;
};

static size_t on_body(char *data, size_t size, size_t count, void *ctx)
{
    struct transfer *t = ctx;
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (t->request->download && status >= 200 && status < 300)
        return fwrite(data, size, count, t->request->download) * size;
    return buf_add(&t->answer->body, data, size * count) ? 0 : size * count;
}

/* Keeps the value of a header named name (case-insensitive) into out. */
static void keep_header(const char *line, size_t len, const char *name, char *out, size_t size)
{
    size_t n = strlen(name), vlen;
    if (len <= n || strncasecmp(line, name, n) != 0)
        return;
    line += n;
    len -= n;
    while (len && *line == ' ')
        line++, len--;
    while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
        len--;
    vlen = len < size - 1 ? len : size - 1;
    memcpy(out, line, vlen);
    out[vlen] = '\0';
}

static size_t on_header(char *data, size_t size, size_t count, void *ctx)
{
    struct transfer *t = ctx;
    keep_header(data, size * count, "content-type:", t->answer->content_type,
                sizeof(t->answer->content_type));
    return size * count;
}

static int on_progress(void *ctx, curl_off_t down_total, curl_off_t down, curl_off_t up_total,
                       curl_off_t up)
{
    struct transfer *t = ctx;
    if (up_total > 0 && up < up_total)
        ctl_progress(t->ctl, "sent", (double)up, (double)up_total);
    else if (down > 0)
        ctl_progress(t->ctl, "received", (double)down, (double)down_total);
    return 0;
}

/* The credential's headers: the bearer token, or Chef's signed headers for path and body. */
static int credential_headers(struct ctl *ctl, struct curl_slist **headers,
                              const struct ctl_request *request, const char *path)
{
    struct chef_signed_request signing = {0};
    struct buf lines = BUF_INIT;
    struct purser_error err;
    char *line, *save = NULL;
    size_t len;
    int rc;

    if (!ctl->context.client) /* a signed request names its API version among the signed headers */
        *headers = curl_slist_append(*headers, "X-Ops-Server-API-Version: 1");
    if (!ctl->context.token && !ctl->context.client)
        return CTL_OK; /* an open route, or one whose query holds the credential */
    if (ctl->context.token) {
        *headers = curl_slist_append(
            *headers, ctl_printf(ctl, "Authorization: Bearer %s", ctl->context.token));
        return CTL_OK;
    }
    if (!ctl->key_pem && (rc = file_read_all(&ctl->key_pem, &len, ctl->context.key, 1 << 20, &err)))
        return ctl_error(CTL_USAGE, "the key of client %s: %s", ctl->context.client, err.message);
    signing.method = request->method;
    signing.path = path;
    signing.body = request->body ? request->body : "";
    signing.body_len = request->body ? request->body_len : 0;
    signing.user_id = ctl->context.client;
    signing.server_api_version = "1";
    if (chef_auth_sign(&lines, &signing, ctl->key_pem, time(NULL), &err)) {
        buf_release(&lines);
        return ctl_error(CTL_USAGE, "%s: %s", ctl->context.key, err.message);
    }
    for (line = strtok_r(lines.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        *headers = curl_slist_append(*headers, line);
    buf_release(&lines);
    return CTL_OK;
}

static CURL *handle(struct ctl *ctl)
{
    if (!ctl->curl) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        ctl->curl = curl_easy_init();
    } else
        curl_easy_reset(ctl->curl);
    return ctl->curl;
}

/* The request's headers, but the credential's. */
static struct curl_slist *request_headers(struct ctl *ctl, struct curl_slist *headers,
                                          const struct ctl_request *request)
{
    headers = curl_slist_append(
        headers,
        ctl_printf(ctl, "Accept: %s", request->accept ? request->accept : "application/json"));
    if (request->content_type)
        headers =
            curl_slist_append(headers, ctl_printf(ctl, "Content-Type: %s", request->content_type));
    if (request->if_match)
        headers = curl_slist_append(headers, ctl_printf(ctl, "If-Match: %s", request->if_match));
    return curl_slist_append(headers, "Expect:");
}

/* Sets the transfer's options: the URL, method, headers, callbacks, CA, limits, body. */
static void transfer_setup(struct transfer *t, const char *url, struct curl_slist *headers,
                           char *error)
{
    const struct ctl_request *request = t->request;
    curl_easy_setopt(t->curl, CURLOPT_URL, url);
    curl_easy_setopt(t->curl, CURLOPT_CUSTOMREQUEST, request->method);
    curl_easy_setopt(t->curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(t->curl, CURLOPT_USERAGENT, "purserctl/" PURSER_VERSION);
    curl_easy_setopt(t->curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(t->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(t->curl, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(t->curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(t->curl, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(t->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t->curl, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(t->curl, CURLOPT_PROTOCOLS_STR, "https,http");
    if (!strcmp(request->method, "HEAD"))
        curl_easy_setopt(t->curl, CURLOPT_NOBODY, 1L);
    if (t->ctl->context.ca)
        curl_easy_setopt(t->curl, CURLOPT_CAINFO, t->ctl->context.ca);
    if (request->timeout)
        curl_easy_setopt(t->curl, CURLOPT_TIMEOUT, request->timeout);
    if (request->body) {
        curl_easy_setopt(t->curl, CURLOPT_POSTFIELDS, request->body);
        curl_easy_setopt(t->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_len);
    }
    if (request->progress && !t->ctl->quiet && isatty(STDERR_FILENO)) {
        curl_easy_setopt(t->curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(t->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(t->curl, CURLOPT_XFERINFODATA, t);
    }
}

int ctl_send(struct ctl *ctl, const struct ctl_request *request, struct ctl_answer *out)
{
    struct buf path = BUF_INIT;
    struct curl_slist *headers = NULL;
    struct transfer t = {ctl, request, out, handle(ctl)};
    char error[CURL_ERROR_SIZE] = "";
    const char *url = NULL;
    CURLcode curl_rc;
    int rc;

    memset(out, 0, sizeof(*out));
    if (getenv("PURSER_CTL_STRICT") && !request->literal && ctl->command &&
        !ctl_operation_listed(ctl, request->method, request->template))
        return ctl_error(CTL_FAILED, "internal: %s %s is not in the operations of purserctl %s",
                         request->method, request->template, ctl->command->name);
    rc = t.curl ? build_path(ctl, &path, request) : ctl_error(CTL_FAILED, "out of memory");
    if (rc)
        goto cleanup;
    url = ctl_printf(ctl, "%s%s%s%s", ctl->context.url, path.data, request->query ? "?" : "",
                     request->query ? request->query : "");
    if ((rc = credential_headers(ctl, &headers, request, path.data)))
        goto cleanup;
    headers = request_headers(ctl, headers, request);
    transfer_setup(&t, url, headers, error);
    curl_rc = curl_easy_perform(t.curl);
    if (request->progress)
        ctl_progress_end(ctl);
    if (curl_rc != CURLE_OK) {
        rc = ctl_error(CTL_UNAVAILABLE, "%s %s: %s", request->method, url_shown(ctl, url),
                       *error ? error : curl_easy_strerror(curl_rc));
        goto cleanup;
    }
    curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &out->status);
    buf_addc(&out->body, '\0');
    out->body.len--;
    if (ctl->verbose)
        fprintf(stderr, "%s %s -> %ld\n", request->method, url_shown(ctl, url), out->status);
cleanup:
    curl_slist_free_all(headers);
    buf_release(&path);
    return rc;
}

int ctl_call(struct ctl *ctl, const struct ctl_request *request, struct ctl_answer *out)
{
    int rc = ctl_send(ctl, request, out);
    if (!rc && (out->status < 200 || out->status >= 300))
        rc = ctl_fail(out);
    return rc;
}

int ctl_call_json(struct ctl *ctl, const struct ctl_request *request, json_t **out)
{
    struct ctl_answer answer;
    json_error_t error;
    int rc = ctl_call(ctl, request, &answer);

    *out = NULL;
    if (!rc && answer.status != 204 &&
        !(*out = json_loadb(answer.body.data, answer.body.len, JSON_DECODE_ANY, &error)))
        rc = ctl_error(CTL_FAILED, "%s %s answered what is not JSON: %s", request->method,
                       request->template, error.text);
    if (!rc && !*out)
        *out = json_object();
    ctl_answer_release(&answer);
    return rc;
}

void ctl_release(struct ctl *ctl)
{
    if (ctl->key_pem) { /* a private key: wiped before it is freed */
        OPENSSL_cleanse(ctl->key_pem, strlen(ctl->key_pem));
        free(ctl->key_pem);
        ctl->key_pem = NULL;
    }
    if (ctl->curl) {
        curl_easy_cleanup(ctl->curl);
        curl_global_cleanup();
    }
    ctl->curl = NULL;
}
