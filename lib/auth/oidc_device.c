/* oidc_device.c: the device authorization grant (RFC 8628) through purser (oidc_login.h). */
#include "auth/oidc_fetch.h"
#include "auth/oidc_login.h"
#include "base/crypto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refuse(struct oidc_outcome *out, const char *reason, struct purser_error *err,
                  enum purser_err code, const char *message)
{
    out->reason = reason;
    return purser_error_set(err, code, "sign-in refused: %s", message);
}

/* What start answers of the provider's: the member copied when it is there. */
static void copy_member(json_t *out, const json_t *answer, const char *name)
{
    json_t *v = json_object_get(answer, name);
    if (v)
        json_object_set(out, name, v);
}

/* Keeps the device code under the SHA-256 of a new device id (*id, 43 characters). */
static int device_keep(struct store *store, long long provider_id, const char *device_code,
                       long long seconds, char id[64], struct purser_error *err)
{
    unsigned char bytes[32];
    char hash[65], *text = NULL;
    int rc = crypto_random(bytes, sizeof bytes) || !(text = crypto_base64url(bytes, sizeof bytes))
                 ? purser_error_set(err, PURSER_EINTERNAL, "no random bytes")
                 : 0;
    if (!rc) {
        snprintf(id, 64, "%s", text);
        crypto_sha256_hex(hash, id, strlen(id));
    }
    if (!rc) {
        struct store_value v[] = {STORE_STR(hash), STORE_INT(provider_id), STORE_STR(device_code),
                                  STORE_INT(seconds)};
        rc = store_exec(store,
                        "INSERT INTO oidc_logins (state_sha256, provider_id, nonce, code_verifier,"
                        " return_to, device_code, expires_at) VALUES (?, ?, '', '', 'device', ?,"
                        " UTC_TIMESTAMP(6) + INTERVAL ? SECOND)",
                        v, 4, NULL, NULL, err);
    }
    free(text);
    return rc;
}

int oidc_device_start(struct store *store, struct arena *arena, const struct keyring *ring,
                      const char *name, json_t **out, struct oidc_outcome *outcome,
                      struct purser_error *err)
{
    struct oidc_provider p;
    struct oidc_endpoints ep;
    json_t *answer = NULL;
    char form[1200], scope[1024], id[64];
    const json_t *scopes;
    const char *code;
    long status = 0;
    int rc = oidc_provider_load(store, arena, ring, name, 0, &p, err);
    *out = NULL;
    if (rc == PURSER_ENOTFOUND)
        return refuse(outcome, "provider", err, PURSER_ENOTFOUND, "no such identity provider");
    if (!rc) {
        outcome->provider = p.name;
        rc = oidc_discover(&ep, p.issuer, err);
        if (!rc && !ep.device[0])
            rc = refuse(outcome, "provider", err, PURSER_EINVAL,
                        "the provider has no device authorization grant (no "
                        "device_authorization_endpoint)");
        scopes = json_object_get(p.spec, "scopes");
        snprintf(form, sizeof form, "scope="); /* the client authenticates with Basic, once */
        for (size_t i = 0; !rc && i < (scopes ? json_array_size(scopes) : 3); i++) {
            static const char *const fallback[] = {"openid", "profile", "email"};
            const char *one = scopes ? json_string_value(json_array_get(scopes, i)) : fallback[i];
            if (oidc_form_escape(scope, sizeof scope, one) ||
                strlen(form) + strlen(scope) + 4 >= sizeof form)
                rc = purser_error_set(err, PURSER_ETOOLARGE, "spec.scopes are too long");
            else
                strcat(strcat(form, i ? "%20" : ""), scope);
        }
        if (!rc)
            rc = oidc_post_form(&answer, &status, ep.device, p.client_id, p.client_secret, form,
                                err);
        code = json_string_value(json_object_get(answer, "device_code"));
        if (!rc &&
            (status != 200 || !code || !json_is_string(json_object_get(answer, "user_code"))))
            rc = refuse(outcome, "code", err, PURSER_EUNAVAIL,
                        "the provider gave no device code for this client");
        if (!rc)
            rc = device_keep(store, p.id, code,
                             json_integer_value(json_object_get(answer, "expires_in")) ?: 600, id,
                             err);
        if (!rc) {
            *out = json_pack("{s:s}", "device_id", id);
            copy_member(*out, answer, "user_code");
            copy_member(*out, answer, "verification_uri");
            copy_member(*out, answer, "verification_uri_complete");
            copy_member(*out, answer, "expires_in");
            json_object_set_new(
                *out, "interval",
                json_integer(json_integer_value(json_object_get(answer, "interval")) ?: 5));
        }
        json_decref(answer);
        oidc_provider_release(&p);
    }
    return rc;
}

