/* oidc_login.h: signing in through an OpenID Provider (docs/operator/identity.md).
 *
 * The authorization code grant with PKCE (S256), state and nonce, all three made here and kept
 * server-side (oidc_logins: the SHA-256 of the state as key, one-time, OIDC_LOGIN_SECONDS to
 * finish). The callback takes the pending sign-in (deleting it, so a state works once), trades
 * the code at the provider's token endpoint with the sealed client secret, verifies the ID
 * token (oidc_token.h; an unknown key fetches the JWKS again once), then in one transaction
 * finds or makes the user (user_external_ids: issuer and subject; a name already used by a
 * user the provider did not make is refused, never taken over), sets the memberships the
 * provider's mappings grant (those it granted before and grants no more are removed) and
 * leaves a one-time handoff code (OIDC_HANDOFF_SECONDS) that the page or purserctl trades
 * for its session: an API token of the user, tied to the provider, living spec.session_seconds.
 *
 * A refusal fills err (a 4xx, the message naming what failed) and *reason (a fixed short name
 * for counters and events); nothing is written then but the pending sign-in's removal.
 */
#ifndef PURSER_OIDC_LOGIN_H
#define PURSER_OIDC_LOGIN_H

#include "auth/oidc_provider.h"

#define OIDC_LOGIN_SECONDS 600
#define OIDC_HANDOFF_SECONDS 60
#define OIDC_SKEW_SECONDS 60
#define OIDC_RETURN_MAX 511

/* What a finished step tells the web layer. */
struct oidc_outcome {
    const char *reason;     /* NULL, or why it was refused ("state", "signature", ...) */
    const char *provider;   /* its name, once known */
    const char *user;       /* the user signed in */
    const char *return_to;  /* where the handoff code goes: "" for the pages, or a loopback URL */
    char handoff[64];       /* the one-time code (base64url), "" when refused */
    char state[64];         /* the state a sign-in began with (start): the browser's cookie binds
                             * the callback to the browser that began it (OIDC_STATE_COOKIE) */
    char cookie_secret[64]; /* start: the cookie's second half, the pages' handoff proof (never
                             * in a URL: OIDC_COOKIE_PROOF) */
    json_t *orgs;           /* the organizations the user is now a member of (events) */
};

/* 0 when return_to is "" (the pages) or a loopback http URL (purserctl's listener:
 * http://127.0.0.1:PORT/... or http://[::1]:PORT/...); PURSER_EINVAL otherwise: a sign-in
 * never sends its code to another origin. */
int oidc_return_check(const char *return_to, struct purser_error *err);

/* The cookie that binds a sign-in to the browser that began it: set at the start to the state,
 * the callback refuses a state its browser does not hold (login CSRF: an attacker's callback
 * URL sent to a victim would sign the victim in as the attacker). __Host-: Secure, Path=/,
 * no Domain, so no other site or subdomain can set it. */
#define OIDC_STATE_COOKIE "__Host-purser-sign-in"

/* The pages' sign-in cookie is STATE.SECRET: the state binds the callback to the browser, the
 * secret (never in a URL) proves the handoff trade as OIDC_COOKIE_PROOF SECRET. A purserctl
 * verifier never starts with the prefix, so a code the pages began is never traded by a
 * verifier in a request's body. */
#define OIDC_COOKIE_PROOF "cookie:"

/* Begins a sign-in at provider name: *url_out (arena) is the provider's authorization URL to
 * send the browser to. redirect_uri is purser's callback as registered at the provider.
 *
 * The handoff code the sign-in ends with is bound to who began it (login CSRF: a code handed
 * to a victim's browser or to another program's loopback listener is refused at the trade):
 * for the pages (return_to "") to the sign-in cookie, whose value is out->state; for
 * purserctl (a loopback return_to) to handoff_challenge, base64url(SHA-256(verifier)) of a
 * verifier it keeps (43 to 64 base64url characters; PURSER_EINVAL naming handoff_challenge
 * when missing). oidc_handoff_redeem asks for the cookie or the verifier. */
int oidc_login_start(struct store *store, struct arena *arena, const struct keyring *ring,
                     const char *name, const char *redirect_uri, const char *return_to,
                     const char *handoff_challenge, const char **url_out, struct oidc_outcome *out,
                     struct purser_error *err);

/* Finishes the sign-in that state names with the provider's code (see above). iss: the
 * callback's iss parameter (RFC 9207), NULL when the provider sends none; when given it must be
 * the provider's issuer (a code from another provider is refused before it is traded). */
