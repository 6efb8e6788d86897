/* oidc_login.c: the authorization code grant with PKCE, its callback, the handoff (oidc_login.h).
 */
#include "auth/oidc_login.h"
#include "auth/identity.h"
#include "auth/oidc_fetch.h"
#include "auth/oidc_token.h"
#include "base/crypto.h"
#include "base/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int refuse(struct oidc_outcome *out, const char *reason, struct purser_error *err,
                  enum purser_err code, const char *message)
{
    out->reason = reason;
    return purser_error_set(err, code, "sign-in refused: %s", message);
}

/* The reasons of refusals and the counter each adds to: one table. */
static const struct {
    const char *reason;
    enum metric counter;
} refusal_counters[] = {
    {"state", METRIC_SIGN_IN_REFUSED_STATE},
    {"code", METRIC_SIGN_IN_REFUSED_CODE},
    {"expired", METRIC_SIGN_IN_REFUSED_EXPIRED},
    {"issued_at", METRIC_SIGN_IN_REFUSED_EXPIRED},
    {"signature", METRIC_SIGN_IN_REFUSED_SIGNATURE},
    {"unknown_key", METRIC_SIGN_IN_REFUSED_SIGNATURE},
    {"algorithm", METRIC_SIGN_IN_REFUSED_SIGNATURE},
    {"issuer", METRIC_SIGN_IN_REFUSED_ISSUER},
    {"audience", METRIC_SIGN_IN_REFUSED_AUDIENCE},
    {"nonce", METRIC_SIGN_IN_REFUSED_NONCE},
    {"malformed", METRIC_SIGN_IN_REFUSED_TOKEN},
    {"subject", METRIC_SIGN_IN_REFUSED_TOKEN},
    {"provider", METRIC_SIGN_IN_REFUSED_PROVIDER},
    {"redirect", METRIC_SIGN_IN_REFUSED_REDIRECT},
    {"user_deactivated", METRIC_SIGN_IN_REFUSED_USER},
    {"username", METRIC_SIGN_IN_REFUSED_USER},
    {"username_taken", METRIC_SIGN_IN_REFUSED_USER},
    {"handoff", METRIC_SIGN_IN_REFUSED_HANDOFF},
    {"handoff_binding", METRIC_SIGN_IN_REFUSED_HANDOFF},
};

void oidc_count_refusal(const char *reason)
{
    enum metric counter = METRIC_SIGN_IN_REFUSED_OTHER;
    for (size_t i = 0; reason && i < sizeof refusal_counters / sizeof *refusal_counters; i++)
        if (!strcmp(refusal_counters[i].reason, reason))
            counter = refusal_counters[i].counter;
    metrics_add(counter, 1);
}

int oidc_value_matches(const char *pattern, const char *value)
{
    /* the greedy match with one way back (the last '*'): linear in the pattern times the value,
     * never the recursion's exponential time on a value a user chose at the provider */
    const char *star = NULL, *resume = NULL;
    while (*value) {
        if (*pattern == '*') {
            star = pattern++;
            resume = value;
        } else if (*pattern == *value) {
            pattern++;
            value++;
        } else if (star) {
            pattern = star + 1;
            value = ++resume;
        } else {
            return 0;
        }
    }
    while (*pattern == '*')
        pattern++;
    return *pattern == '\0';
}

int oidc_return_check(const char *return_to, struct purser_error *err)
{
    static const char *const loopback[] = {"http://127.0.0.1:", "http://[::1]:"};
    if (!return_to || !*return_to)
        return 0;
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(loopback[i]);
        if (!strncmp(return_to, loopback[i], n) && strlen(return_to) <= OIDC_RETURN_MAX &&
            strspn(return_to + n, "0123456789") > 0 &&
            strchr("/", return_to[n + strspn(return_to + n, "0123456789")]) &&
            !strpbrk(return_to, " \"<>\\^`{|}#?@\r\n"))
            return 0;
    }
    return purser_error_set(err, PURSER_EINVAL,
                            "return_to must be a loopback URL (http://127.0.0.1:PORT/...): a "
                            "sign-in never hands its code to another origin");
}

