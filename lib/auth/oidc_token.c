/* oidc_token.c: an ID token's signature (libcjose) and claims checked (oidc_token.h). */
#include "auth/oidc_token.h"

#include <cjose/cjose.h>
#include <string.h>

/* The key type and curve an algorithm needs; NULL for an algorithm purser does not take. */
static const char *algorithm_key_type(const char *alg, const char **curve)
{
    *curve = NULL;
    if (alg && !strcmp(alg, "RS256"))
        return "RSA";
    if (alg && !strcmp(alg, "ES256")) {
        *curve = "P-256";
        return "EC";
    }
    return NULL;
}

static int string_is(const json_t *value, const char *expected)
{
    return json_is_string(value) && expected && !strcmp(json_string_value(value), expected);
}

/* 1 when key of the JWKS fits a token signed with alg under kid (kid NULL: any key). */
static int key_fits(const json_t *key, const char *alg, const char *kid)
{
    const char *curve;
    const char *kty = algorithm_key_type(alg, &curve);
    const json_t *use = json_object_get(key, "use");
    const json_t *key_alg = json_object_get(key, "alg");
    if (!string_is(json_object_get(key, "kty"), kty))
        return 0;
    if (curve && !string_is(json_object_get(key, "crv"), curve))
        return 0;
    if (use && !string_is(use, "sig"))
        return 0;
    if (key_alg && !string_is(key_alg, alg))
        return 0;
    return !kid || string_is(json_object_get(key, "kid"), kid);
}

/* The key of jwks_text that signed a token (alg, kid), imported: *out, caller releases. */
static int key_find(cjose_jwk_t **out, const char *jwks_text, const char *alg, const char *kid,
                    struct purser_error *err)
{
    json_t *jwks = json_loads(jwks_text ? jwks_text : "", 0, NULL);
    json_t *keys = json_object_get(jwks, "keys");
    json_t *found = NULL;
    size_t i, fits = 0;
    cjose_err cerr;
    int rc = 0;
    *out = NULL;
    json_array_foreach (keys, i, found) {
        if (key_fits(found, alg, kid))
            fits++;
    }
    json_array_foreach (keys, i, found) {
        if (key_fits(found, alg, kid))
            break;
    }
    if (!json_is_array(keys))
        rc = purser_error_set(err, PURSER_EUNAVAIL, "the provider's JWKS is not a key set");
    else if (fits > 1)
        rc = purser_error_set(err, PURSER_EUNAUTH,
                              "ID token: key '%.64s' names %zu keys of the JWKS",
                              kid ? kid : "no kid", fits);
    else if (!fits)
        rc = purser_error_set(err, PURSER_ENOTFOUND,
                              "ID token: key '%.64s' (%s) is not in the provider's JWKS",
                              kid ? kid : "no kid", alg);
    else if (!(*out = cjose_jwk_import_json((cjose_header_t *)found, &cerr)))
        rc = purser_error_set(err, PURSER_EUNAUTH, "ID token: key '%.64s' of the JWKS: %s",
                              kid ? kid : "no kid", cerr.message);
    json_decref(jwks);
    return rc;
}

/* The signature: alg allowed, the key found, the signature good; *out the verified payload. */
static int signature_check(json_t **out, const char **reason, const char *id_token,
                           const char *jwks_text, struct purser_error *err)
{
    cjose_jws_t *jws = NULL;
    cjose_jwk_t *key = NULL;
    cjose_err cerr;
    uint8_t *payload = NULL;
    size_t payload_len = 0;
    const char *alg, *kid, *curve;
    int rc = 0;
    *out = NULL;
    jws = cjose_jws_import(id_token, strlen(id_token), &cerr);
    if (!jws) {
        *reason = "malformed";
        rc = purser_error_set(err, PURSER_EUNAUTH, "ID token: not a signed JWT");
        goto cleanup;
    }
    alg = cjose_header_get(cjose_jws_get_protected(jws), CJOSE_HDR_ALG, &cerr);
    kid = cjose_header_get(cjose_jws_get_protected(jws), CJOSE_HDR_KID, &cerr);
    if (!algorithm_key_type(alg, &curve)) {
        *reason = "algorithm";
        rc = purser_error_set(err, PURSER_EUNAUTH,
                              "ID token: algorithm '%.16s' is not taken (RS256, ES256)",
                              alg ? alg : "none");
        goto cleanup;
    }
    rc = key_find(&key, jwks_text, alg, kid, err);
    if (rc) {
        *reason = rc == PURSER_ENOTFOUND ? "unknown_key" : "jwks";
        goto cleanup;
    }
    if (!cjose_jws_verify(jws, key, &cerr)) {
        *reason = "signature";
        rc = purser_error_set(err, PURSER_EUNAUTH,
                              "ID token: the signature does not verify with key '%.64s'",
                              kid ? kid : "no kid");
        goto cleanup;
    }
    if (!cjose_jws_get_plaintext(jws, &payload, &payload_len, &cerr) ||
        !(*out = json_loadb((const char *)payload, payload_len, 0, NULL)) ||
        !json_is_object(*out)) {
        *reason = "malformed";
        rc = purser_error_set(err, PURSER_EUNAUTH, "ID token: its claims are not a JSON object");
    }
cleanup:
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    cjose_jwk_release(key);
    cjose_jws_release(jws);
    return rc;
}

