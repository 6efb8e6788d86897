/* crypto.c: hashing, base64, randomness and RSA keys through OpenSSL's EVP interfaces. */
#include "base/crypto.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

typedef struct evp_pkey_st EVP_PKEY_T;

char *crypto_base64(const void *data, size_t n)
{
    size_t size = 4 * ((n + 2) / 3) + 1;
    char *out = malloc(size);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, data, (int)n);
    return out;
}

unsigned char *crypto_base64_decode(const char *text, size_t *len_out)
{
    size_t n = strlen(text), clean_len = 0, pad = 0;
    char *clean = malloc(n + 1);
    unsigned char *out = NULL;
    int decoded;

    if (!clean)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (text[i] != '\n' && text[i] != '\r' && text[i] != ' ')
            clean[clean_len++] = text[i];
    clean[clean_len] = '\0';
    if (clean_len % 4 != 0)
        goto cleanup;
    if (clean_len && clean[clean_len - 1] == '=')
        pad++;
    if (clean_len > 1 && clean[clean_len - 2] == '=')
        pad++;
    out = malloc(clean_len / 4 * 3 + 1);
    if (!out)
        goto cleanup;
    decoded = EVP_DecodeBlock(out, (unsigned char *)clean, (int)clean_len);
    if (decoded < 0) {
        free(out);
        out = NULL;
        goto cleanup;
    }
    *len_out = (size_t)decoded - pad;
cleanup:
    free(clean);
    return out;
}

/* Digests fetched once per process: OpenSSL 3's implicit fetch on every call is costly on
 * the request path. Never freed (they live as long as the process). */
static const EVP_MD *digest(const char *name, const EVP_MD **slot)
{
    if (!*slot)
        *slot = EVP_MD_fetch(NULL, name, NULL);
    return *slot;
}

static const EVP_MD *md_sha1(void)
{
    static const EVP_MD *md;
    return digest("SHA1", &md);
}

static const EVP_MD *md_sha256(void)
{
    static const EVP_MD *md;
    return digest("SHA256", &md);
}

static const EVP_MD *md_md5(void)
{
    static const EVP_MD *md;
    return digest("MD5", &md);
}

static char *digest_base64(const EVP_MD *md, const void *data, size_t n)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!EVP_Digest(data, n, digest, &len, md, NULL))
        return NULL;
    return crypto_base64(digest, len);
}

char *crypto_sha1_base64(const void *data, size_t n)
{
    return digest_base64(md_sha1(), data, n);
}

char *crypto_sha256_base64(const void *data, size_t n)
{
    return digest_base64(md_sha256(), data, n);
}

void crypto_hex(char *out, const void *data, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *bytes = data;
    for (size_t i = 0; i < n; i++) { /* (on the request path: no printf) */
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

void crypto_md5_hex(char out[33], const void *data, size_t n)
{
    unsigned char bytes[16];
    unsigned int len = 0;
    EVP_Digest(data, n, bytes, &len, md_md5(), NULL);
    crypto_hex(out, bytes, 16);
}

void crypto_sha256(unsigned char out[32], const void *data, size_t n)
{
    unsigned int len = 0;
    EVP_Digest(data, n, out, &len, md_sha256(), NULL);
}

void crypto_sha1(unsigned char out[20], const void *data, size_t n)
{
    unsigned int len = 0;
    EVP_Digest(data, n, out, &len, md_sha1(), NULL);
}

void crypto_sha256_hex(char out[65], const void *data, size_t n)
{
    unsigned char bytes[32];
    crypto_sha256(bytes, data, n);
    crypto_hex(out, bytes, 32);
}

int crypto_random(void *out, size_t n)
{
    return RAND_bytes(out, (int)n) == 1 ? 0 : PURSER_EINTERNAL;
}

char *crypto_base64url(const void *data, size_t n)
{
    char *b64 = crypto_base64(data, n);
    for (char *p = b64; p && *p; p++) {
        if (*p == '+')
            *p = '-';
        else if (*p == '/')
            *p = '_';
        else if (*p == '=')
            *p = '\0';
    }
    return b64;
}

unsigned char *crypto_base64url_decode(const char *text, size_t *len_out)
{
    size_t n = strlen(text);
    char *b64;
    unsigned char *out;
    if (strpbrk(text, "+/= \r\n") || n % 4 == 1 || !(b64 = malloc(n + 3)))
        return NULL;
    for (size_t i = 0; i < n; i++)
        b64[i] = text[i] == '-' ? '+' : text[i] == '_' ? '/' : text[i];
    while (n % 4)
        b64[n++] = '=';
    b64[n] = '\0';
    out = crypto_base64_decode(b64, len_out);
    free(b64);
    return out;
}

char *crypto_new_token(void)
{
    unsigned char bytes[32];
    char *b64, *token;
    if (crypto_random(bytes, sizeof(bytes)))
        return NULL;
    b64 = crypto_base64url(bytes, sizeof(bytes));
    OPENSSL_cleanse(bytes, sizeof(bytes));
    if (!b64)
        return NULL;
    token = malloc(strlen(b64) + 8);
    if (token)
        snprintf(token, strlen(b64) + 8, "purser_%s", b64);
    crypto_free_secret(b64);
    return token;
}

char *crypto_random_hex(size_t n)
{
    unsigned char bytes[64];
    char *out;
    if (n > sizeof(bytes) || crypto_random(bytes, n) || !(out = malloc(2 * n + 1)))
        return NULL;
    crypto_hex(out, bytes, n);
    return out;
}

int crypto_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}

static char *bio_to_string(BIO *bio)
{
    char *data, *out;
    long len = BIO_get_mem_data(bio, &data);
    if (len < 0 || !(out = malloc((size_t)len + 1)))
        return NULL;
    memcpy(out, data, (size_t)len);
    out[len] = '\0';
    return out;
}

static char *public_pem_of(EVP_PKEY *key)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *out = NULL;
    if (bio && PEM_write_bio_PUBKEY(bio, key))
        out = bio_to_string(bio);
    BIO_free(bio);
    return out;
}