/* 32 random bytes as base64url (43 characters) into out. */
static int random_text(char out[64])
{
    unsigned char bytes[32];
    char *text = NULL;
    int rc = crypto_random(bytes, sizeof bytes) ? PURSER_EINTERNAL : 0;
    if (!rc && !(text = crypto_base64url(bytes, sizeof bytes)))
        rc = PURSER_EINTERNAL;
    if (!rc)
        snprintf(out, 64, "%s", text);
    free(text);
    return rc;
}

/* Appends &name=value (form-encoded) to the arena URL *url. */
static int url_add(struct arena *arena, const char **url, const char *name, const char *value)
{
    char escaped[2048];
    if (oidc_form_escape(escaped, sizeof escaped, value))
        return PURSER_ETOOLARGE;
    *url = arena_concat(arena, *url, strchr(*url, '?') ? "&" : "?", name, "=", escaped,
                        (const char *)NULL);
    return *url ? 0 : PURSER_EINTERNAL;
}

static const char *scopes_text(struct arena *arena, const json_t *spec)
{
    const json_t *scopes = json_object_get(spec, "scopes"), *v;
    const char *text = "";
    size_t i;
    if (!scopes)
        return "openid profile email";
    json_array_foreach (scopes, i, v)
        text = arena_concat(arena, text, i ? " " : "", json_string_value(v), (const char *)NULL);
    return text;
}

/* base64url(SHA-256(text)) into out (43 characters), 0 or PURSER_EINTERNAL. */
static int challenge_of(char out[64], const char *text)
{
    unsigned char digest[32];
    char *encoded;
    crypto_sha256(digest, text, strlen(text));
    encoded = crypto_base64url(digest, sizeof digest);
    if (!encoded)
        return PURSER_EINTERNAL;
    snprintf(out, 64, "%s", encoded);
    free(encoded);
    return 0;
}

/* The challenge the sign-in's handoff will ask a proof of (oidc_login_start): the pages'
 * browser proves it with the secret of its sign-in cookie (never in a URL, unlike the state),
 * under a prefix no purserctl verifier may have (OIDC_COOKIE_PROOF). */
