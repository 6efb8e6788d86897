/* docstore_keys.c: re-sealing encrypted documents under the newest key, in batches
 * (purser rotate-keys), and counting what each key still seals. */
#include "docs/docstore_private.h"

#include "auth/keyring.h"
#include "base/crypto.h"
#include "base/json_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int docstore_count_sealed(struct store *store, struct arena *arena, int key_id, long *count,
                          struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(key_id)};
    int rc = store_query(store, arena, &rows,
                         "SELECT COUNT(*) FROM doc_contents WHERE encrypted = 1 AND key_id = ?", p,
                         1, err);
    *count = rc ? 0 : atol(store_cell(&rows, 0, 0));
    return rc;
}

struct rotate {
    struct arena *arena;
    const struct keyring *ring;
    long batch, done;
};

/* Re-seals one content under the newest slot, if no one re-sealed it meanwhile. */
static int reseal(struct store *store, struct rotate *r, struct store_rows *rows, size_t i,
                  struct purser_error *err)
{
    struct docstore_ctx ctx = {.store = store,
                               .arena = r->arena,
                               .keyring = r->ring,
                               .org_id = atoll(store_cell(rows, i, 1))};
    const char *schema = store_cell(rows, i, 2), *layer = store_cell(rows, i, 3),
               *name = store_cell(rows, i, 4);
    size_t aad_len = 0, sealed_len = 0;
    char *aad = document_aad(r->arena, ctx.org_id, schema, layer, name, &aad_len), *text;
    unsigned char *sealed = NULL;
    json_t *data = NULL;
    int key_id = 0, old_key = atoi(store_cell(rows, i, 5)), rc;

    if (!aad)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    rc = docstore_open_data(&ctx, schema, layer, name, old_key, store_cell(rows, i, 6),
                            rows->lengths[i * rows->columns + 6], &data, err);
    if (!rc) {
        text = json_text(data, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(data);
        rc = text ? keyring_seal(r->ring, aad, aad_len, text, strlen(text), &sealed, &sealed_len,
                                 &key_id, err)
                  : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        crypto_free_secret(text);
        if (!rc) {
            struct store_value p[] = {STORE_BLOB((const char *)sealed, sealed_len),
                                      STORE_INT(key_id), STORE_INT(atoll(store_cell(rows, i, 0))),
                                      STORE_INT(old_key)};
            unsigned long long affected = 0;
            rc = store_exec(
                store, "UPDATE doc_contents SET data = ?, key_id = ? WHERE id = ? AND key_id = ?",
                p, 4, &affected, NULL, err);
            r->done += (long)affected;
        }
        free(sealed);
    }
    return rc;
}

static int rotate_txn(struct store *store, void *arg, struct purser_error *err)
{
    struct rotate *r = arg;
    struct store_value p[] = {STORE_INT(keyring_newest(r->ring)), STORE_INT(r->batch)};
    struct store_rows rows;
    int rc =
        store_query(store, r->arena, &rows,
                    "SELECT id, org_id, schema_name, layer, name, key_id, data FROM doc_contents"
                    " WHERE encrypted = 1 AND key_id <> ? ORDER BY id LIMIT ? FOR UPDATE",
                    p, 2, err);
    r->done = 0;
    for (size_t i = 0; !rc && i < rows.count; i++)
        rc = reseal(store, r, &rows, i, err);
    return rc;
}

int docstore_rotate_batch(struct store *store, struct arena *arena, const struct keyring *ring,
                          long batch, long *done, long *left, struct purser_error *err)
{
    struct rotate r = {.arena = arena, .ring = ring, .batch = batch};
    struct store_rows rows;
    struct store_value p[] = {STORE_INT(keyring_newest(ring))};
    int rc = store_txn(store, 0, rotate_txn, &r, err);
    *done = r.done;
    if (!rc)
        rc = store_query(store, arena, &rows,
                         "SELECT COUNT(*) FROM doc_contents WHERE encrypted = 1 AND key_id <> ?", p,
                         1, err);
    *left = rc ? 0 : atol(store_cell(&rows, 0, 0));
    return rc;
}
