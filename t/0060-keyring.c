/* 0060-keyring: keyring files and AES-256-GCM sealing (lib/keyring): round trips, the
 * binding to associated data, tampering, file permissions, adding and removing slots. */
#include "auth/keyring.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/purser-keyring-XXXXXX";
static char path[256];

static struct keyring *load(void)
{
    struct keyring *ring = NULL;
    struct purser_error err;
    if (keyring_load(&ring, path, &err))
        tap_diag("  load: %s", err.message);
    return ring;
}

/* Seals plain under ring's newest slot and opens it with aad_open; 1 when it opens equal. */
static int round_trip(struct keyring *ring, const char *plain, const char *aad_seal,
                      const char *aad_open, int tamper_at, int *key_id)
{
    struct purser_error err;
    unsigned char *sealed = NULL;
    size_t sealed_len = 0, plain_len = 0;
    char *opened = NULL;
    int ok = 0;
    if (keyring_seal(ring, aad_seal, strlen(aad_seal), plain, strlen(plain), &sealed, &sealed_len,
                     key_id, &err))
        return 0;
    if (sealed_len != strlen(plain) + KEYRING_OVERHEAD ||
        (*plain && memmem(sealed, sealed_len, plain, strlen(plain))))
        goto cleanup;
    if (tamper_at >= 0)
        sealed[tamper_at] ^= 1;
    if (!keyring_open(ring, *key_id, aad_open, strlen(aad_open), sealed, sealed_len, &opened,
                      &plain_len, &err))
        ok = plain_len == strlen(plain) && memcmp(opened, plain, plain_len) == 0;
    keyring_free_plain(opened, plain_len);
cleanup:
    free(sealed);
    return ok;
}

int main(int argc, char **argv)
{
    struct purser_error err;
    struct keyring *ring;
    int key_id = 0, new_id = 0, ids[4];
    unsigned char *a = NULL, *b = NULL;
    size_t a_len = 0, b_len = 0;
    FILE *f;

    tap_init(argc, argv);
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof(path), "%s/keyring", dir);

    tap_ok(keyring_load(&ring, path, &err) == PURSER_ENOTFOUND, "a missing keyring: not found");
    tap_ok(keyring_create(path, &err) == 0, "keyring_create");
    {
        struct stat st;
        tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "made with mode 600");
    }
    tap_ok(keyring_create(path, &err) == PURSER_EEXISTS, "never overwrites a keyring");
    ring = load();
    tap_ok(ring && keyring_newest(ring) == 1, "one slot, id 1");
    tap_ok(round_trip(ring, "hunter2", "1\0a/B/v1", "1\0a/B/v1", -1, &key_id) && key_id == 1,
           "seals and opens under slot 1");
    tap_ok(round_trip(ring, "", "owner", "owner", -1, &key_id), "an empty value round-trips");
    tap_ok(!round_trip(ring, "hunter2", "owner-a", "owner-b", -1, &key_id),
           "another owner's associated data does not open it");
    tap_ok(!round_trip(ring, "hunter2", "owner", "owner", 3, &key_id), "a changed nonce fails");
    tap_ok(!round_trip(ring, "hunter2", "owner", "owner", 14, &key_id),
           "a changed ciphertext fails");
    tap_ok(!round_trip(ring, "hunter2", "owner", "owner", 12 + 7 + 2, &key_id),
           "a changed tag fails");
    keyring_seal(ring, "o", 1, "same", 4, &a, &a_len, &key_id, &err);
    keyring_seal(ring, "o", 1, "same", 4, &b, &b_len, &key_id, &err);
    tap_ok(a && b && memcmp(a, b, KEYRING_NONCE_SIZE) != 0 && memcmp(a, b, a_len) != 0,
           "a fresh nonce for every value");

    tap_ok(keyring_add_slot(path, &new_id, &err) == 0 && new_id == 2, "add a slot: id 2");
    keyring_free(ring);
    ring = load();
    tap_ok(ring && keyring_newest(ring) == 2 && keyring_has(ring, 1),
           "the newest slot seals, slot 1 stays");
    {
        char *opened = NULL;
        size_t n = 0;
        tap_ok(keyring_open(ring, 1, "o", 1, a, a_len, &opened, &n, &err) == 0 && n == 4 &&
                   memcmp(opened, "same", 4) == 0,
               "what slot 1 sealed still opens");
        keyring_free_plain(opened, n);
    }
    tap_ok(round_trip(ring, "new", "o", "o", -1, &key_id) && key_id == 2,
           "new values go under slot 2");
    tap_ok(keyring_ids(ring, ids, 4) == 2 && ids[0] == 1 && ids[1] == 2, "slot ids ascending");
    tap_ok(keyring_remove_slot(path, 1, &err) == 0, "remove slot 1");
    tap_ok(keyring_remove_slot(path, 1, &err) == PURSER_ENOTFOUND, "removing it again: not found");
    tap_ok(keyring_remove_slot(path, 2, &err) == PURSER_EINVAL, "the only slot cannot go");
    keyring_free(ring);
    ring = load();
    {
        char *opened = NULL;
        size_t n = 0;
        tap_ok(ring &&
                   keyring_open(ring, 1, "o", 1, a, a_len, &opened, &n, &err) == PURSER_EINTERNAL &&
                   strstr(err.message, "slot 1"),
               "a record of a removed slot reports the missing slot");
    }
    keyring_free(ring);

    chmod(path, 0644);
    tap_ok(keyring_load(&ring, path, &err) == PURSER_EINVAL && strstr(err.message, "chmod 600"),
           "a keyring others may read is refused");
    f = fopen(path, "w");
    fputs("1 not-base64!\n", f);
    fclose(f);
    chmod(path, 0600);
    tap_ok(keyring_load(&ring, path, &err) == PURSER_EINVAL, "a malformed slot is refused");
    f = fopen(path, "w");
    fputs("# comment\n\n1 AAAA\n", f);
    fclose(f);
    tap_ok(keyring_load(&ring, path, &err) == PURSER_EINVAL,
           "a key that is not 32 bytes is refused");
    free(a);
    free(b);
    unlink(path);
    rmdir(dir);
    return tap_done();
}
