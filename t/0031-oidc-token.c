/* 0031-oidc-token: ID tokens checked by lib/auth/oidc_token with keys made here (libcjose):
 * RS256 and ES256 accepted, and each refusal: another key, an unknown key id, "none" and HS256,
 * iss, aud, azp, exp, iat and nonce, each within and past the skew. */
#include "auth/oidc_login.h"
#include "auth/oidc_token.h"
#include "tap.h"

#include <cjose/cjose.h>
#include <string.h>

#define ISSUER "https://idp.example.test"
#define CLIENT "purser"
#define NOW 1800000000LL

static cjose_jwk_t *rsa_key, *ec_key, *other_rsa_key;
static char jwks[8192];

static cjose_jwk_t *key_new(int rsa, const char *kid)
{
    cjose_err cerr;
    cjose_jwk_t *key = rsa ? cjose_jwk_create_RSA_random(2048, NULL, 0, &cerr)
                           : cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &cerr);
    cjose_jwk_set_kid(key, kid, strlen(kid), &cerr);
    return key;
}

/* A signed compact JWT of claims (a JSON text) under key with alg; caller frees. */
static char *sign(cjose_jwk_t *key, const char *alg, const char *claims)
{
    cjose_err cerr;
    cjose_header_t *header = cjose_header_new(&cerr);
    cjose_jws_t *jws;
    const char *compact = NULL;
    char *copy = NULL;
    char kid[64];
    snprintf(kid, sizeof kid, "%s", cjose_jwk_get_kid(key, &cerr));
    cjose_header_set(header, CJOSE_HDR_ALG, alg, &cerr);
    cjose_header_set(header, CJOSE_HDR_KID, kid, &cerr);
    jws = cjose_jws_sign(key, header, (const uint8_t *)claims, strlen(claims), &cerr);
    if (jws && cjose_jws_export(jws, &compact, &cerr))
        copy = strdup(compact);
    cjose_jws_release(jws);
    cjose_header_release(header);
    return copy;
}

/* Claims with one field changed: a printf-style JSON object text of the usual claims. */
static char *claims(const char *iss, const char *aud, long long exp, long long iat,
                    const char *nonce, const char *extra)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "{\"iss\":\"%s\",\"sub\":\"u-1\",\"aud\":%s,\"exp\":%lld,\"iat\":%lld,"
             "\"nonce\":\"%s\"%s}",
             iss, aud, exp, iat, nonce, extra);
    return text;
}

static const char *check(const char *token, const char *nonce, int *rc_out)
{
    struct oidc_expect expect = {ISSUER, CLIENT, nonce, NOW, 60};
    struct purser_error err;
    json_t *claims_out = NULL;
    const char *reason = NULL;
    *rc_out = oidc_token_verify(&claims_out, &reason, token, jwks, &expect, &err);
    if (*rc_out)
        tap_diag("  %s", err.message);
    else if (!json_is_string(json_object_get(claims_out, "sub")))
        *rc_out = 99;
    json_decref(claims_out);
    return reason ? reason : "ok";
}

static void expect_reason(cjose_jwk_t *key, const char *alg, const char *claim_text,
                          const char *nonce, const char *reason, const char *name)
{
    char *token = sign(key, alg, claim_text);
    int rc;
    tap_is_str(check(token, nonce, &rc), reason, "%s", name);
    free(token);
}

static void make_jwks(void)
{
    cjose_err cerr;
    char *rsa = cjose_jwk_to_json(rsa_key, false, &cerr);
    char *ec = cjose_jwk_to_json(ec_key, false, &cerr);
    snprintf(jwks, sizeof jwks, "{\"keys\":[%s,%s]}", rsa, ec);
    free(rsa);
    free(ec);
}