static int refuse(const char **reason, const char *name, struct purser_error *err,
                  const char *message, const char *detail)
{
    *reason = name;
    return purser_error_set(err, PURSER_EUNAUTH, "ID token: %s%.128s", message, detail);
}

/* aud names the client; with other audiences too, azp must be the client; azp, when given,
 * is the client. */
static int audience_check(const json_t *claims, const char **reason, const char *client_id,
                          struct purser_error *err)
{
    const json_t *aud = json_object_get(claims, "aud");
    const json_t *azp = json_object_get(claims, "azp");
    const json_t *one;
    size_t i, count = json_is_array(aud) ? json_array_size(aud) : 1;
    int named = string_is(aud, client_id);
    json_array_foreach (aud, i, one)
        named |= string_is(one, client_id);
    if (!named)
        return refuse(reason, "audience", err, "'aud' does not name this client, ", client_id);
    if (azp && !string_is(azp, client_id))
        return refuse(reason, "audience", err, "'azp' is another client than ", client_id);
    if (count > 1 && !azp)
        return refuse(reason, "audience", err, "'aud' names several clients and no 'azp'", "");
    return 0;
}

/* exp not past, iat not ahead, both within the skew. */
static int time_check(const json_t *claims, const char **reason, const struct oidc_expect *expect,
                      struct purser_error *err)
{
    const json_t *exp = json_object_get(claims, "exp");
    const json_t *iat = json_object_get(claims, "iat");
    if (!json_is_number(exp))
        return refuse(reason, "expired", err, "'exp' is missing", "");
    if (!json_is_number(iat))
        return refuse(reason, "issued_at", err, "'iat' is missing", "");
    if (json_number_value(exp) + expect->skew_seconds < (double)expect->now)
        return refuse(reason, "expired", err, "it has expired ('exp' is past)", "");
    if (json_number_value(iat) - expect->skew_seconds > (double)expect->now)
        return refuse(reason, "issued_at", err, "'iat' is in the future", "");
    return 0;
}

static int claims_check(const json_t *claims, const char **reason, const struct oidc_expect *expect,
                        struct purser_error *err)
{
    const json_t *sub = json_object_get(claims, "sub");
    int rc = 0;
    if (!string_is(json_object_get(claims, "iss"), expect->issuer))
        rc = refuse(reason, "issuer", err, "'iss' is not the provider's issuer ", expect->issuer);
    if (!rc)
        rc = audience_check(claims, reason, expect->client_id, err);
    if (!rc)
        rc = time_check(claims, reason, expect, err);
    if (!rc && expect->nonce && !string_is(json_object_get(claims, "nonce"), expect->nonce))
        rc = refuse(reason, "nonce", err, "'nonce' is not the one this sign-in sent", "");
    if (!rc && (!json_is_string(sub) || !*json_string_value(sub) || json_string_length(sub) > 255))
        rc = refuse(reason, "subject", err, "'sub' is missing or longer than 255 bytes", "");
    return rc;
}

int oidc_token_verify(json_t **out, const char **reason_out, const char *id_token,
                      const char *jwks_text, const struct oidc_expect *expect,
                      struct purser_error *err)
{
    json_t *claims = NULL;
    int rc = 0;
    *out = NULL;
    *reason_out = NULL;
    if (!id_token || !*id_token || strlen(id_token) > OIDC_TOKEN_MAX)
        return refuse(reason_out, "malformed", err, "missing or longer than 16384 bytes", "");
    rc = signature_check(&claims, reason_out, id_token, jwks_text, err);
    if (!rc)
        rc = claims_check(claims, reason_out, expect, err);
    if (!rc)
        *out = claims;
    else
        json_decref(claims);
    return rc;
}