static int handoff_challenge_pick(char out[64], const char *return_to, const char *given,
                                  const char *cookie_secret, struct purser_error *err)
{
    char proof[80];
    size_t n = given ? strlen(given) : 0;
    snprintf(proof, sizeof proof, "%s%s", OIDC_COOKIE_PROOF, cookie_secret);
    if (!return_to || !*return_to)
        return challenge_of(out, proof) ? purser_error_set(err, PURSER_EINTERNAL, "out of memory")
                                        : 0;
    if (n < 43 || n > 63 ||
        strspn(given, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != n)
        return purser_error_set(err, PURSER_EINVAL,
                                "handoff_challenge must be base64url(SHA-256(verifier)) when "
                                "return_to is given: the code is traded only with the verifier");
    snprintf(out, 64, "%s", given);
    return 0;
}

int oidc_login_start(struct store *store, struct arena *arena, const struct keyring *ring,
                     const char *name, const char *redirect_uri, const char *return_to,
                     const char *handoff_challenge, const char **url_out, struct oidc_outcome *out,
                     struct purser_error *err)
{
    struct oidc_provider p;
    struct oidc_endpoints ep;
    char state[64], secret[64], nonce[64], verifier[64], state_hash[65], bound[64];
    unsigned char digest[32];
    char *challenge = NULL;
    const char *url;
    int rc = oidc_return_check(return_to, err);
    if (!rc && (random_text(state) || random_text(secret)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "no random bytes");
    if (!rc)
        rc = handoff_challenge_pick(bound, return_to, handoff_challenge, secret, err);
    *url_out = NULL;
    if (rc) {
        out->reason = "redirect";
        return rc;
    }
    rc = oidc_provider_load(store, arena, ring, name, 0, &p, err);
    if (rc) {
        out->reason = "provider";
        return rc == PURSER_ENOTFOUND
                   ? refuse(out, "provider", err, PURSER_ENOTFOUND, "no such identity provider")
                   : rc;
    }
    out->provider = p.name;
    rc = oidc_discover(&ep, p.issuer, err);
    if (!rc && (random_text(nonce) || random_text(verifier)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "no random bytes");
    if (!rc) {
        crypto_sha256(digest, verifier, strlen(verifier));
        challenge = crypto_base64url(digest, sizeof digest);
        crypto_sha256_hex(state_hash, state, strlen(state));
        rc = challenge ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (!rc) {
        struct store_value v[] = {STORE_STR(state_hash),
                                  STORE_INT(p.id),
                                  STORE_STR(nonce),
                                  STORE_STR(verifier),
                                  STORE_STR(return_to ? return_to : ""),
                                  STORE_STR(bound),
                                  STORE_INT(OIDC_LOGIN_SECONDS)};
        store_exec(store, "DELETE FROM oidc_logins WHERE expires_at < UTC_TIMESTAMP(6)", NULL, 0,
                   NULL, NULL, err);
        rc = store_exec(store,
                        "INSERT INTO oidc_logins (state_sha256, provider_id, nonce, code_verifier,"
                        " return_to, handoff_challenge, expires_at) VALUES (?, ?, ?, ?, ?, ?,"
                        " UTC_TIMESTAMP(6) + INTERVAL ? SECOND)",
                        v, 7, NULL, NULL, err);
    }
    url = arena_strdup(arena, ep.authorization);
    if (!rc)
        rc = url_add(arena, &url, "response_type", "code");
    if (!rc)
        rc = url_add(arena, &url, "client_id", p.client_id);
    if (!rc)
        rc = url_add(arena, &url, "redirect_uri", redirect_uri);
    if (!rc)
        rc = url_add(arena, &url, "scope", scopes_text(arena, p.spec));
    if (!rc)
        rc = url_add(arena, &url, "state", state);
    if (!rc)
        rc = url_add(arena, &url, "nonce", nonce);
    if (!rc)
        rc = url_add(arena, &url, "code_challenge", challenge);
    if (!rc)
        rc = url_add(arena, &url, "code_challenge_method", "S256");
    /* a loopback sign-in (purserctl's) may be begun by any local process with a challenge of
     * its own (RFC 8252's limit): the person signs in at the provider again, knowingly, rather
     * than a provider's session of theirs finishing it unseen */
    if (!rc && return_to && *return_to)
        rc = url_add(arena, &url, "prompt", "login");
    if (!rc && return_to && *return_to) /* and says when it did: auth_time (OIDC Core 3.1.2.1) */
        rc = url_add(arena, &url, "max_age", "0");
    if (!rc) {
        *url_out = url;
        memcpy(out->state, state, sizeof out->state);
        memcpy(out->cookie_secret, secret, sizeof out->cookie_secret);
    } else if (rc > -100 && !err->message[0])
        purser_error_set(err, rc, "the sign-in URL could not be made");
    free(challenge);
    oidc_provider_release(&p);
    return rc;
}

/* ---- the callback ---- */

struct pending {
    long long provider_id;
    const char *nonce, *verifier, *return_to, *challenge;
    long long began; /* when it began (seconds since 1970) */
};

/* Takes the sign-in state names: read and deleted (one-time), refused when unknown or late. */
static int pending_take(struct store *store, struct arena *arena, const char *state,
                        struct pending *out, struct oidc_outcome *outcome, struct purser_error *err)
{
    char hash[65];
    struct store_rows rows;
    struct store_value p;
    unsigned long long affected = 0;
    int rc;
    if (!state || !*state || strlen(state) > 128)
        return refuse(outcome, "state", err, PURSER_EINVAL, "'state' is missing");
    crypto_sha256_hex(hash, state, strlen(state));
    p = (struct store_value)STORE_STR(hash);
    rc = store_query(store, arena, &rows,
                     "SELECT provider_id, nonce, code_verifier, return_to,"
                     " expires_at > UTC_TIMESTAMP(6), handoff_challenge,"
                     " UNIX_TIMESTAMP(expires_at) FROM oidc_logins WHERE state_sha256 = ?",
                     &p, 1, err);
    if (!rc)
        rc = store_exec(store, "DELETE FROM oidc_logins WHERE state_sha256 = ?", &p, 1, &affected,
                        NULL, err);
    if (!rc && (rows.count == 0 || affected == 0))
        rc = refuse(outcome, "state", err, PURSER_EINVAL,
                    "'state' is not a sign-in under way here (unknown, or already used)");
    if (!rc && strcmp(store_cell(&rows, 0, 4), "1") != 0)
        rc = refuse(outcome, "state", err, PURSER_EINVAL,
                    "the sign-in took longer than 10 minutes; start again");
    if (!rc) {
        out->provider_id = atoll(store_cell(&rows, 0, 0));
        out->nonce = store_cell(&rows, 0, 1);
        out->verifier = store_cell(&rows, 0, 2);
        out->return_to = store_cell(&rows, 0, 3);
        out->challenge = store_cell(&rows, 0, 5);
        out->began = atoll(store_cell(&rows, 0, 6)) - OIDC_LOGIN_SECONDS;
    }
    return rc;
}

/* The code traded at the token endpoint: *id_token (arena) from the answer. */
static int code_trade(struct arena *arena, const struct oidc_provider *p,
                      const struct oidc_endpoints *ep, const struct pending *pending,
                      const char *code, const char *redirect_uri, const char **id_token,
                      struct oidc_outcome *outcome, struct purser_error *err)
{
    char form[4096], a[1024], b[1024], c[256];
    json_t *answer = NULL;
    long status = 0;
    int rc = 0;
    if (!code || !*code || strlen(code) > 1000)
        return refuse(outcome, "code", err, PURSER_EINVAL, "'code' is missing");
    if (oidc_form_escape(a, sizeof a, code) || oidc_form_escape(b, sizeof b, redirect_uri) ||
        oidc_form_escape(c, sizeof c, pending->verifier))
        return refuse(outcome, "code", err, PURSER_EINVAL, "'code' is too long");
    snprintf(form, sizeof form,
             "grant_type=authorization_code&code=%s&redirect_uri=%s&code_verifier=%s", a, b, c);
    rc = oidc_post_form(&answer, &status, ep->token, p->client_id, p->client_secret, form, err);
    if (!rc && status != 200) {
        const char *error = json_string_value(json_object_get(answer, "error"));
        outcome->reason = "code";
        rc = purser_error_set(err, PURSER_EUNAUTH,
                              "sign-in refused: the provider would not trade the code (%.60s: "
                              "used already, expired, or not this client's)",
                              error ? error : "no error named");
    }
    if (!rc && !json_is_string(json_object_get(answer, "id_token")))
        rc = refuse(outcome, "malformed", err, PURSER_EUNAUTH,
                    "the provider's answer has no ID token");
    if (!rc)
        *id_token = arena_strdup(arena, json_string_value(json_object_get(answer, "id_token")));
    json_decref(answer);
    return rc;
}

/* The ID token verified; a key the JWKS lacks fetches it again, once. */
static int id_token_check(const struct oidc_provider *p, const struct oidc_endpoints *ep,
                          const char *nonce, const char *id_token, json_t **claims,
                          struct oidc_outcome *outcome, struct purser_error *err)
{
    struct oidc_expect expect = {p->issuer, p->client_id, nonce, (long long)time(NULL),
                                 OIDC_SKEW_SECONDS};
    char *jwks = NULL;
    int refreshed = 0;
    int rc = oidc_jwks(&jwks, &refreshed, ep->jwks, 0, err);
    if (!rc)
        rc = oidc_token_verify(claims, &outcome->reason, id_token, jwks, &expect, err);
    if (rc == PURSER_ENOTFOUND) {
        free(jwks);
        jwks = NULL;
        rc = oidc_jwks(&jwks, &refreshed, ep->jwks, 1, err);
        if (!rc)
            rc = oidc_token_verify(claims, &outcome->reason, id_token, jwks, &expect, err);
        if (rc == PURSER_ENOTFOUND)
            rc = purser_error_set(err, PURSER_EUNAUTH, "sign-in refused: %s", err->message);
    } else if (rc == PURSER_EUNAUTH) {
        char message[PURSER_ERROR_MESSAGE_SIZE];
        snprintf(message, sizeof message, "%s", err->message);
        purser_error_set(err, PURSER_EUNAUTH, "sign-in refused: %s", message);
    }
    free(jwks);
    return rc;
}

/* The user's name here from the claims: the username claim lowercased, a user name's
 * characters only. */
static const char *user_name(struct arena *arena, const json_t *spec, const json_t *claims)
{
    const char *claim = json_string_value(json_object_get(spec, "username_claim"));
    const char *given =
        json_string_value(json_object_get(claims, claim ? claim : "preferred_username"));
    char *name;
    if (!given || !*given || strlen(given) > 255)
        return NULL;
    name = arena_strdup(arena, given);
    for (char *c = name; name && *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return name && identity_name_ok(name, 0) ? name : NULL;
}

struct finish {
    struct arena *arena;
    const struct oidc_provider *p;
    const json_t *claims;
    const char *name;
    const char *challenge;
    struct oidc_outcome *outcome;
    long long principal_id;
};

/* The user the provider's subject is, made at its first sign-in. */
static int user_find_or_make(struct store *store, struct finish *f, struct purser_error *err)
{
    const char *sub = json_string_value(json_object_get(f->claims, "sub"));
    /* a subject is unique within its issuer only */
    struct store_value key[] = {STORE_INT(f->p->id), STORE_STR(sub), STORE_STR(f->p->issuer)};
    struct store_rows rows;
    unsigned long long id = 0;
    int rc = store_query(store, f->arena, &rows,
                         "SELECT p.id, p.name, p.active = 1 AND (p.expires_at IS NULL OR"
                         " p.expires_at > UTC_TIMESTAMP(6)) FROM user_external_ids x JOIN"
                         " principals p ON p.id = x.principal_id WHERE x.provider_id = ? AND"
                         " x.subject = ? AND x.issuer = ?",
                         key, 3, err);
    if (!rc && rows.count) {
        f->principal_id = atoll(store_cell(&rows, 0, 0));
        f->outcome->user = store_cell(&rows, 0, 1);
        if (strcmp(store_cell(&rows, 0, 2), "1") != 0)
            rc = refuse(f->outcome, "user_deactivated", err, PURSER_EDENIED,
                        "the user is deactivated or expired here");
        return rc;
    }
    if (!rc && !f->name)
        return refuse(f->outcome, "username", err, PURSER_EUNAUTH,
                      "the username claim is missing or not a user name here");
    if (!rc) {
        const char *display = json_string_value(json_object_get(f->claims, "name"));
        const char *email = json_string_value(json_object_get(f->claims, "email"));
        struct store_value v[] = {STORE_STR(f->name), STORE_STR(display ? display : ""),
                                  STORE_STR(email ? email : "")};
        rc = store_exec(store,
                        "INSERT INTO principals (kind, org_id, name, display_name, email) VALUES"
                        " ('user', NULL, ?, ?, ?)",
                        v, 3, NULL, &id, err);
        if (rc == PURSER_EEXISTS)
            return refuse(f->outcome, "username_taken", err, PURSER_EEXISTS,
                          "a user of that name exists and was not made by this provider");
    }
    if (!rc) {
        struct store_value v[] = {STORE_INT(f->p->id), STORE_STR(sub), STORE_STR(f->p->issuer),
                                  STORE_INT((long long)id)};
        f->principal_id = (long long)id;
        f->outcome->user = f->name;
        rc = store_exec(store,
                        "INSERT INTO user_external_ids (provider_id, subject, issuer, principal_id)"
                        " VALUES (?, ?, ?, ?)",
                        v, 4, NULL, NULL, err);
    }
    return rc;
}

static int txn_finish(struct store *store, void *ctx, struct purser_error *err)
{
    struct finish *f = ctx;
    char code[64], hash[65];
    int rc = user_find_or_make(store, f, err);
    json_decref(f->outcome->orgs);
    f->outcome->orgs = NULL;
    if (!rc)
        rc = oidc_memberships_set(store, f->arena, f->p->id, f->principal_id, f->p->spec, f->claims,
                                  &f->outcome->orgs, err);
    if (!rc && random_text(code))
        rc = purser_error_set(err, PURSER_EINTERNAL, "no random bytes");
    if (!rc)
        crypto_sha256_hex(hash, code, strlen(code));
    if (!rc) {
        struct store_value v[] = {STORE_STR(hash), STORE_INT(f->p->id), STORE_INT(f->principal_id),
                                  STORE_STR(f->challenge), STORE_INT(OIDC_HANDOFF_SECONDS)};
        rc = store_exec(store,
                        "INSERT INTO oidc_handoffs (code_sha256, provider_id, principal_id,"
                        " challenge, expires_at) VALUES (?, ?, ?, ?,"
                        " UTC_TIMESTAMP(6) + INTERVAL ? SECOND)",
                        v, 5, NULL, NULL, err);
    }
    if (!rc)
        rc = identity_changes_note(store, err);
    if (!rc)
        snprintf(f->outcome->handoff, sizeof f->outcome->handoff, "%s", code);
    return rc;
}

int oidc_login_finish(struct store *store, struct arena *arena, const struct keyring *ring,
                      const char *state, const char *code, const char *iss,
                      const char *redirect_uri, struct oidc_outcome *out, struct purser_error *err)
{
    struct pending pending = {0, NULL, NULL, NULL, NULL, 0};
    struct oidc_provider p = {0};
    struct oidc_endpoints ep;
    const char *id_token = NULL;
    int rc = pending_take(store, arena, state, &pending, out, err);
    if (!rc) {
        out->return_to = pending.return_to;
        rc = oidc_provider_load(store, arena, ring, NULL, pending.provider_id, &p, err);
        if (rc == PURSER_ENOTFOUND)
            rc = refuse(out, "provider", err, PURSER_EUNAUTH, "its provider was deleted");
    }
    if (!rc && iss && strcmp(iss, p.issuer) != 0)
        rc = refuse(out, "issuer", err, PURSER_EUNAUTH,
                    "the callback's 'iss' is not the provider's issuer");
    if (!rc) {
        out->provider = p.name;
        rc = oidc_discover(&ep, p.issuer, err);
        if (rc == PURSER_EUNAUTH)
            out->reason = "issuer";
    }
    if (!rc)
        rc = code_trade(arena, &p, &ep, &pending, code, redirect_uri, &id_token, out, err);
    if (!rc)
        rc = oidc_login_complete(store, arena, &p, &ep, pending.nonce, pending.challenge,
                                 *pending.return_to ? pending.began : 0, id_token, out, err);
    if (rc && !out->reason)
        out->reason = "provider_unavailable";
    oidc_provider_release(&p);
    return rc;
}

int oidc_login_complete(struct store *store, struct arena *arena, const struct oidc_provider *p,
                        const struct oidc_endpoints *ep, const char *nonce, const char *challenge,
                        long long signed_in_after, const char *id_token, struct oidc_outcome *out,
                        struct purser_error *err)
{
    json_t *claims = NULL;
    int rc = id_token_check(p, ep, nonce, id_token, &claims, out, err);
    const json_t *auth_time = json_object_get(claims, "auth_time");
    /* asked to sign the person in again (prompt=login, max_age=0): a provider that did not
     * (an older auth_time, or none) finished it with a session of theirs, unseen */
    if (!rc && signed_in_after &&
        !(json_is_integer(auth_time) &&
          json_integer_value(auth_time) >= signed_in_after - OIDC_SKEW_SECONDS))
        rc = refuse(out, "reauthentication", err, PURSER_EUNAUTH,
                    "the provider did not sign the person in again (auth_time missing or before "
                    "the sign-in began), as purserctl's sign-in asks (prompt=login, max_age=0)");
    if (!rc) {
        struct finish f = {arena, p, claims, user_name(arena, p->spec, claims), challenge, out, 0};
        rc = store_txn(store, 0, txn_finish, &f, err);
    }
    json_decref(claims);
    return rc;
}

/* ---- memberships ---- */

/* 1 when the claim (a string or a list of strings) holds a value the pattern matches. */
static int claim_matches(const json_t *claim, const char *pattern)
{
    const json_t *v;
    size_t i;
    if (json_is_string(claim))
        return oidc_value_matches(pattern, json_string_value(claim));
    json_array_foreach (claim, i, v)
        if (json_is_string(v) && oidc_value_matches(pattern, json_string_value(v)))
            return 1;
    return 0;
}

static int membership_grant(struct store *store, struct arena *arena, long long provider_id,
                            long long principal_id, const json_t *mapping, json_t *orgs,
                            struct purser_error *err)
{
    const char *org = json_string_value(json_object_get(mapping, "organization"));
    const char *groups = json_string_value(json_object_get(mapping, "policy_groups"));
    struct purser_error ignored;
    long long oid = 0;
    /* an organization the mapping names that does not exist grants nothing */
    if (identity_org_id(store, arena, org, &oid, &ignored))
        return 0;
    struct store_value v[] = {STORE_INT(oid), STORE_INT(principal_id),
                              STORE_STR(json_string_value(json_object_get(mapping, "role"))),
                              groups ? STORE_STR(groups) : STORE_NULLV, STORE_INT(provider_id)};
    json_array_append_new(orgs, json_string(org));
    /* a membership given by hand stays as it is (and stays when the group goes) */
    return store_exec(store,
                      "INSERT INTO memberships (org_id, principal_id, role, policy_groups,"
                      " provider_id) VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE"
                      " role = role",
                      v, 5, NULL, NULL, err);
}

int oidc_memberships_set(struct store *store, struct arena *arena, long long provider_id,
                         long long principal_id, const json_t *spec, const json_t *claims,
                         json_t **orgs, struct purser_error *err)
{
    const char *groups_claim = json_string_value(json_object_get(spec, "groups_claim"));
    struct store_value v[] = {STORE_INT(principal_id), STORE_INT(provider_id)};
    const json_t *mapping;
    size_t i;
    int rc = store_exec(store, "DELETE FROM memberships WHERE principal_id = ? AND provider_id = ?",
                        v, 2, NULL, NULL, err);
    *orgs = json_array();
    json_array_foreach (json_object_get(spec, "mappings"), i, mapping) {
        const char *claim = json_string_value(json_object_get(mapping, "claim"));
        const char *pattern = json_string_value(json_object_get(mapping, "value"));
        const char *name = claim ? claim : groups_claim ? groups_claim : "groups";
        /* an email grants only once the provider says it checked it (OIDC Core 5.1): many
         * let a user type any address into their profile */
        int unverified =
            !strcmp(name, "email") && !json_is_true(json_object_get(claims, "email_verified"));
        if (rc)
            break;
        if (!unverified && claim_matches(json_object_get(claims, name), pattern))
            rc = membership_grant(store, arena, provider_id, principal_id, mapping, *orgs, err);
    }
    return rc;
}

/* ---- the handoff and the session ---- */

struct redeem {
    struct arena *arena;
    const char *hash;
    const char *proven; /* base64url(SHA-256) of the proof sent, "" when none */
    json_t *token;
    struct oidc_outcome *outcome;
};

/* 1 when the code asks no proof (challenge "") or proven is its challenge (constant time). */
static int handoff_proven(const char *challenge, const char *proven)
{
    size_t n = strlen(challenge);
    return n == 0 || (strlen(proven) == n && crypto_equal(challenge, proven, n));
}

static int txn_redeem(struct store *store, void *ctx, struct purser_error *err)
{
    struct redeem *r = ctx;
    struct store_value p = STORE_STR(r->hash);
    struct store_rows rows;
    unsigned long long affected = 0;
    json_t *spec = NULL, *body = NULL;
    long long seconds;
    int rc = store_query(store, r->arena, &rows,
                         "SELECT h.provider_id, h.principal_id, h.expires_at > UTC_TIMESTAMP(6),"
                         " i.name, i.spec, u.name, h.challenge FROM oidc_handoffs h JOIN"
                         " identity_providers i ON i.id = h.provider_id JOIN principals u"
                         " ON u.id = h.principal_id WHERE h.code_sha256 = ? FOR UPDATE",
                         &p, 1, err);
    if (!rc && (rows.count == 0 || strcmp(store_cell(&rows, 0, 2), "1") != 0))
        rc = refuse(r->outcome, "handoff", err, PURSER_EUNAUTH,
                    "the sign-in code is unknown, used already or expired");
    /* a code handed to another browser or listener than the one that began the sign-in */
    if (!rc && !handoff_proven(store_cell(&rows, 0, 6), r->proven))
        rc = refuse(r->outcome, "handoff_binding", err, PURSER_EUNAUTH,
                    "the sign-in code was not begun here: this browser's sign-in cookie (or "
                    "purserctl's verifier) is missing or another sign-in's; begin again here");
    if (!rc)
        rc = store_exec(store, "DELETE FROM oidc_handoffs WHERE code_sha256 = ?", &p, 1, &affected,
                        NULL, err);
    if (!rc && !affected)
        rc = refuse(r->outcome, "handoff", err, PURSER_EUNAUTH,
                    "the sign-in code is unknown, used already or expired");
    if (!rc) {
        r->outcome->provider = store_cell(&rows, 0, 3);
        r->outcome->user = store_cell(&rows, 0, 5);
        spec = json_loads(store_cell(&rows, 0, 4), 0, NULL);
        seconds = json_integer_value(json_object_get(spec, "session_seconds"));
        body =
            json_pack("{s:s, s:I, s:s}", "description",
                      arena_concat(r->arena, "session: signed in through ", r->outcome->provider,
                                   (const char *)NULL),
                      "expires_in", (json_int_t)(seconds ? seconds : 3600), "sub_kind", "session");
        rc = identity_token_create(store, r->outcome->user, atoll(store_cell(&rows, 0, 1)), body,
                                   &r->token, err);
    }
    if (!rc) {
        struct store_value v[] = {STORE_INT(atoll(store_cell(&rows, 0, 0))),
                                  STORE_STR(json_string_value(json_object_get(r->token, "id")))};
        rc = store_exec(store, "UPDATE api_tokens SET provider_id = ? WHERE id = ?", v, 2, NULL,
                        NULL, err);
    }
    json_decref(body);
    json_decref(spec);
    return rc;
}

int oidc_handoff_redeem(struct store *store, struct arena *arena, const char *code,
                        const char *proof, json_t **out, struct oidc_outcome *outcome,
                        struct purser_error *err)
{
    char hash[65], proven[64] = "";
    struct redeem r = {arena, hash, proven, NULL, outcome};
    int rc = 0;
    *out = NULL;
    if (!code || !*code || strlen(code) > 128)
        return refuse(outcome, "handoff", err, PURSER_EINVAL, "'code' is missing");
    if (proof && strlen(proof) <= 128 && challenge_of(proven, proof))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    crypto_sha256_hex(hash, code, strlen(code));
    rc = store_txn(store, 0, txn_redeem, &r, err);
    if (!rc)
        *out = json_pack("{s:O, s:O, s:s, s:s}", "token", json_object_get(r.token, "token"),
                         "expires_at", json_object_get(r.token, "expires_at"), "user",
                         outcome->user, "provider", outcome->provider);
    json_decref(r.token);
    return rc;
}

int oidc_session_end(struct store *store, const char *token, struct purser_error *err)
{
    char hash[65];
    struct store_value p;
    int rc;
    crypto_sha256_hex(hash, token, strlen(token));
    p = (struct store_value)STORE_STR(hash);
    rc = store_exec(store,
                    "DELETE FROM api_tokens WHERE token_sha256 = ? AND provider_id IS NOT NULL", &p,
                    1, NULL, NULL, err);
    if (!rc)
        rc = identity_changes_note(store, err);
    return rc;
}

int oidc_expire(struct store *store, unsigned long long *deleted, struct purser_error *err)
{
    unsigned long long logins = 0, handoffs = 0;
    int rc =
        store_exec(store, "DELETE FROM oidc_logins WHERE expires_at < UTC_TIMESTAMP(6) LIMIT 1000",
                   NULL, 0, &logins, NULL, err);
    if (!rc)
        rc = store_exec(store,
                        "DELETE FROM oidc_handoffs WHERE expires_at < UTC_TIMESTAMP(6) LIMIT 1000",
                        NULL, 0, &handoffs, NULL, err);
    *deleted = logins + handoffs;
    return rc;
}

int oidc_token_session(struct store *store, struct arena *arena, const char *token,
                       long long *provider_id, long long *seconds_left, struct purser_error *err)
{
    char hash[65];
    struct store_rows rows;
    struct store_value p;
    int rc = 0;
    *provider_id = *seconds_left = 0;
    if (token && *token) {
        crypto_sha256_hex(hash, token, strlen(token));
        p = (struct store_value)STORE_STR(hash);
        rc = store_query(store, arena, &rows,
                         "SELECT provider_id, GREATEST(TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6),"
                         " COALESCE(expires_at, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)), 1)"
                         " FROM api_tokens WHERE token_sha256 = ? AND provider_id IS NOT NULL",
                         &p, 1, err);
        if (!rc && rows.count) {
            *provider_id = atoll(store_cell(&rows, 0, 0));
            *seconds_left = atoll(store_cell(&rows, 0, 1));
        }
    }
    return rc;
}

int oidc_token_adopt(struct store *store, const char *id, long long provider_id,
                     struct purser_error *err)
{
    struct store_value v[] = {STORE_INT(provider_id), STORE_STR(id)};
    return store_exec(store, "UPDATE api_tokens SET provider_id = ? WHERE id = ?", v, 2, NULL, NULL,
                      err);
}
