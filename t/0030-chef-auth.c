/* 0030-chef-auth: Chef signed-header verification against requests signed by Debian's
 * ruby-mixlib-authentication (the fixtures in t/data/chef-auth/, made once with the key
 * there): the canonical text must be the client's byte for byte, the signature must verify
 * with the right key among several, and every changed part of the request must fail. The
 * client's signing (chef_auth_sign, purserctl's) must give mixlib's headers byte for byte. */
#include "auth/chef_auth.h"
#include "base/crypto.h"
#include "config/config.h"
#include "tap.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>

#define BODY "{\"name\":\"web1\"}"
#define PATH "/organizations/acme//nodes/"

struct fixture {
    char *text; /* the headers file, cut into lines in place */
    struct chef_signed_request req;
    struct buf signature;
};

static char *slurp(const char *version, const char *file)
{
    char path[256], *text = NULL;
    size_t len;
    struct purser_error err;
    const char *dir = getenv("PURSER_TESTDATA") ? getenv("PURSER_TESTDATA") : "t/data";
    snprintf(path, sizeof(path), "%s/chef-auth/%s%s", dir, version, file);
    if (file_read_all(&text, &len, path, 1 << 20, &err))
        return NULL;
    return text;
}

static int load(struct fixture *f, const char *version)
{
    char *line, *save = NULL;
    memset(f, 0, sizeof(*f));
    if (!(f->text = slurp(version, "/headers")))
        return -1;
    f->req.method = "POST";
    f->req.path = PATH;
    f->req.body = BODY;
    f->req.body_len = strlen(BODY);
    f->req.server_api_version = "1";
    for (line = strtok_r(f->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *value = strstr(line, ": ");
        if (!value)
            continue;
        *value = '\0';
        value += 2;
        if (strcmp(line, "X-Ops-Sign") == 0)
            f->req.sign = value;
        else if (strcmp(line, "X-Ops-Userid") == 0)
            f->req.user_id = value;
        else if (strcmp(line, "X-Ops-Timestamp") == 0)
            f->req.timestamp = value;
        else if (strcmp(line, "X-Ops-Content-Hash") == 0)
            f->req.content_hash = value;
        else if (strncmp(line, "X-Ops-Authorization-", 20) == 0)
            buf_adds(&f->signature, value); /* the file keeps them in order */
    }
    f->req.signature = buf_cstr(&f->signature);
    return 0;
}

static int verifies(const struct chef_signed_request *req, enum chef_sign_version v,
                    const char *const *keys, size_t n)
{
    struct purser_error err;
    size_t which = 99;
    return chef_auth_verify(req, v, keys, n, NULL, &which, &err) == 0;
}

static void run_version(const char *name, enum chef_sign_version want, const char *const *keys)
{
    struct fixture f;
    struct purser_error err;
    enum chef_sign_version version = CHEF_SIGN_1_0;
    struct buf canonical = BUF_INIT;
    char *expected = slurp(name, "/canonical");
    time_t signed_at;
    size_t which = 99;

    if (!tap_ok(load(&f, name) == 0 && expected, "%s: fixture", name))
        return;
    chef_auth_parse_time(f.req.timestamp, &signed_at);
    tap_is_int(chef_auth_check_headers(&f.req, signed_at + 60, CHEF_AUTH_SKEW, &version, &err), 0,
               "%s: headers accepted a minute later", name);
    tap_is_int(version, want, "%s: protocol recognised", name);
    chef_auth_canonical(&canonical, &f.req, version);
    tap_is_str(buf_cstr(&canonical), expected, "%s: canonical text equals the client's", name);
    tap_is_int(chef_auth_verify(&f.req, version, keys, 2, NULL, &which, &err), 0,
               "%s: signature verifies", name);
    tap_is_int(which, 1, "%s: with the second of two keys (every key is tried)", name);
    tap_is_int(chef_auth_verify(&f.req, version, keys, 1, NULL, &which, &err), PURSER_EUNAUTH,
               "%s: not with the other key alone", name);
    tap_is_str(err.message, "Invalid signature for user or client 'alice'", "%s: Chef's message",
               name);
    {
        struct chef_signed_request r = f.req;
        r.path = "/organizations/acme/nodes";
        tap_ok(verifies(&r, version, keys, 2), "%s: the canonical path verifies the same", name);
        r = f.req, r.method = "PUT";
        tap_ok(!verifies(&r, version, keys, 2), "%s: another method fails", name);
        r = f.req, r.path = "/organizations/acme/roles";
        tap_ok(!verifies(&r, version, keys, 2), "%s: another path fails", name);
        r = f.req, r.body = "{\"name\":\"web2\"}";
        tap_ok(!verifies(&r, version, keys, 2), "%s: another body fails", name);
        r = f.req, r.user_id = "mallory";
        tap_ok(!verifies(&r, version, keys, 2), "%s: another user id fails", name);
        r = f.req, r.timestamp = "2026-01-02T03:04:06Z";
        tap_ok(!verifies(&r, version, keys, 2), "%s: another timestamp fails", name);
        if (version == CHEF_SIGN_1_3) {
            r = f.req, r.server_api_version = "2";
            tap_ok(!verifies(&r, version, keys, 2), "%s: another server API version fails", name);
        }
    }
    {
        /* One character of the first X-Ops-Authorization line changed. */
        struct chef_signed_request r = f.req;
        char *sig = strdup(f.req.signature);
        sig[10] = sig[10] == 'A' ? 'B' : 'A';
        r.signature = sig;
        tap_ok(!verifies(&r, version, keys, 2), "%s: a changed authorization line fails", name);
        free(sig);
    }
    tap_is_int(chef_auth_check_headers(&f.req, signed_at + 3600, CHEF_AUTH_SKEW, &version, &err),
               PURSER_EUNAUTH, "%s: an hour off is refused", name);
    tap_is_str(err.message, "Failed to authenticate as alice. Synchronize the clock on your host.",
               "%s: with Chef's clock message", name);
    buf_release(&canonical);
    buf_release(&f.signature);
    free(f.text);
    free(expected);
}

/* Protocol 1.2 (SHA-1 digest, signed as Chef's Ruby client does), which mixlib cannot make:
 * the request is signed here with the fixtures' private key. */
static void run_v12(const char *const *keys)
{
    char *private_pem = slurp("key.pem", "");
    struct chef_signed_request r = {.method = "GET",
                                    .path = "/organizations/acme/nodes",
                                    .body = "",
                                    .user_id = "alice",
                                    .timestamp = "2026-01-02T03:04:05Z",
                                    .sign = "algorithm=sha1;version=1.2"};
    struct buf canonical = BUF_INIT;
    unsigned char sig[1024];
    size_t sig_len = sizeof(sig);
    EVP_PKEY *key = NULL;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    BIO *bio = private_pem ? BIO_new_mem_buf(private_pem, -1) : NULL;
    char *content_hash = crypto_sha1_base64("", 0), *b64 = NULL;
    int signed_ok;

    r.content_hash = content_hash;
    key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    chef_auth_canonical(&canonical, &r, CHEF_SIGN_1_2);
    signed_ok =
        key && md && EVP_DigestSignInit(md, NULL, EVP_sha1(), NULL, key) > 0 &&
        EVP_DigestSign(md, sig, &sig_len, (unsigned char *)canonical.data, canonical.len) > 0;
    if (tap_ok(signed_ok && (b64 = crypto_base64(sig, sig_len)), "v1.2: a request signed here")) {
        r.signature = b64;
        tap_ok(verifies(&r, CHEF_SIGN_1_2, keys, 2), "v1.2: verifies (SHA-1 digest)");
        r.path = "/organizations/acme/roles";
        tap_ok(!verifies(&r, CHEF_SIGN_1_2, keys, 2), "v1.2: another path fails");
    }
    free(b64);
    free(content_hash);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    BIO_free(bio);
    buf_release(&canonical);
    free(private_pem);
}

/* The worker's cache of parsed keys: the same answers as without it, each key parsed once,
 * found only by its whole PEM text. */
static void run_key_cache(const char *pub, const char *other)
{
    struct chef_key_cache *cache = chef_key_cache_new(1);
    struct chef_key_cache_stats st;
    struct fixture f10, f13;
    struct purser_error err;
    size_t which = 99;
    const char *both[] = {other, pub}, *only_other[] = {other};
    char *changed = strdup(pub);
    const char *with_changed[] = {other, changed};

    if (!tap_ok(cache && changed && load(&f10, "v1.0") == 0 && load(&f13, "v1.3") == 0,
                "key cache: made, fixtures loaded"))
        return;
    tap_is_int(chef_auth_verify(&f13.req, CHEF_SIGN_1_3, both, 2, cache, &which, &err), 0,
               "key cache: v1.3 verifies through it");
    tap_is_int(which, 1, "key cache: with the second key");
    chef_key_cache_get_stats(cache, &st);
    tap_is_int((int)st.misses, 2, "key cache: both keys parsed the first time");
    for (int i = 0; i < 3; i++)
        chef_auth_verify(&f13.req, CHEF_SIGN_1_3, both, 2, cache, &which, &err);
    tap_is_int(chef_auth_verify(&f10.req, CHEF_SIGN_1_0, both, 2, cache, &which, &err), 0,
               "key cache: v1.0 (recovery) verifies with the same cached keys");
    chef_key_cache_get_stats(cache, &st);
    tap_ok(st.hits >= 4 && st.misses + st.hits == 10,
           "key cache: later requests find keys parsed (hits %lu, misses %lu)", st.hits, st.misses);
    tap_is_int(chef_auth_verify(&f13.req, CHEF_SIGN_1_3, only_other, 1, cache, &which, &err),
               PURSER_EUNAUTH, "key cache: a key no longer listed is not used, though cached");
    /* The same key with one base64 character changed is another key (or none): the cached
     * parse of the original must not answer for it. */
    changed[strlen(changed) - 40] = changed[strlen(changed) - 40] == 'A' ? 'B' : 'A';
    tap_is_int(chef_auth_verify(&f13.req, CHEF_SIGN_1_3, with_changed, 2, cache, &which, &err),
               PURSER_EUNAUTH, "key cache: a changed PEM is never answered by the old parse");
    tap_is_int(chef_auth_verify(&f13.req, CHEF_SIGN_1_3, both, 2, cache, &which, &err), 0,
               "key cache: and the original still verifies afterwards");
    {
        const char *junk[] = {"not a key", pub};
        tap_is_int(chef_auth_verify(&f13.req, CHEF_SIGN_1_3, junk, 2, cache, &which, &err), 0,
                   "key cache: a stored value that is not a key is skipped");
    }
    chef_key_cache_free(cache);
    buf_release(&f10.signature);
    buf_release(&f13.signature);
    free(f10.text);
    free(f13.text);
    free(changed);
}

/* chef_auth_sign with the fixtures' key, time and request gives what mixlib-authentication
 * gave (RSA PKCS#1 v1.5 signatures are deterministic), and the verifier accepts it. */
static void run_sign(const char *const *keys)
{
    struct fixture f;
    struct buf headers = BUF_INIT, expect = BUF_INIT;
    struct chef_signed_request req = {.method = "post",
                                      .path = PATH,
                                      .body = BODY,
                                      .body_len = strlen(BODY),
                                      .user_id = "alice",
                                      .server_api_version = "1"};
    char *key = slurp("key.pem", ""), *line, *save = NULL;
    struct purser_error err;
    time_t at;

    if (!tap_ok(key && load(&f, "v1.3") == 0, "the v1.3 fixture and its private key"))
        return;
    chef_auth_parse_time(f.req.timestamp, &at);
    tap_is_int(chef_auth_sign(&headers, &req, key, at, &err), 0, "signing with protocol 1.3");
    for (line = strtok_r(f.text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, "X-Ops-Authorization-", 20) == 0)
            buf_printf(&expect, "%s: %s\n", line, line + strlen(line) + 2);
    tap_ok(strstr(buf_cstr(&headers), buf_cstr(&expect)) != NULL,
           "the signature's lines are mixlib-authentication's, byte for byte");
    tap_ok(strstr(buf_cstr(&headers), "X-Ops-Timestamp: 2026-01-02T03:04:05Z\n") &&
               strstr(buf_cstr(&headers), "X-Ops-Content-Hash: "
                                          "1XD5eQOx6tNwvB8oHUYZyuA6QojRZXbLT8p2g3T/W78=\n"),
           "with the time and the body's hash");
    {
        struct buf signature = BUF_INIT;
        char *copy = strdup(buf_cstr(&headers));
        save = NULL;
        for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
            if (strncmp(line, "X-Ops-Authorization-", 20) == 0)
                buf_adds(&signature, strstr(line, ": ") + 2);
        req.timestamp = f.req.timestamp;
        req.sign = "algorithm=sha256;version=1.3;";
        req.content_hash = f.req.content_hash;
        req.signature = buf_cstr(&signature);
        tap_ok(verifies(&req, CHEF_SIGN_1_3, keys, 2), "which the verifier accepts");
        req.body = "{}";
        req.body_len = 2;
        tap_ok(!verifies(&req, CHEF_SIGN_1_3, keys, 2), "for that body only");
        buf_release(&signature);
        free(copy);
    }
    tap_is_int(chef_auth_sign(&headers, &req, "-----BEGIN RSA PRIVATE KEY-----\nxx\n", at, &err),
               PURSER_EINVAL, "a key that is not one is refused");
    tap_is_str(err.message, "the key is not an RSA private key in PEM", "saying so");
    buf_release(&headers);
    buf_release(&expect);
    buf_release(&f.signature);
    free(f.text);
    free(key);
}

int main(int argc, char **argv)
{
    char *pub = NULL, *other = NULL;
    struct purser_error err;
    enum chef_sign_version v;
    tap_init(argc, argv);

    pub = slurp("pub.pem", "");
    other = slurp("other-pub.pem", "");
    if (!tap_ok(pub && other, "public keys"))
        return tap_done();
    {
        const char *keys[] = {other, pub};
        run_version("v1.0", CHEF_SIGN_1_0, keys);
        run_version("v1.1", CHEF_SIGN_1_1, keys);
        run_version("v1.3", CHEF_SIGN_1_3, keys);
        run_v12(keys);
        run_sign(keys);
    }
    run_key_cache(pub, other);
    {
        struct chef_signed_request r = {.method = "GET",
                                        .path = "/",
                                        .body = "",
                                        .user_id = "bob",
                                        .timestamp = "2026-01-02T03:04:05Z"};
        time_t now;
        chef_auth_parse_time("2026-01-02T03:04:05Z", &now);
        tap_is_int(chef_auth_check_headers(&r, now, CHEF_AUTH_SKEW, &v, &err), PURSER_EINVAL,
                   "missing headers are a bad request");
        tap_is_str(err.message,
                   "missing required authentication header(s) 'X-Ops-Sign', 'X-Ops-Content-Hash'",
                   "naming each missing header as Chef does");
        r.sign = "algorithm=sha1;version=1.0;";
        r.content_hash = "x";
        r.timestamp = "yesterday";
        tap_is_int(chef_auth_check_headers(&r, now, CHEF_AUTH_SKEW, &v, &err), PURSER_EUNAUTH,
                   "a timestamp that does not parse is 401, as Chef's bad_clock");
        tap_is_str(err.message,
                   "Failed to authenticate as bob. Synchronize the clock on your host.",
                   "Chef's message");
        r.timestamp = "2026-01-02T03:04:05Z";
        r.sign = "algorithm=sha1;version=2.0";
        tap_is_int(chef_auth_check_headers(&r, now, CHEF_AUTH_SKEW, &v, &err), PURSER_EINVAL,
                   "an unknown protocol version is a bad request");
        tap_is_str(err.message, "Unsupported authentication protocol version", "Chef's message");
        r.sign = "algorithm=sha256;version=1.0";
        tap_is_int(chef_auth_check_headers(&r, now, CHEF_AUTH_SKEW, &v, &err), PURSER_EINVAL,
                   "an algorithm that does not go with the version is refused");
        r.sign = "version=1.1";
        tap_is_int(chef_auth_check_headers(&r, now - 899, CHEF_AUTH_SKEW, &v, &err), 0,
                   "899 seconds of skew is accepted, and the algorithm may be left out");
        tap_is_int(chef_auth_check_headers(&r, now + 901, CHEF_AUTH_SKEW, &v, &err), PURSER_EUNAUTH,
                   "901 seconds is not");
    }
    free(pub);
    free(other);
    return tap_done();
}