int crypto_rsa_generate(char **private_pem, char **public_pem, int bits, struct purser_error *err)
{
    EVP_PKEY *key = EVP_RSA_gen((unsigned)bits);
    BIO *bio = BIO_new(BIO_s_mem());
    int rc = 0;

    *private_pem = *public_pem = NULL;
    if (!key || !bio ||
        !PEM_write_bio_PrivateKey_traditional(bio, key, NULL, NULL, 0, NULL, NULL) ||
        !(*private_pem = bio_to_string(bio)) || !(*public_pem = public_pem_of(key))) {
        crypto_free_secret(*private_pem);
        *private_pem = NULL;
        rc = purser_error_set(err, PURSER_EINTERNAL, "cannot generate an RSA key");
    }
    if (bio) {
        char *data;
        long len = BIO_get_mem_data(bio, &data);
        if (len > 0)
            OPENSSL_cleanse(data, (size_t)len);
    }
    BIO_free(bio);
    EVP_PKEY_free(key);
    return rc;
}

struct evp_pkey_st *crypto_public_key_read(const char *pem, size_t len)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *key = NULL;
    if (!bio)
        return NULL;
    if (strstr(pem, "-----BEGIN CERTIFICATE-----")) {
        X509 *cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (cert)
            key = X509_get_pubkey(cert);
        X509_free(cert);
    } else if (strstr(pem, "-----BEGIN RSA PUBLIC KEY-----")) {
        const unsigned char *der;
        long der_len;
        char *name = NULL, *header = NULL;
        unsigned char *data = NULL;
        if (PEM_read_bio(bio, &name, &header, &data, &der_len)) {
            der = data;
            key = d2i_PublicKey(EVP_PKEY_RSA, NULL, &der, der_len);
        }
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_free(data);
    } else {
        key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    }
    BIO_free(bio);
    if (key && EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    return key;
}

void crypto_pkey_free(struct evp_pkey_st *key)
{
    EVP_PKEY_free(key);
}

int crypto_public_key_check(const char *pem, const char *field, struct purser_error *err)
{
    EVP_PKEY *key = crypto_public_key_read(pem, strlen(pem));
    int bits = key ? EVP_PKEY_get_bits(key) : 0;
    EVP_PKEY_free(key);
    if (!key)
        return purser_error_set(err, PURSER_EINVAL,
                                "Field '%s' is not a valid RSA public key in PEM format", field);
    if (bits < 1024)
        return purser_error_set(err, PURSER_EINVAL, "Field '%s': RSA key of %d bits is too short",
                                field, bits);
    return 0;
}

int crypto_public_from_private(char **public_pem, const char *private_pem, struct purser_error *err)
{
    BIO *bio = BIO_new_mem_buf(private_pem, -1);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    *public_pem = key && EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA ? public_pem_of(key) : NULL;
    EVP_PKEY_free(key);
    BIO_free(bio);
    return *public_pem ? 0 : purser_error_set(err, PURSER_EINVAL, "not an RSA private key");
}

void crypto_free_secret(char *secret)
{
    if (!secret)
        return;
    OPENSSL_cleanse(secret, strlen(secret));
    free(secret);
}
