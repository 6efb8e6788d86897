/* oidc_fetch.h: what purser asks an OpenID Provider over the network, through libcurl.
 *
 * libcurl is the one HTTP client of lib/, and this is the one file that calls it: the
 * provider's discovery document (`ISSUER/.well-known/openid-configuration`), its JWKS, and
 * form posts to its token and device endpoints (client_secret_basic). URLs are https, or http
 * to a loopback address only (127.0.0.1, [::1], localhost: a provider on the same machine, as
 * the tests run one); redirects are not followed; answers past OIDC_FETCH_MAX bytes, or slower
 * than OIDC_FETCH_TIMEOUT seconds, are refused (PURSER_EUNAVAIL).
 *
 * Discovery documents and JWKS are kept per worker as text (base/lru.h), an hour each; a JWKS
 * is fetched again before its hour when a token names a key it lacks (oidc_jwks with refresh),
 * at most once per OIDC_FETCH_REFRESH_SECONDS for one URL, so that tokens naming made-up keys
 * cannot make purser hammer the provider. Per worker process: not locked.
 */
#ifndef PURSER_OIDC_FETCH_H
#define PURSER_OIDC_FETCH_H

#include "base/err.h"

#include <jansson.h>

#define OIDC_FETCH_MAX (1024 * 1024)
#define OIDC_FETCH_TIMEOUT 10
#define OIDC_FETCH_REFRESH_SECONDS 10
#define OIDC_URL_MAX 512

/* The endpoints of a provider's discovery document. */
struct oidc_endpoints {
    char issuer[OIDC_URL_MAX];
    char authorization[OIDC_URL_MAX];
    char token[OIDC_URL_MAX];
    char jwks[OIDC_URL_MAX];
    char device[OIDC_URL_MAX];      /* "" when the provider has no device authorization grant */
    char end_session[OIDC_URL_MAX]; /* "" when it has none */
};

/* 1 when url is https, or http to a loopback address. */
int oidc_url_allowed(const char *url);

/* The discovery document of issuer, fetched or cached. PURSER_EUNAVAIL when the provider
 * cannot be reached or answers other than 200 JSON; PURSER_EUNAUTH when the document names
 * another issuer than the one asked (OpenID Connect Discovery §4.3), or an endpoint that is
 * not https. */
int oidc_discover(struct oidc_endpoints *out, const char *issuer, struct purser_error *err);

/* The JWKS at url as text: *out is malloc'd, caller frees. refresh: fetch it again unless that
 * was done within OIDC_FETCH_REFRESH_SECONDS (then the kept text; *refreshed says which). */
int oidc_jwks(char **out, int *refreshed, const char *url, int refresh, struct purser_error *err);

/* POSTs form (application/x-www-form-urlencoded, already encoded) to url with HTTP Basic
 * client_id:client_secret. *out is the JSON object answered (new reference), *status_out the
 * HTTP status: a 400 with an OAuth error object is an answer, not a failure. */
int oidc_post_form(json_t **out, long *status_out, const char *url, const char *client_id,
                   const char *client_secret, const char *form, struct purser_error *err);

/* form-urlencodes value into out (at most size bytes with its NUL); PURSER_ETOOLARGE if not. */
int oidc_form_escape(char *out, size_t size, const char *value);

/* Forgets every kept document (the tests and a provider's deletion). */
void oidc_fetch_forget(void);

#endif
