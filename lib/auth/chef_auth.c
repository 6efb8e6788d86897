/* chef_auth.c: Chef signed-header requests: canonical text, header checks, RSA verification. */
#include "auth/chef_auth.h"

#include "base/crypto.h"
#include "base/hash.h"
#include "base/metrics.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
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
    /* Chef answers a timestamp it cannot read as it answers one out of bounds (401, bad_clock);
     * only a missing one is a bad request. */
    if (!rc && (chef_auth_parse_time(req->timestamp, &at) || at > now + skew || at < now - skew))
        rc = purser_error_set(err, PURSER_EUNAUTH,
                              "Failed to authenticate as %s. Synchronize the clock on your host.",
                              req->user_id);
    if (!rc && parse_sign(req->sign, version_out))
        rc = purser_error_set(err, PURSER_EINVAL, "Unsupported authentication protocol version");
    return rc;
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
        method.data[i] = (char)(method.data[i] >= 'a' && method.data[i] <= 'z' ? method.data[i] - 32
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

/* ---- parsed keys --------------------------------------------------------------------------- */

/* The verification a protocol needs: 1.0 and 1.1 recover the signed text itself (a raw
 * PKCS#1 "private encrypt"), 1.2 and 1.3 verify a SHA-1 or SHA-256 digest. */
enum verify_kind { VERIFY_RECOVER, VERIFY_SHA1, VERIFY_SHA256, VERIFY_KINDS };

/* A parsed key and its contexts, each initialised once and then used for any number of
 * verifications with the same parameters (EVP_PKEY_verify(3)). */
struct key_entry {
    char *pem;
    EVP_PKEY *key;
    EVP_PKEY_CTX *ctx[VERIFY_KINDS];
};

struct chef_key_cache {
    struct key_entry *slots;
    size_t mask;
    struct chef_key_cache_stats stats;
};

static void key_entry_release(struct key_entry *e)
{
    for (int i = 0; i < VERIFY_KINDS; i++)
        EVP_PKEY_CTX_free(e->ctx[i]);
    EVP_PKEY_free(e->key);
    free(e->pem);
    memset(e, 0, sizeof(*e));
}

struct chef_key_cache *chef_key_cache_new(size_t capacity)
{
    struct chef_key_cache *c = calloc(1, sizeof(*c));
    size_t n = 1;
    while (n < capacity * 2 && n < ((size_t)1 << 20))
        n <<= 1; /* twice the capacity: fewer keys that share a slot */
    if (c && !(c->slots = calloc(n, sizeof(*c->slots)))) {
        free(c);
        return NULL;
    }
    if (c)
        c->mask = n - 1;
    return c;
}

void chef_key_cache_free(struct chef_key_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i <= c->mask; i++)
        key_entry_release(&c->slots[i]);
    free(c->slots);
    free(c);
}

void chef_key_cache_get_stats(const struct chef_key_cache *c, struct chef_key_cache_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (c)
        *out = c->stats;
}

/* Parses pem into e (released first); 0 when it is not a public key. */
static int key_entry_fill(struct key_entry *e, const char *pem)
{
    size_t len = strlen(pem);
    key_entry_release(e);
    if (!(e->key = crypto_public_key_read(pem, len)))
        return 0;
    if (!(e->pem = strdup(pem))) {
        key_entry_release(e);
        return 0;
    }
    return 1;
}

/* The entry for pem: the cached one, or a newly parsed one stored in its slot (or in *scratch
 * when there is no cache). NULL when pem is not a key. */
static struct key_entry *key_lookup(struct chef_key_cache *c, const char *pem,
                                    struct key_entry *scratch)
{
    struct key_entry *e;
    if (!c)
        return key_entry_fill(scratch, pem) ? scratch : NULL;
    e = &c->slots[hash_fnv1a(pem, strlen(pem)) & c->mask];
    if (e->pem && strcmp(e->pem, pem) == 0) {
        c->stats.hits++;
        metrics_add(METRIC_CACHE_CHEF_KEY_HIT, 1);
        return e;
    }
    c->stats.misses++;
    metrics_add(METRIC_CACHE_CHEF_KEY_MISS, 1);
    return key_entry_fill(e, pem) ? e : NULL;
}

/* e's context for kind, initialised on first use; NULL when OpenSSL refuses. */
static EVP_PKEY_CTX *key_context(struct key_entry *e, enum verify_kind kind)
{
    EVP_PKEY_CTX *ctx = e->ctx[kind];
    int ok;
    if (ctx)
        return ctx;
    if (!(ctx = EVP_PKEY_CTX_new(e->key, NULL)))
        return NULL;
    if (kind == VERIFY_RECOVER)
        ok = EVP_PKEY_verify_recover_init(ctx) > 0 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0;
    else
        ok =
            EVP_PKEY_verify_init(ctx) > 0 &&
            EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
            EVP_PKEY_CTX_set_signature_md(ctx, kind == VERIFY_SHA1 ? EVP_sha1() : EVP_sha256()) > 0;
    if (!ok) {
        EVP_PKEY_CTX_free(ctx);
        return NULL;
    }
    return e->ctx[kind] = ctx;
}

/* 1 when signature verifies canonical under e's key; digest is canonical's SHA-1 or SHA-256
 * for 1.2 and 1.3. */
