/* oidc_token.h: an OpenID Connect ID token checked as OpenID Connect Core 1.0 §3.1.3.7 says.
 *
 * The signature is verified with libcjose against the provider's JWKS (RS256 and ES256 only:
 * never "none", never a MAC with a public key as its secret), then the claims: `iss` is the
 * issuer, `aud` names the client (and when it names others too, `azp` is the client), `exp`
 * is not past and `iat` not ahead (both within the skew), `nonce` is the one the sign-in sent,
 * `sub` is there. Nothing here fetches anything: the caller hands the JWKS text in, and a
 * token signed by a key the JWKS does not have is PURSER_ENOTFOUND, so that the caller fetches
 * the JWKS again, once (the provider rotated its keys).
 *
 * Every refusal fills err (PURSER_EUNAUTH, or PURSER_ENOTFOUND for an unknown key) with a
 * message naming the check that failed, and *reason_out with a short fixed name of it for
 * counters and events ("signature", "issuer", "audience", "expired", ...). Neither holds the
 * token or any part of it but the key id.
 */
#ifndef PURSER_OIDC_TOKEN_H
#define PURSER_OIDC_TOKEN_H

#include "base/err.h"

#include <jansson.h>

/* Longest ID token accepted, in bytes. */
#define OIDC_TOKEN_MAX 16384

/* What the ID token must say. nonce NULL: the grant had none (the device grant); then a nonce
 * in the token is ignored. */
struct oidc_expect {
    const char *issuer;
    const char *client_id;
    const char *nonce;
    long long now;    /* seconds since the epoch */
    int skew_seconds; /* tolerated clock difference, both ways */
};

/* Verifies id_token against the keys of jwks_text (a JWKS document) and expect. On success
 * *out is the token's claims (a new reference, caller decrefs) and *reason_out is NULL. */
int oidc_token_verify(json_t **out, const char **reason_out, const char *id_token,
                      const char *jwks_text, const struct oidc_expect *expect,
                      struct purser_error *err);

#endif
