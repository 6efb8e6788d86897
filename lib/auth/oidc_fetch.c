/* oidc_fetch.c: discovery, JWKS and form posts to an OpenID Provider through libcurl
 * (oidc_fetch.h). */
#include "auth/oidc_fetch.h"
#include "base/buf.h"
#include "base/lru.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct lru *documents; /* discovery documents and JWKS by URL, an hour */
static struct lru *refreshes; /* URLs of a JWKS fetched again within the refresh interval */

static int caches_ready(void)
{
    if (!documents) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        documents = lru_new(64, 3600);
        refreshes = lru_new(64, OIDC_FETCH_REFRESH_SECONDS);
        if (documents)
            lru_set_max_bytes(documents, 4 * OIDC_FETCH_MAX);
    }
    return documents && refreshes ? 0 : PURSER_EINTERNAL;
}

void oidc_fetch_forget(void)
{
    if (documents)
        lru_clear(documents);
    if (refreshes)
        lru_clear(refreshes);
}

int oidc_url_allowed(const char *url)
{
    static const char *const loopback[] = {"http://127.0.0.1:", "http://127.0.0.1/",
                                           "http://[::1]:",     "http://[::1]/",
                                           "http://localhost:", "http://localhost/"};
    if (!url || strlen(url) >= OIDC_URL_MAX || strpbrk(url, " \t\r\n\"<>\\^`{|}"))
        return 0;
    if (!strncmp(url, "https://", 8) && url[8])
        return 1;
    for (size_t i = 0; i < sizeof loopback / sizeof *loopback; i++)
        if (!strncmp(url, loopback[i], strlen(loopback[i])))
            return 1;
    return 0;
}

int oidc_form_escape(char *out, size_t size, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
        int plain = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                    (*c >= '0' && *c <= '9') || strchr("-._~", *c);
        if (n + (plain ? 1 : 3) >= size)
            return PURSER_ETOOLARGE;
        if (plain) {
            out[n++] = (char)*c;
        } else {
            out[n++] = '%';
            out[n++] = hex[*c >> 4];
            out[n++] = hex[*c & 15];
        }
    }
    out[n] = '\0';
    return 0;
}

static size_t body_write(char *data, size_t size, size_t count, void *userdata)
{
    struct buf *body = userdata;
    size_t n = size * count;
    if (body->len + n > OIDC_FETCH_MAX || buf_add(body, data, n))
        return 0; /* too large: curl stops with CURLE_WRITE_ERROR */
    return n;
}

/* One exchange: GET url, or POST form with Basic credentials when form is not NULL. */
static int exchange(struct buf *body, long *status, const char *url, const char *client_id,
                    const char *client_secret, const char *form, struct purser_error *err)
{
    CURL *curl = NULL;
    struct curl_slist *headers = NULL;
    CURLcode code;
    int rc = caches_ready();
    if (rc)
        return purser_error_set(err, rc, "out of memory for the provider's documents");
    if (!oidc_url_allowed(url))
        return purser_error_set(err, PURSER_EUNAUTH,
                                "the provider's URL is not https (nor http to loopback)");
    curl = curl_easy_init();
    if (!curl)
        return purser_error_set(err, PURSER_EINTERNAL, "libcurl: no handle");
    headers = curl_slist_append(headers, "Accept: application/json");
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)OIDC_FETCH_TIMEOUT);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, body_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "purser");
    if (form) {
        curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(curl, CURLOPT_USERNAME, client_id);
        curl_easy_setopt(curl, CURLOPT_PASSWORD, client_secret);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, form);
    }
    code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    if (code != CURLE_OK)
        rc = purser_error_set(err, PURSER_EUNAVAIL, "the identity provider: %s",
                              curl_easy_strerror(code));
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return rc;
}

