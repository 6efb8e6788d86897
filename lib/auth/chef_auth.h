/* chef_auth.h: verifying Chef's signed-header authentication, as the Chef Infra Server does.
 *
 * Protocols 1.0 and 1.1 sign the canonical request text itself with RSA PKCS#1 v1.5 (a raw
 * "private encrypt"); 1.2 signs its SHA-1 digest; 1.3 signs its SHA-256 digest and adds the
 * X-Ops-Sign and X-Ops-Server-API-Version lines. Messages are Chef's, word for word:
 *   400 "missing required authentication header(s) 'X-Ops-UserId', ..."
 *   400 "bad header(s) 'X-Ops-Timestamp'"          (not an ISO 8601 UTC time)
 *   400 "Unsupported authentication protocol version"
 *   401 "Failed to authenticate as USER. Synchronize the clock on your host."
 *   401 "Invalid signature for user or client 'USER'"
 */
#ifndef PURSER_CHEF_AUTH_H
#define PURSER_CHEF_AUTH_H

#include "base/buf.h"
#include "base/err.h"

#include <stddef.h>
#include <time.h>

enum chef_sign_version { CHEF_SIGN_1_0, CHEF_SIGN_1_1, CHEF_SIGN_1_2, CHEF_SIGN_1_3 };

/* The request as received; every header is NULL when absent. Borrowed strings. */
struct chef_signed_request {
    const char *method;
    const char *path; /* as sent, without the query */
    const char *body;
    size_t body_len;
    const char *user_id;            /* X-Ops-UserId */
    const char *timestamp;          /* X-Ops-Timestamp */
    const char *sign;               /* X-Ops-Sign */
    const char *content_hash;       /* X-Ops-Content-Hash */
    const char *signature;          /* X-Ops-Authorization-1..N, joined in order */
    const char *server_api_version; /* X-Ops-Server-API-Version */
};

/* The largest clock difference accepted, in seconds (Chef's default). */
#define CHEF_AUTH_SKEW 900

/* Checks what can be checked without a key: required headers, the timestamp (within skew of
 * now), the signing description. PURSER_EINVAL (400) or PURSER_EUNAUTH (401, bad clock),
 * with Chef's message. *version_out gets the protocol. */
int chef_auth_check_headers(const struct chef_signed_request *req, time_t now, int skew,
                            enum chef_sign_version *version_out, struct purser_error *err);

/* Appends the canonical request text of the protocol version to out. */
int chef_auth_canonical(struct buf *out, const struct chef_signed_request *req,
                        enum chef_sign_version version);

/* A worker's parsed public keys, each with its verification contexts ready, by the key's PEM
 * text: parsing a PEM key costs several times the RSA verification itself. An entry is found
 * only by the whole PEM text, so it never outlives its key's meaning: which keys a principal
 * has comes from the authentication lookup (cleared at once in every worker of the host that
 * changes them, within a second elsewhere), and a changed or deleted key is simply not
 * asked for again.
 * Fixed capacity; a newcomer replaces the entry in its slot. Not shared, not locked. */
struct chef_key_cache;

struct chef_key_cache_stats {
    unsigned long hits, misses;
};

/* A cache of about capacity keys (>= 1); NULL when out of memory. */
struct chef_key_cache *chef_key_cache_new(size_t capacity);
void chef_key_cache_free(struct chef_key_cache *cache); /* accepts NULL */
void chef_key_cache_get_stats(const struct chef_key_cache *cache, struct chef_key_cache_stats *out);

/* Verifies the signature against each key (RSA public keys in PEM) in turn, parsing each
 * through cache (NULL: parse every time). 0 and *which = the index of the key that verified,
 * or PURSER_EUNAUTH with Chef's message. For 1.0 and 1.1 the X-Ops-Content-Hash must also
 * equal the hash of the body received. */
int chef_auth_verify(const struct chef_signed_request *req, enum chef_sign_version version,
                     const char *const *public_keys, size_t key_count, struct chef_key_cache *cache,
                     size_t *which, struct purser_error *err);

/* Signs a request as Chef tooling does with protocol 1.3 (SHA-256, RSA PKCS#1 v1.5), the
 * client's half of chef_auth_verify: req's method, path (without the query), body and user_id
 * are read; its timestamp, content_hash, sign and signature are ignored. private_key_pem is
 * the principal's RSA private key (PKCS#1 or PKCS#8 PEM). Appends to out the headers to send,
 * one "Name: value" per line, each line ending in '\n': X-Ops-Sign, X-Ops-UserId,
 * X-Ops-Timestamp (now), X-Ops-Content-Hash, X-Ops-Server-API-Version (req's, or "0") and
 * X-Ops-Authorization-1..N (the signature's base64 in 60-character pieces).
 * PURSER_EINVAL when the key cannot be read (the message names no part of it). */
int chef_auth_sign(struct buf *out, const struct chef_signed_request *req,
                   const char *private_key_pem, time_t now, struct purser_error *err);

/* Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z" into *out; -1 when malformed. */
int chef_auth_parse_time(const char *text, time_t *out);

#endif
