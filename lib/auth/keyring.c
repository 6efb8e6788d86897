/* keyring.c: keyring files of numbered AES-256 keys, and sealing values with AES-256-GCM. */
#include "auth/keyring.h"

#include "base/crypto.h"
#include "base/secret_file.h"
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_SIZE 32
#define MAX_SLOTS 64

struct slot {
    int id;
    unsigned char key[KEY_SIZE];
};

struct keyring {
    size_t count;
    struct slot slots[MAX_SLOTS]; /* ascending ids */
};

void keyring_free(struct keyring *ring)
{
    if (!ring)
        return;
    OPENSSL_cleanse(ring, sizeof(*ring));
    free(ring);
}

void keyring_free_plain(char *plain, size_t n)
{
    if (!plain)
        return;
    OPENSSL_cleanse(plain, n);
    free(plain);
}

/* Parses "<id> <base64>" into slot; 0 or -1. */
static int parse_line(const char *line, struct slot *slot)
{
    char *end;
    long id = strtol(line, &end, 10);
    unsigned char *key;
    size_t len = 0;
    int rc = -1;

    if (end == line || *end != ' ' || id < 1 || id > 1000000)
        return -1;
    while (*end == ' ')
        end++;
    key = crypto_base64_decode(end, &len);
    if (key && len == KEY_SIZE) {
        slot->id = (int)id;
        memcpy(slot->key, key, KEY_SIZE);
        rc = 0;
    }
    if (key) {
        OPENSSL_cleanse(key, len);
        free(key);
    }
    return rc;
}

static int insert_slot(struct keyring *ring, const struct slot *slot)
{
    size_t at = ring->count;
    if (ring->count == MAX_SLOTS)
        return -1;
    for (size_t i = 0; i < ring->count; i++) {
        if (ring->slots[i].id == slot->id)
            return -1;
        if (ring->slots[i].id > slot->id && at == ring->count)
            at = i;
    }
    memmove(&ring->slots[at + 1], &ring->slots[at], (ring->count - at) * sizeof(struct slot));
    ring->slots[at] = *slot;
    ring->count++;
    return 0;
}

static int parse_text(struct keyring *ring, char *text, const char *path, struct purser_error *err)
{
    int line_no = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        struct slot slot;
        line_no++;
        if (line[0] == '#' || line[strspn(line, " \t\r")] == '\0')
            continue;
        line[strcspn(line, "\r")] = '\0';
        if (parse_line(line, &slot) || insert_slot(ring, &slot)) {
            OPENSSL_cleanse(&slot, sizeof(slot));
            return purser_error_set(err, PURSER_EINVAL,
                                    "keyring %s: slot %d is malformed (want '<id> <base64 of "
                                    "32 bytes>', ids unique)",
                                    path, line_no);
        }
        OPENSSL_cleanse(&slot, sizeof(slot));
    }
    if (!ring->count)
        return purser_error_set(err, PURSER_EINVAL, "keyring %s holds no key", path);
    return 0;
}

int keyring_load(struct keyring **out, const char *path, struct purser_error *err)
{
    struct keyring *ring = NULL;
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    int rc;

    *out = NULL;
    if (stat(path, &st) != 0)
        return purser_error_set(err, errno == ENOENT ? PURSER_ENOTFOUND : PURSER_EINVAL,
                                "keyring %s: %s", path, strerror(errno));
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        return purser_error_set(err, PURSER_EINVAL,
                                "keyring %s may be read by others: chmod 600 it", path);
    rc = file_read_all(&text, &len, path, 1 << 20, err);
    if (!rc) {
        if (!(ring = calloc(1, sizeof(*ring))))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        else
            rc = parse_text(ring, text, path, err);
        OPENSSL_cleanse(text, len);
        free(text);
        if (rc)
            keyring_free(ring);
        else
            *out = ring;
    }
    return rc;
}

int keyring_newest(const struct keyring *ring)
{
    return ring && ring->count ? ring->slots[ring->count - 1].id : 0;
}