/* The kept device sign-in: its provider and device code, refused when unknown or late. */
static int device_find(struct store *store, struct arena *arena, const char *hash,
                       long long *provider_id, const char **device_code,
                       struct oidc_outcome *outcome, struct purser_error *err)
{
    struct store_value p = STORE_STR(hash);
    struct store_rows rows;
    int rc = store_query(store, arena, &rows,
                         "SELECT provider_id, device_code, expires_at > UTC_TIMESTAMP(6) FROM"
                         " oidc_logins WHERE state_sha256 = ? AND device_code IS NOT NULL",
                         &p, 1, err);
    if (!rc && (rows.count == 0 || strcmp(store_cell(&rows, 0, 2), "1") != 0))
        rc = refuse(outcome, "state", err, PURSER_EUNAUTH,
                    "the device sign-in is unknown, finished already or expired; start again");
    if (!rc) {
        *provider_id = atoll(store_cell(&rows, 0, 0));
        *device_code = store_cell(&rows, 0, 1);
    }
    return rc;
}

/* The provider's answer to a poll: 0 with *id_token, or *pending, or a refusal. */
static int device_answer(const json_t *answer, long status, const char **id_token, int *pending,
                         struct oidc_outcome *outcome, struct purser_error *err)
{
    const char *error = json_string_value(json_object_get(answer, "error"));
    *id_token = NULL;
    if (status == 200 && json_is_string(json_object_get(answer, "id_token"))) {
        *id_token = json_string_value(json_object_get(answer, "id_token"));
        return 0;
    }
    if (error && !strcmp(error, "authorization_pending")) {
        *pending = 1;
        return 0;
    }
    if (error && !strcmp(error, "slow_down")) { /* RFC 8628 3.5: purserctl adds 5 s */
        *pending = 2;
        return 0;
    }
    outcome->reason = "code";
    return purser_error_set(err, PURSER_EUNAUTH,
                            "sign-in refused: the provider ended the device sign-in (%.60s)",
                            error ? error : "no ID token");
}

int oidc_device_poll(struct store *store, struct arena *arena, const struct keyring *ring,
                     const char *device_id, json_t **out, int *pending,
                     struct oidc_outcome *outcome, struct purser_error *err)
{
    struct oidc_provider p = {0};
    struct oidc_endpoints ep;
    json_t *answer = NULL;
    const char *device_code = NULL, *id_token = NULL;
    char hash[65], form[2400], escaped[2100];
    long long provider_id = 0;
    long status = 0;
    int rc = 0;
    *out = NULL;
    *pending = 0;
    if (!device_id || !*device_id || strlen(device_id) > 128)
        return refuse(outcome, "state", err, PURSER_EINVAL, "'device_id' is missing");
    crypto_sha256_hex(hash, device_id, strlen(device_id));
    rc = device_find(store, arena, hash, &provider_id, &device_code, outcome, err);
    if (!rc && (rc = oidc_provider_load(store, arena, ring, NULL, provider_id, &p, err)) ==
                   PURSER_ENOTFOUND)
        rc = refuse(outcome, "provider", err, PURSER_EUNAUTH, "its provider was deleted");
    if (!rc) {
        outcome->provider = p.name;
        rc = oidc_discover(&ep, p.issuer, err);
    }
    if (!rc && oidc_form_escape(escaped, sizeof escaped, device_code))
        rc = purser_error_set(err, PURSER_EINTERNAL, "the device code is too long");
    if (!rc) {
        snprintf(form, sizeof form,
                 "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Adevice_code&"
                 "device_code=%s",
                 escaped);
        rc = oidc_post_form(&answer, &status, ep.token, p.client_id, p.client_secret, form, err);
    }
    if (!rc)
        rc = device_answer(answer, status, &id_token, pending, outcome, err);
    if (!rc && *pending)
        *out = json_pack("{s:s, s:i}", "status",
                         *pending == 2 ? "slow_down" : "authorization_pending", "interval", 5);
    if (!*pending && (rc != PURSER_EUNAVAIL)) {
        /* finished or refused: the device sign-in works once */
        struct store_value v = STORE_STR(hash);
        struct purser_error ignored;
        store_exec(store, "DELETE FROM oidc_logins WHERE state_sha256 = ?", &v, 1, NULL, NULL,
                   &ignored);
    }
    if (!rc && !*pending)
        rc = oidc_login_complete(store, arena, &p, &ep, NULL, "", 0, id_token, outcome, err);
    if (!rc && !*pending)
        rc = oidc_handoff_redeem(store, arena, outcome->handoff, NULL, out, outcome, err);
    json_decref(answer);
    oidc_provider_release(&p);
    return rc;
}
