/* crypto.h: the OpenSSL pieces purser uses: hashes, base64, random tokens, RSA keys.
 *
 * Strings returned through `char **out` are heap copies the caller frees (private keys are
 * wiped first by crypto_free_secret()). Nothing here logs or keeps a secret.
 */
#ifndef PURSER_CRYPTO_H
#define PURSER_CRYPTO_H

#include "base/err.h"

#include <stddef.h>

struct evp_pkey_st;

/* Base64 (standard alphabet, padded, no line breaks) of n bytes into a new string. */
char *crypto_base64(const void *data, size_t n);

/* Decodes base64 (line breaks and spaces ignored) into a new buffer; NULL when malformed. */
unsigned char *crypto_base64_decode(const char *text, size_t *len_out);

/* Base64url (RFC 4648 section 5: '-' and '_', no padding) of n bytes into a new string, and
 * back (NULL when text is not base64url: '+', '/', '=' or spaces included). */
char *crypto_base64url(const void *data, size_t n);
unsigned char *crypto_base64url_decode(const char *text, size_t *len_out);

/* Base64 of the SHA-1 / SHA-256 digest of data (Chef's content and path hashes). */
char *crypto_sha1_base64(const void *data, size_t n);
char *crypto_sha256_base64(const void *data, size_t n);

/* Lowercase hex MD5 of data into out (33 bytes): Chef's file checksums. */
void crypto_md5_hex(char out[33], const void *data, size_t n);

/* The raw SHA-256 (SHA-1) digest of data into out. */
void crypto_sha256(unsigned char out[32], const void *data, size_t n);
void crypto_sha1(unsigned char out[20], const void *data, size_t n);

/* Lowercase hex SHA-256 of data into out (65 bytes). */
void crypto_sha256_hex(char out[65], const void *data, size_t n);

/* n random bytes; 0 or PURSER_EINTERNAL. */
int crypto_random(void *out, size_t n);

/* A new secret token: "purser_" and 43 base64url characters (256 random bits). */
char *crypto_new_token(void);

/* Lowercase hex of the n bytes of data into out (2n + 1 bytes). */
void crypto_hex(char *out, const void *data, size_t n);

/* Lowercase hex of n random bytes (2n characters) into a new string. */
char *crypto_random_hex(size_t n);

/* Constant-time comparison of two equal-length buffers: 1 when equal. */
int crypto_equal(const void *a, const void *b, size_t n);

/* Generates an RSA key pair: *private_pem in PKCS#1 ("BEGIN RSA PRIVATE KEY", as Chef hands
 * out) and *public_pem in SPKI ("BEGIN PUBLIC KEY"). */
int crypto_rsa_generate(char **private_pem, char **public_pem, int bits, struct purser_error *err);

/* Reads an RSA public key from PEM: SPKI ("BEGIN PUBLIC KEY"), PKCS#1 ("BEGIN RSA PUBLIC
 * KEY") or an X.509 certificate. Returns NULL when it is none of these or not RSA. Free with
 * crypto_pkey_free(). */
struct evp_pkey_st *crypto_public_key_read(const char *pem, size_t len);
void crypto_pkey_free(struct evp_pkey_st *key);

/* PURSER_EINVAL (naming `field`) unless pem is an RSA public key of at least 1024 bits. */
int crypto_public_key_check(const char *pem, const char *field, struct purser_error *err);

/* The SPKI PEM of the public half of a private key PEM (for "--key FILE" style input). */
int crypto_public_from_private(char **public_pem, const char *private_pem,
                               struct purser_error *err);

/* Wipes and frees a secret string. Accepts NULL. */
void crypto_free_secret(char *secret);

#endif