int oidc_login_finish(struct store *store, struct arena *arena, const struct keyring *ring,
                      const char *state, const char *code, const char *iss,
                      const char *redirect_uri, struct oidc_outcome *out, struct purser_error *err);

struct oidc_endpoints;

/* The end every grant shares, once the provider answered with an ID token: the token verified
 * (nonce NULL: the device grant has none), then the user found or made, its memberships set
 * and a handoff code left in out, in one transaction. challenge: what its trade must prove
 * (oidc_login_start), "" for none (the device grant, whose device_id binds it).
 * signed_in_after: when not 0, the ID token's auth_time must be this late (a sign-in that
 * asked the provider to sign the person in again: purserctl's loopback one). */
int oidc_login_complete(struct store *store, struct arena *arena, const struct oidc_provider *p,
                        const struct oidc_endpoints *ep, const char *nonce, const char *challenge,
                        long long signed_in_after, const char *id_token, struct oidc_outcome *out,
                        struct purser_error *err);

/* The device authorization grant (RFC 8628) through purser, which keeps the client secret:
 * start asks the provider for a device code and keeps it (oidc_logins, under the SHA-256 of a
 * new device_id, as long as the provider says it lives); *out {device_id, user_code,
 * verification_uri, verification_uri_complete?, expires_in, interval}. PURSER_EINVAL when the
 * provider has no device endpoint. */
int oidc_device_start(struct store *store, struct arena *arena, const struct keyring *ring,
                      const char *name, json_t **out, struct oidc_outcome *outcome,
                      struct purser_error *err);

/* One poll of a device sign-in: while the person has not finished, *out is {status:
 * authorization_pending, interval} and *pending 1; once done, the session as
 * oidc_handoff_redeem answers it (the device code taken: it works once). Refused (its reason in
 * outcome) when the device_id is unknown or late, or the provider says the person declined or
 * the code expired. */
int oidc_device_poll(struct store *store, struct arena *arena, const struct keyring *ring,
                     const char *device_id, json_t **out, int *pending,
                     struct oidc_outcome *outcome, struct purser_error *err);

/* Trades a handoff code (one-time) for the session: *out {token, expires_at, user, provider}
 * (a new reference). proof: the browser's sign-in cookie or purserctl's verifier (NULL when
 * none was sent); its base64url(SHA-256) must be the code's challenge. PURSER_EUNAUTH when
 * the code is unknown, used or expired, or proof does not match (the code is left for its
 * owner then). */
int oidc_handoff_redeem(struct store *store, struct arena *arena, const char *code,
                        const char *proof, json_t **out, struct oidc_outcome *outcome,
                        struct purser_error *err);

/* Ends the session whose token is token (its row deleted): 0 also when it was already gone. */
int oidc_session_end(struct store *store, const char *token, struct purser_error *err);

/* The sign-in behind a presented API token (NULL: none): *provider_id its provider when the
 * token is a session or was made with one (0 otherwise), *seconds_left how long it has. What
 * such a token makes may not outlive it: an API token made with it is its child (the same
 * provider, at most its expiry: oidc_token_adopt), and a key is refused (it would outlive
 * the sign-in: leaving the company at the provider must end one's access here). */
int oidc_token_session(struct store *store, struct arena *arena, const char *token,
                       long long *provider_id, long long *seconds_left, struct purser_error *err);

/* Marks the token id as made with a sign-in of provider_id: it ends when that provider is
 * deleted or its mappings change, as the sessions do. */
int oidc_token_adopt(struct store *store, const char *id, long long provider_id,
                     struct purser_error *err);

/* Sets the user's memberships from the provider's mappings and the ID token's claims: the
 * memberships the provider granted before are replaced by those it grants now (a membership
 * given by hand is left alone). *orgs: the organizations of the grants (new reference). Runs
 * inside the caller's transaction. */
int oidc_memberships_set(struct store *store, struct arena *arena, long long provider_id,
                         long long principal_id, const json_t *spec, const json_t *claims,
                         json_t **orgs, struct purser_error *err);

/* Counts a refusal by its reason in purser_sign_in_refusals_total (base/metrics.h). */
void oidc_count_refusal(const char *reason);

/* 1 when value matches pattern, where '*' stands for any text (no other wildcard). */
int oidc_value_matches(const char *pattern, const char *value);

/* The expiry sweep's part (fcgi/expiry.c): sign-ins begun and never finished, and handoff
 * codes never traded, past their expiry; at most 1,000 rows of each a call (the statements use
 * their expires_at keys). *deleted: how many went. */
int oidc_expire(struct store *store, unsigned long long *deleted, struct purser_error *err);

#endif