static const struct slot *find_slot(const struct keyring *ring, int id)
{
    for (size_t i = 0; ring && i < ring->count; i++)
        if (ring->slots[i].id == id)
            return &ring->slots[i];
    return NULL;
}

int keyring_has(const struct keyring *ring, int id)
{
    return find_slot(ring, id) != NULL;
}

size_t keyring_ids(const struct keyring *ring, int *ids, size_t max)
{
    for (size_t i = 0; ring && i < ring->count && i < max; i++)
        ids[i] = ring->slots[i].id;
    return ring ? ring->count : 0;
}

/* One GCM pass: encrypt (in -> out, tag written) or decrypt (tag checked). 0 or -1. */
static int gcm(int encrypt, const unsigned char *key, const unsigned char *nonce, const void *aad,
               size_t aad_len, const unsigned char *in, size_t n, unsigned char *out,
               unsigned char *tag)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int len = 0, ok;

    if (!ctx)
        return -1;
    ok = EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL, encrypt) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, KEYRING_NONCE_SIZE, NULL) == 1 &&
         EVP_CipherInit_ex(ctx, NULL, NULL, key, nonce, encrypt) == 1 &&
         EVP_CipherUpdate(ctx, NULL, &len, aad, (int)aad_len) == 1 &&
         (n == 0 || EVP_CipherUpdate(ctx, out, &len, in, (int)n) == 1);
    if (ok && !encrypt)
        ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, KEYRING_TAG_SIZE, tag) == 1;
    ok = ok && EVP_CipherFinal_ex(ctx, out + (n ? len : 0), &len) == 1;
    if (ok && encrypt)
        ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, KEYRING_TAG_SIZE, tag) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok ? 0 : -1;
}

int keyring_seal(const struct keyring *ring, const void *aad, size_t aad_len, const void *plain,
                 size_t n, unsigned char **out, size_t *out_len, int *key_id,
                 struct purser_error *err)
{
    const struct slot *slot = ring && ring->count ? &ring->slots[ring->count - 1] : NULL;
    unsigned char *sealed;

    *out = NULL;
    if (!slot)
        return purser_error_set(err, PURSER_EUNAVAIL,
                                "no keyring is configured: encrypted documents cannot be stored");
    if (!(sealed = malloc(n + KEYRING_OVERHEAD)))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (crypto_random(sealed, KEYRING_NONCE_SIZE) ||
        gcm(1, slot->key, sealed, aad, aad_len, plain, n, sealed + KEYRING_NONCE_SIZE,
            sealed + KEYRING_NONCE_SIZE + n)) {
        free(sealed);
        return purser_error_set(err, PURSER_EINTERNAL, "encryption failed");
    }
    *out = sealed;
    *out_len = n + KEYRING_OVERHEAD;
    *key_id = slot->id;
    return 0;
}

int keyring_open(const struct keyring *ring, int key_id, const void *aad, size_t aad_len,
                 const unsigned char *sealed, size_t n, char **plain, size_t *plain_len,
                 struct purser_error *err)
{
    const struct slot *slot = find_slot(ring, key_id);
    size_t len = n >= KEYRING_OVERHEAD ? n - KEYRING_OVERHEAD : 0;
    unsigned char tag[KEYRING_TAG_SIZE];
    char *out;

    *plain = NULL;
    if (!slot)
        return purser_error_set(err, PURSER_EINTERNAL,
                                "a record is sealed under keyring slot %d, which is missing",
                                key_id);
    if (n < KEYRING_OVERHEAD)
        return purser_error_set(err, PURSER_EINTERNAL, "a sealed record is truncated");
    if (!(out = malloc(len + 1)))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    memcpy(tag, sealed + KEYRING_NONCE_SIZE + len, KEYRING_TAG_SIZE);
    if (gcm(0, slot->key, sealed, aad, aad_len, sealed + KEYRING_NONCE_SIZE, len,
            (unsigned char *)out, tag)) {
        keyring_free_plain(out, len + 1);
        return purser_error_set(err, PURSER_EINTERNAL,
                                "a sealed record does not authenticate (slot %d)", key_id);
    }
    out[len] = '\0';
    *plain = out;
    *plain_len = len;
    return 0;
}