static int verify_one(struct key_entry *e, enum verify_kind kind, const struct buf *canonical,
                      const unsigned char *digest, size_t digest_len,
                      const unsigned char *signature, size_t signature_len)
{
    EVP_PKEY_CTX *ctx = key_context(e, kind);
    if (!ctx)
        return 0;
    if (kind == VERIFY_RECOVER) {
        unsigned char plain[1024];
        size_t plain_len = sizeof(plain);
        return EVP_PKEY_verify_recover(ctx, plain, &plain_len, signature, signature_len) > 0 &&
               plain_len == canonical->len && crypto_equal(plain, canonical->data, plain_len);
    }
    return EVP_PKEY_verify(ctx, signature, signature_len, digest, digest_len) == 1;
}

int chef_auth_verify(const struct chef_signed_request *req, enum chef_sign_version version,
                     const char *const *public_keys, size_t key_count, struct chef_key_cache *cache,
                     size_t *which, struct purser_error *err)
{
    enum verify_kind kind = version == CHEF_SIGN_1_3   ? VERIFY_SHA256
                            : version == CHEF_SIGN_1_2 ? VERIFY_SHA1
                                                       : VERIFY_RECOVER;
    struct buf canonical = BUF_INIT;
    struct key_entry scratch = {0};
    unsigned char *signature = NULL, digest[32];
    size_t digest_len = kind == VERIFY_SHA1 ? 20 : 32;
    size_t signature_len = 0;
    int verified = 0;

    if (kind == VERIFY_RECOVER) {
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
    if (kind == VERIFY_SHA1)
        crypto_sha1(digest, canonical.data, canonical.len);
    else if (kind == VERIFY_SHA256)
        crypto_sha256(digest, canonical.data, canonical.len);
    for (size_t i = 0; i < key_count && !verified; i++) {
        struct key_entry *e = key_lookup(cache, public_keys[i], &scratch);
        if (e && verify_one(e, kind, &canonical, digest, digest_len, signature, signature_len)) {
            verified = 1;
            *which = i;
        }
        key_entry_release(&scratch);
    }
cleanup:
    free(signature);
    buf_release(&canonical);
    if (verified)
        return 0;
    return purser_error_set(err, PURSER_EUNAUTH, "Invalid signature for user or client '%s'",
                            req->user_id ? req->user_id : "");
}

/* ---- signing (the client's half) ----------------------------------------------------------- */

/* The RSA PKCS#1 v1.5 signature of the SHA-256 digest, in a new base64 string; NULL on failure. */
static char *sign_digest(EVP_PKEY *key, const unsigned char digest[32])
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
    unsigned char signature[1024];
    size_t signature_len = sizeof(signature);
    char *text = NULL;

    if (ctx && EVP_PKEY_sign_init(ctx) > 0 &&
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
        EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) > 0 &&
        EVP_PKEY_sign(ctx, signature, &signature_len, digest, 32) > 0)
        text = crypto_base64(signature, signature_len);
    EVP_PKEY_CTX_free(ctx);
    return text;
}

int chef_auth_sign(struct buf *out, const struct chef_signed_request *req,
                   const char *private_key_pem, time_t now, struct purser_error *err)
{
    struct chef_signed_request signed_req = *req;
    struct buf canonical = BUF_INIT;
    char timestamp[32], *content_hash = NULL, *signature = NULL;
    unsigned char digest[32];
    struct tm tm;
    BIO *bio = NULL;
    EVP_PKEY *key = NULL;
    int rc = PURSER_EINTERNAL;

    bio = BIO_new_mem_buf(private_key_pem, -1);
    if (!bio) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        goto cleanup;
    }
    key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    if (!key || EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
        rc = purser_error_set(err, PURSER_EINVAL, "the key is not an RSA private key in PEM");
        goto cleanup;
    }
    gmtime_r(&now, &tm);
    strftime(timestamp, sizeof(timestamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    signed_req.timestamp = timestamp;
    if (!signed_req.server_api_version)
        signed_req.server_api_version = "0";
    content_hash = crypto_sha256_base64(req->body ? req->body : "", req->body_len);
    if (!content_hash || chef_auth_canonical(&canonical, &signed_req, CHEF_SIGN_1_3))
        goto cleanup;
    crypto_sha256(digest, canonical.data, canonical.len);
    if (!(signature = sign_digest(key, digest)))
        goto cleanup;
    rc = buf_printf(out,
                    "X-Ops-Sign: algorithm=sha256;version=1.3;\nX-Ops-UserId: %s\n"
                    "X-Ops-Timestamp: %s\nX-Ops-Content-Hash: %s\nX-Ops-Server-API-Version: %s\n",
                    req->user_id, timestamp, content_hash, signed_req.server_api_version);
    for (size_t at = 0, line = 1, len = strlen(signature); !rc && at < len; at += 60, line++)
        rc = buf_printf(out, "X-Ops-Authorization-%zu: %.60s\n", line, signature + at);
cleanup:
    if (rc == PURSER_EINTERNAL)
        purser_error_set(err, rc, "signing the request failed");
    free(content_hash);
    free(signature);
    buf_release(&canonical);
    EVP_PKEY_free(key);
    BIO_free(bio);
    return rc;
}