int main(int argc, char **argv)
{
    const char *aud = "\"" CLIENT "\"";
    cjose_jwk_t *unknown_key;
    char hs256[4096] = "";
    char *token;
    int rc;
    tap_init(argc, argv);
    rsa_key = key_new(1, "rsa-1");
    ec_key = key_new(0, "ec-1");
    other_rsa_key = key_new(1, "rsa-1"); /* the same kid, another key */
    make_jwks();

    expect_reason(rsa_key, "RS256", claims(ISSUER, aud, NOW + 300, NOW, "n1", ""), "n1", "ok",
                  "RS256 with the right claims is taken");
    expect_reason(ec_key, "ES256", claims(ISSUER, aud, NOW + 300, NOW, "n1", ""), "n1", "ok",
                  "ES256 with the right claims is taken");
    expect_reason(other_rsa_key, "RS256", claims(ISSUER, aud, NOW + 300, NOW, "n1", ""), "n1",
                  "signature", "another key under a known kid: the signature");
    token = sign(rsa_key, "RS256", claims(ISSUER, aud, NOW + 300, NOW, "n1", ""));
    token[strlen(token) - 3] = token[strlen(token) - 3] == 'A' ? 'B' : 'A';
    tap_is_str(check(token, "n1", &rc), "signature", "a changed signature is refused");
    free(token);
    token = sign(rsa_key, "RS256", claims(ISSUER, aud, NOW + 300, NOW, "n1", ""));
    *strchr(strchr(token, '.') + 1, '.') = '\0';
    tap_is_str(check(token, "n1", &rc), "malformed", "a token without its signature part");
    free(token);
    unknown_key = key_new(0, "ec-2");
    expect_reason(unknown_key, "ES256", claims(ISSUER, aud, NOW + 300, NOW, "n1", ""), "n1",
                  "unknown_key", "a kid not in the JWKS: unknown_key (fetch again)");
    cjose_jwk_release(unknown_key);
    tap_is_str(check("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "n1", &rc), "algorithm",
               "alg none is refused");
    tap_ok(rc == PURSER_EUNAUTH, "  as unauthenticated");
    /* HS256 under the RSA key's kid: the public key taken as a MAC secret must not verify */
    token = sign(rsa_key, "RS256", claims(ISSUER, aud, NOW + 300, NOW, "n1", ""));
    snprintf(hs256, sizeof hs256, "%s", "eyJhbGciOiJIUzI1NiIsImtpZCI6InJzYS0xIn0");
    snprintf(hs256 + strlen(hs256), sizeof hs256 - strlen(hs256), "%s", strchr(token, '.'));
    tap_is_str(check(hs256, "n1", &rc), "algorithm", "HS256 is refused whatever its key");
    free(token);
    expect_reason(rsa_key, "RS256",
                  claims("https://other.example.test", aud, NOW + 300, NOW, "n1", ""), "n1",
                  "issuer", "another issuer");
    expect_reason(rsa_key, "RS256", claims(ISSUER, "\"another\"", NOW + 300, NOW, "n1", ""), "n1",
                  "audience", "aud for another client");
    expect_reason(rsa_key, "RS256",
                  claims(ISSUER, "[\"another\",\"" CLIENT "\"]", NOW + 300, NOW, "n1", ""), "n1",
                  "audience", "several audiences without azp");
    expect_reason(rsa_key, "RS256",
                  claims(ISSUER, "[\"another\",\"" CLIENT "\"]", NOW + 300, NOW, "n1",
                         ",\"azp\":\"" CLIENT "\""),
                  "n1", "ok", "several audiences with azp this client");
    expect_reason(rsa_key, "RS256",
                  claims(ISSUER, aud, NOW + 300, NOW, "n1", ",\"azp\":\"another\""), "n1",
                  "audience", "azp another client");
    expect_reason(rsa_key, "RS256", claims(ISSUER, aud, NOW - 30, NOW - 330, "n1", ""), "n1", "ok",
                  "expired 30 s ago: within the skew");
    expect_reason(rsa_key, "RS256", claims(ISSUER, aud, NOW - 61, NOW - 361, "n1", ""), "n1",
                  "expired", "expired 61 s ago: past the skew");
    expect_reason(rsa_key, "RS256", claims(ISSUER, aud, NOW + 400, NOW + 61, "n1", ""), "n1",
                  "issued_at", "issued 61 s ahead");
    expect_reason(rsa_key, "RS256", claims(ISSUER, aud, NOW + 300, NOW, "n2", ""), "n1", "nonce",
                  "another nonce");
    expect_reason(rsa_key, "RS256", claims(ISSUER, aud, NOW + 300, NOW, "n2", ""), NULL, "ok",
                  "no nonce expected (the device grant)");
    expect_reason(rsa_key, "RS256",
                  "{\"iss\":\"" ISSUER "\",\"aud\":\"" CLIENT "\",\"exp\":1800000300,"
                  "\"iat\":1800000000,\"nonce\":\"n1\"}",
                  "n1", "subject", "no sub");
    cjose_jwk_release(rsa_key);
    cjose_jwk_release(ec_key);
    cjose_jwk_release(other_rsa_key);

    /* a mapping's value: exact, or '*' for any run of characters */
    tap_ok(oidc_value_matches("ops", "ops") && !oidc_value_matches("ops", "ops2"),
           "a mapping's value without '*' matches itself only");
    tap_ok(oidc_value_matches("team-*", "team-db") && oidc_value_matches("team-*", "team-") &&
               !oidc_value_matches("team-*", "team"),
           "'team-*' matches what starts with team-");
    tap_ok(oidc_value_matches("org-*-team-*-admins", "org-a-team-b-admins") &&
               !oidc_value_matches("org-*-team-*-admins", "org-a-team-b-admin"),
           "two stars, each a run of its own");
    tap_ok(oidc_value_matches("*", "") && oidc_value_matches("**a", "xa") &&
               !oidc_value_matches("*b", "aaa"),
           "'*' matches nothing too; a pattern's end must meet the value's");
    {
        /* a value a user chose at the provider against many stars: each step returns (the
         * recursive match took 19.5 s for 50 characters, and doubled with each more) */
        char value[4097];
        memset(value, 'a', sizeof value - 1);
        value[sizeof value - 1] = '\0';
        tap_ok(!oidc_value_matches("*a*a*a*a*a*a*a*a*a*a*a*a*b", value),
               "many stars against 4,096 characters that do not match: refused (in linear steps)");
        tap_ok(oidc_value_matches("*a*a*a*a*a*a*a*a*a*a*a*a*", value),
               "  and matched when they do");
    }
    return tap_done();
}
