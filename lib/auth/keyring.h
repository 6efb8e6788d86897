/* keyring.h: the keys that seal secrets at rest (SPEC §7), and AES-256-GCM with them.
 *
 * A keyring file holds numbered slots, one per line: "<id> <base64 of 32 random bytes>"
 * (blank lines and lines starting with '#' are ignored). The highest id seals new values;
 * every sealed value records the id that sealed it, so older slots keep opening older
 * records until `purser rotate-keys` has re-sealed them. The file must not be readable by
 * group or others: keyring_load refuses it otherwise.
 *
 * A sealed value is nonce (12 random bytes, fresh per value) || ciphertext || tag (16
 * bytes). The associated data binds it to its owner, so a sealed value copied onto another
 * record does not open. Keys never leave this module and are wiped when freed.
 */
#ifndef PURSER_KEYRING_H
#define PURSER_KEYRING_H

#include "base/err.h"

#include <stddef.h>

#define KEYRING_NONCE_SIZE 12
#define KEYRING_TAG_SIZE 16
#define KEYRING_OVERHEAD (KEYRING_NONCE_SIZE + KEYRING_TAG_SIZE)

struct keyring;

/* Reads the keyring at path. PURSER_ENOTFOUND when the file does not exist, PURSER_EINVAL
 * for a malformed line, a key that is not 32 bytes, a repeated id, no slot at all, or a file
 * that group or others may read. Free with keyring_free(). */
int keyring_load(struct keyring **out, const char *path, struct purser_error *err);

/* Wipes and frees. Accepts NULL. */
void keyring_free(struct keyring *ring);

/* The id of the slot that seals (the highest). */
int keyring_newest(const struct keyring *ring);

/* 1 when the keyring has slot id. */
int keyring_has(const struct keyring *ring, int id);

/* The slot ids in ascending order into ids (at most max); returns how many there are. */
size_t keyring_ids(const struct keyring *ring, int *ids, size_t max);

/* Seals n bytes of plain under the newest slot: *out (malloc'd, n + KEYRING_OVERHEAD bytes,
 * caller frees) and *key_id. */
int keyring_seal(const struct keyring *ring, const void *aad, size_t aad_len, const void *plain,
                 size_t n, unsigned char **out, size_t *out_len, int *key_id,
                 struct purser_error *err);

/* Opens a value sealed under slot key_id: *plain (malloc'd, NUL-terminated, caller frees with
 * keyring_free_plain) and its length. PURSER_EINTERNAL when the slot is missing or the value
 * does not authenticate (tampered, or bound to another owner). */
int keyring_open(const struct keyring *ring, int key_id, const void *aad, size_t aad_len,
                 const unsigned char *sealed, size_t n, char **plain, size_t *plain_len,
                 struct purser_error *err);

/* Wipes and frees n bytes of opened plaintext. Accepts NULL. */
void keyring_free_plain(char *plain, size_t n);

/* Creates a keyring file with one slot (id 1) of a fresh random key, mode 0600. Refuses to
 * overwrite an existing file (PURSER_EEXISTS). */
int keyring_create(const char *path, struct purser_error *err);

/* Appends a slot with a fresh random key and the next id to the file; *new_id gets it. */
int keyring_add_slot(const char *path, int *new_id, struct purser_error *err);

/* Rewrites the file without slot id (PURSER_ENOTFOUND when absent; PURSER_EINVAL when it is
 * the only slot). Whether records still use it is the caller's check. */
int keyring_remove_slot(const char *path, int id, struct purser_error *err);

#endif
