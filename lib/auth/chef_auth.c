/* chef_auth.c: Chef signed-header requests: canonical text, header checks, RSA verification. */
#include "auth/chef_auth.h"

#include "base/crypto.h"

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int chef_auth_parse_time(const char *text, time_t *out)
{
    struct tm tm;
    const char *rest;
    memset(&tm, 0, sizeof(tm));
    rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return -1;
    if (*rest == '.') {
        rest++;
        if (*rest < '0' || *rest > '9')
            return -1;
        while (*rest >= '0' && *rest <= '9')
            rest++;
    }
    if (strcmp(rest, "Z") != 0)
        return -1;
    *out = timegm(&tm);
    return 0;
}

/* Parses "algorithm=sha1;version=1.0;" (the algorithm may be absent). */
static int parse_sign(const char *header, enum chef_sign_version *out)
{
    char copy[128], *save = NULL, *part;
    const char *algorithm = NULL, *version = NULL;
    if (strlen(header) >= sizeof(copy))
        return -1;
    strcpy(copy, header);
    for (part = strtok_r(copy, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(part, '=');
        while (*part == ' ')
            part++;
        if (!eq)
            continue;
        *eq = '\0';
        if (strcmp(part, "algorithm") == 0)
            algorithm = eq + 1;
        else if (strcmp(part, "version") == 0)
            version = eq + 1;
    }
    if (!version)
        return -1;
    if (strcmp(version, "1.3") == 0) {
        *out = CHEF_SIGN_1_3;
        return algorithm && strcmp(algorithm, "sha256") != 0 ? -1 : 0;
    }
    if (strcmp(version, "1.0") == 0)
        *out = CHEF_SIGN_1_0;
    else if (strcmp(version, "1.1") == 0)
        *out = CHEF_SIGN_1_1;
    else if (strcmp(version, "1.2") == 0)
        *out = CHEF_SIGN_1_2;
    else
        return -1;
    return algorithm && strcmp(algorithm, "sha1") != 0 ? -1 : 0;
}

int chef_auth_check_headers(const struct chef_signed_request *req, time_t now, int skew,
                            enum chef_sign_version *version_out, struct purser_error *err)
{
    const char *names[] = {"X-Ops-UserId", "X-Ops-Timestamp", "X-Ops-Sign", "X-Ops-Content-Hash"};
    const char *values[] = {req->user_id, req->timestamp, req->sign, req->content_hash};
    struct buf missing = BUF_INIT;
    time_t at;
    int rc = 0;

    for (size_t i = 0; i < 4; i++)
        if (!values[i])
            buf_printf(&missing, "%s'%s'", missing.len ? ", " : "", names[i]);
    if (missing.len)
        rc = purser_error_set(err, PURSER_EINVAL, "missing required authentication header(s) %s",
                              buf_cstr(&missing));
    buf_release(&missing);
    if (rc)
        return rc;
    /* Chef answers a timestamp it cannot read as it answers one out of bounds (401, bad_clock);
     * only a missing one is a bad request. */
    if (chef_auth_parse_time(req->timestamp, &at) || at > now + skew || at < now - skew)
        return purser_error_set(err, PURSER_EUNAUTH,
                                "Failed to authenticate as %s. Synchronize the clock on your host.",
                                req->user_id);
    if (parse_sign(req->sign, version_out))
        return purser_error_set(err, PURSER_EINVAL, "Unsupported authentication protocol version");
    return 0;
}

/* Chef's canonical path: runs of slashes become one, a trailing slash goes (but "/" stays). */
static int canonical_path(struct buf *out, const char *path)
{
    for (const char *p = path; *p; p++)
        if (!(*p == '/' && out->len && out->data[out->len - 1] == '/'))
            if (buf_addc(out, *p))
                return PURSER_EINTERNAL;
    if (out->len > 1 && out->data[out->len - 1] == '/')
        out->data[--out->len] = '\0';
    if (!out->len)
        return buf_addc(out, '/');
    return 0;
}

static char *body_hash(const struct chef_signed_request *req, enum chef_sign_version version)
{
    return version == CHEF_SIGN_1_3 ? crypto_sha256_base64(req->body, req->body_len)
                                    : crypto_sha1_base64(req->body, req->body_len);
}

int chef_auth_canonical(struct buf *out, const struct chef_signed_request *req,
                        enum chef_sign_version version)
{
    struct buf path = BUF_INIT, method = BUF_INIT;
    char *hashed_body = body_hash(req, version), *hashed_path = NULL, *hashed_user = NULL;
    int rc = PURSER_EINTERNAL;

    if (!hashed_body || canonical_path(&path, req->path) || buf_adds(&method, req->method))
        goto cleanup;
    for (size_t i = 0; i < method.len; i++)
        method.data[i] = (char)(method.data[i] >= 'a' && method.data[i] <= 'z'
                                    ? method.data[i] - 32
                                    : method.data[i]);
    if (version == CHEF_SIGN_1_3) {
        rc = buf_printf(out,
                        "Method:%s\nPath:%s\nX-Ops-Content-Hash:%s\nX-Ops-Sign:version=1.3\n"
                        "X-Ops-Timestamp:%s\nX-Ops-UserId:%s\nX-Ops-Server-API-Version:%s",
                        method.data, path.data, hashed_body, req->timestamp, req->user_id,
                        req->server_api_version ? req->server_api_version : "0");
        goto cleanup;
    }
    hashed_path = crypto_sha1_base64(path.data, path.len);
    if (version != CHEF_SIGN_1_0)
        hashed_user = crypto_sha1_base64(req->user_id, strlen(req->user_id));
    if (!hashed_path || (version != CHEF_SIGN_1_0 && !hashed_user))
        goto cleanup;
    rc = buf_printf(out,
                    "Method:%s\nHashed Path:%s\nX-Ops-Content-Hash:%s\nX-Ops-Timestamp:%s\n"
                    "X-Ops-UserId:%s",
                    method.data, hashed_path, hashed_body, req->timestamp,
                    version == CHEF_SIGN_1_0 ? req->user_id : hashed_user);
cleanup:
    free(hashed_body);
    free(hashed_path);
    free(hashed_user);
    buf_release(&path);
    buf_release(&method);
    return rc;
}

/* 1 when signature verifies canonical under key. */
static int verify_one(EVP_PKEY *key, enum chef_sign_version version, const struct buf *canonical,
                      const unsigned char *signature, size_t signature_len)
{
    EVP_PKEY_CTX *ctx = NULL;
    EVP_MD_CTX *md = NULL;
    int ok = 0;

    if (version == CHEF_SIGN_1_0 || version == CHEF_SIGN_1_1) {
        unsigned char plain[1024];
        size_t plain_len = sizeof(plain);
        ctx = EVP_PKEY_CTX_new(key, NULL);
        ok = ctx && EVP_PKEY_verify_recover_init(ctx) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
             EVP_PKEY_verify_recover(ctx, plain, &plain_len, signature, signature_len) > 0 &&
             plain_len == canonical->len && crypto_equal(plain, canonical->data, plain_len);
        EVP_PKEY_CTX_free(ctx);
        return ok;
    }
    md = EVP_MD_CTX_new();
    ok = md &&
         EVP_DigestVerifyInit(md, NULL, version == CHEF_SIGN_1_3 ? EVP_sha256() : EVP_sha1(), NULL,
                              key) > 0 &&
         EVP_DigestVerify(md, signature, signature_len, (const unsigned char *)canonical->data,
                          canonical->len) == 1;
    EVP_MD_CTX_free(md);
    return ok;
}

int chef_auth_verify(const struct chef_signed_request *req, enum chef_sign_version version,
                     const char *const *public_keys, size_t key_count, size_t *which,
                     struct purser_error *err)
{
    struct buf canonical = BUF_INIT;
    unsigned char *signature = NULL;
    size_t signature_len = 0;
    int verified = 0;

    if (version == CHEF_SIGN_1_0 || version == CHEF_SIGN_1_1) {
        char *actual = body_hash(req, version);
        int same = actual && req->content_hash && strcmp(actual, req->content_hash) == 0;
        free(actual);
        if (!same)
            goto cleanup;
    }
    if (!req->signature || !*req->signature ||
        !(signature = crypto_base64_decode(req->signature, &signature_len)))
        goto cleanup;
    if (chef_auth_canonical(&canonical, req, version))
        goto cleanup;
    for (size_t i = 0; i < key_count && !verified; i++) {
        EVP_PKEY *key = crypto_public_key_read(public_keys[i], strlen(public_keys[i]));
        if (key && verify_one(key, version, &canonical, signature, signature_len)) {
            verified = 1;
            *which = i;
        }
        crypto_pkey_free(key);
    }
cleanup:
    free(signature);
    buf_release(&canonical);
    if (verified)
        return 0;
    return purser_error_set(err, PURSER_EUNAUTH, "Invalid signature for user or client '%s'",
                            req->user_id ? req->user_id : "");
}