/* Writes text to path atomically (a new file of mode 600 renamed over it: base/secret_file). */
static int write_file(const char *path, const char *text, size_t len, struct purser_error *err)
{
    if (secret_file_write(path, text, len))
        return purser_error_set(err, PURSER_EINTERNAL, "cannot write keyring %s: %s", path,
                                strerror(errno));
    return 0;
}

/* The file's text for ring's slots. */
static char *format_ring(const struct keyring *ring, size_t *len)
{
    size_t size = 128 + ring->count * 80, used;
    char *text = malloc(size);
    if (!text)
        return NULL;
    used = (size_t)snprintf(text, size,
                            "# purser keyring: <slot id> <base64 AES-256 key>; the "
                            "highest id seals. Keep it secret.\n");
    for (size_t i = 0; i < ring->count; i++) {
        char *b64 = crypto_base64(ring->slots[i].key, KEY_SIZE);
        if (!b64) {
            free(text);
            return NULL;
        }
        used += (size_t)snprintf(text + used, size - used, "%d %s\n", ring->slots[i].id, b64);
        OPENSSL_cleanse(b64, strlen(b64));
        free(b64);
    }
    *len = used;
    return text;
}

static int save_ring(const char *path, const struct keyring *ring, struct purser_error *err)
{
    size_t len = 0;
    char *text = format_ring(ring, &len);
    int rc;
    if (!text)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    rc = write_file(path, text, len, err);
    OPENSSL_cleanse(text, len);
    free(text);
    return rc;
}

static int append_new_slot(struct keyring *ring, int id, struct purser_error *err)
{
    struct slot slot = {.id = id};
    int rc = 0;
    if (crypto_random(slot.key, KEY_SIZE) || insert_slot(ring, &slot))
        rc = purser_error_set(err, PURSER_EINTERNAL, "cannot add a keyring slot");
    OPENSSL_cleanse(&slot, sizeof(slot));
    return rc;
}

int keyring_create(const char *path, struct purser_error *err)
{
    struct keyring *ring;
    int rc;
    if (access(path, F_OK) == 0)
        return purser_error_set(err, PURSER_EEXISTS, "keyring %s exists already", path);
    if (!(ring = calloc(1, sizeof(*ring))))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    rc = append_new_slot(ring, 1, err);
    if (!rc)
        rc = save_ring(path, ring, err);
    keyring_free(ring);
    return rc;
}

int keyring_add_slot(const char *path, int *new_id, struct purser_error *err)
{
    struct keyring *ring = NULL;
    int rc = keyring_load(&ring, path, err);
    if (!rc)
        rc = append_new_slot(ring, keyring_newest(ring) + 1, err);
    if (!rc)
        rc = save_ring(path, ring, err);
    if (!rc)
        *new_id = keyring_newest(ring);
    keyring_free(ring);
    return rc;
}

int keyring_remove_slot(const char *path, int id, struct purser_error *err)
{
    struct keyring *ring = NULL;
    int rc = keyring_load(&ring, path, err);
    size_t i;
    if (!rc) {
        for (i = 0; i < ring->count && ring->slots[i].id != id; i++)
            ;
        if (i == ring->count)
            rc = purser_error_set(err, PURSER_ENOTFOUND, "keyring %s has no slot %d", path, id);
        else if (ring->count == 1)
            rc = purser_error_set(err, PURSER_EINVAL, "slot %d is the keyring's only key", id);
        else {
            OPENSSL_cleanse(&ring->slots[i], sizeof(struct slot));
            memmove(&ring->slots[i], &ring->slots[i + 1],
                    (ring->count - i - 1) * sizeof(struct slot));
            ring->count--;
            rc = save_ring(path, ring, err);
        }
        keyring_free(ring);
    }
    return rc;
}