/* The JSON object of a GET answered 200, kept by url; *out malloc'd text. */
static int document_get(char **out, const char *url, int fresh, struct purser_error *err)
{
    struct buf body = BUF_INIT;
    const char *kept;
    size_t len = 0;
    long status = 0;
    int rc = caches_ready();
    *out = NULL;
    kept = rc || fresh ? NULL : lru_get(documents, url, &len, time(NULL));
    if (kept) {
        *out = strndup(kept, len);
        return *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    rc = exchange(&body, &status, url, NULL, NULL, NULL, err);
    if (!rc && status != 200)
        rc = purser_error_set(err, PURSER_EUNAVAIL, "the identity provider answered %ld for %.200s",
                              status, url);
    if (!rc) {
        lru_put(documents, url, buf_cstr(&body), body.len, time(NULL));
        *out = buf_detach(&body, NULL);
        if (!*out)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    buf_release(&body);
    return rc;
}

static int endpoint_copy(char *out, json_t *document, const char *name, int required,
                         struct purser_error *err)
{
    const char *url = json_string_value(json_object_get(document, name));
    out[0] = '\0';
    if (!url && !required)
        return 0;
    if (!url || !oidc_url_allowed(url))
        return purser_error_set(err, PURSER_EUNAUTH,
                                "the provider's discovery document: '%s' is missing or not https",
                                name);
    snprintf(out, OIDC_URL_MAX, "%s", url);
    return 0;
}

int oidc_discover(struct oidc_endpoints *out, const char *issuer, struct purser_error *err)
{
    char url[OIDC_URL_MAX + 64];
    char *text = NULL;
    json_t *document = NULL;
    size_t n = issuer ? strlen(issuer) : 0;
    int rc = 0;
    memset(out, 0, sizeof *out);
    /* the issuer's trailing slash is not doubled (Discovery §4) */
    snprintf(url, sizeof url, "%.*s/.well-known/openid-configuration",
             (int)(n && issuer[n - 1] == '/' ? n - 1 : n), issuer ? issuer : "");
    rc = document_get(&text, url, 0, err);
    if (!rc && !(document = json_loads(text, 0, NULL)))
        rc =
            purser_error_set(err, PURSER_EUNAVAIL, "the provider's discovery document is not JSON");
    if (!rc && strcmp(json_string_value(json_object_get(document, "issuer")) ?: "", issuer))
        rc = purser_error_set(err, PURSER_EUNAUTH,
                              "the provider's discovery document names another issuer than %.200s",
                              issuer);
    if (!rc)
        rc = endpoint_copy(out->issuer, document, "issuer", 1, err);
    if (!rc)
        rc = endpoint_copy(out->authorization, document, "authorization_endpoint", 1, err);
    if (!rc)
        rc = endpoint_copy(out->token, document, "token_endpoint", 1, err);
    if (!rc)
        rc = endpoint_copy(out->jwks, document, "jwks_uri", 1, err);
    if (!rc)
        rc = endpoint_copy(out->device, document, "device_authorization_endpoint", 0, err);
    if (!rc)
        rc = endpoint_copy(out->end_session, document, "end_session_endpoint", 0, err);
    json_decref(document);
    free(text);
    return rc;
}

int oidc_jwks(char **out, int *refreshed, const char *url, int refresh, struct purser_error *err)
{
    size_t len;
    int rc = caches_ready();
    *refreshed = 0;
    if (!rc && refresh && !lru_get(refreshes, url, &len, time(NULL))) {
        *refreshed = 1;
        lru_put(refreshes, url, "1", 1, time(NULL));
    }
    if (rc)
        return purser_error_set(err, rc, "out of memory for the provider's documents");
    return document_get(out, url, *refreshed, err);
}

int oidc_post_form(json_t **out, long *status_out, const char *url, const char *client_id,
                   const char *client_secret, const char *form, struct purser_error *err)
{
    struct buf body = BUF_INIT;
    int rc = 0;
    *out = NULL;
    *status_out = 0;
    rc = exchange(&body, status_out, url, client_id, client_secret, form, err);
    if (!rc && !(*out = json_loadb(buf_cstr(&body), body.len, 0, NULL)))
        rc =
            purser_error_set(err, PURSER_EUNAVAIL,
                             "the identity provider answered %ld without a JSON body", *status_out);
    if (!rc && !json_is_object(*out))
        rc = purser_error_set(err, PURSER_EUNAVAIL,
                              "the identity provider's answer is not an object");
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    buf_release(&body);
    return rc;
}
