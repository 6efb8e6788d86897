/* cookbook.c: sandboxes, the file store and cookbook artifacts (SQL and Chef's JSON). */
#include "policy/cookbook.h"

#include "auth/identity.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "policy/policy_lock.h"
#include "store/events.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The manifest parts that list files: API v2's all_files, and v0/v1's segments. */
static const char *const file_segments[] = {"all_files",  "recipes",   "definitions", "libraries",
                                            "attributes", "files",     "templates",   "resources",
                                            "providers",  "root_files"};
#define SEGMENT_COUNT (sizeof(file_segments) / sizeof(file_segments[0]))

static int checksum_ok(const char *s)
{
    if (!s || strlen(s) != 32)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s) && !(*s >= 'a' && *s <= 'f'))
            return 0;
    return 1;
}

/* Whether the file is stored; with lock, a shared lock on it until the transaction ends (an
 * artifact naming it: a collection cannot remove it meanwhile). */
static int file_exists(struct store *store, struct arena *arena, long long oid,
                       const char *checksum, int lock, int *exists, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(oid), STORE_STR(checksum)};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows,
                         lock ? "SELECT 1 FROM file_contents WHERE org_id = ? AND checksum = ?"
                                " LOCK IN SHARE MODE"
                              : "SELECT 1 FROM file_contents WHERE org_id = ? AND checksum = ?",
                         p, 2, err);
    *exists = !rc && rows.count > 0;
    return rc;
}

/* ---- sandboxes ------------------------------------------------------------------------------ */

struct new_sandbox {
    const char *org, *id;
    const struct links *links;
    const json_t *checksums;
    json_t *answer; /* checksum -> {url, needs_upload} */
};

static int txn_sandbox(struct store *store, void *ctx, struct purser_error *err)
{
    struct new_sandbox *sb = ctx;
    struct arena *arena = arena_new();
    long long oid = 0;
    const char *checksum;
    json_t *ignored;
    int rc = arena ? identity_org_id(store, arena, sb->org, &oid, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (!rc) {
        struct store_value p[] = {STORE_STR(sb->id), STORE_INT(oid)};
        rc = store_exec(store, "INSERT INTO sandboxes (id, org_id) VALUES (?, ?)", p, 2, NULL, NULL,
                        err);
    }
    json_object_clear(sb->answer);
    json_object_foreach ((json_t *)sb->checksums, checksum, ignored) {
        struct store_value p[] = {STORE_STR(sb->id), STORE_STR(checksum)};
        int exists = 0;
        if (!rc)
            rc = store_exec(store,
                            "INSERT INTO sandbox_checksums (sandbox_id, checksum) VALUES (?, ?)", p,
                            2, NULL, NULL, err);
        if (!rc)
            rc = file_exists(store, arena, oid, checksum, 0, &exists, err);
        if (rc)
            break;
        json_object_set_new(sb->answer, checksum,
                            exists
                                ? json_pack("{s:b}", "needs_upload", 0)
                                : json_pack("{s:o, s:b}", "url",
                                            link_url(sb->links, LINK_FILE, sb->org, checksum, NULL),
                                            "needs_upload", 1));
    }
    arena_free(arena);
    return rc;
}

int cookbook_sandbox_create(struct store *store, const char *org, const json_t *body,
                            const struct links *links, json_t **out, struct purser_error *err)
{
    const json_t *checksums = json_object_get(body, "checksums");
    const char *checksum;
    json_t *value;
    char *id;
    struct new_sandbox sb = {.org = org, .links = links, .checksums = checksums};
    int rc;

    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "invalid JSON");
    if (!checksums)
        return purser_error_set(err, PURSER_EINVAL, "Field 'checksums' missing");
    if (!json_is_object(checksums))
        return purser_error_set(err, PURSER_EINVAL, "Field 'checksums' invalid");
    json_object_foreach ((json_t *)checksums, checksum, value) {
        if (!checksum_ok(checksum))
            return purser_error_set(err, PURSER_EINVAL, "Invalid checksum '%.40s' in 'checksums'",
                                    checksum);
    }
    if (!(id = crypto_random_hex(16)) || !(sb.answer = json_object())) {
        free(id);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    sb.id = id;
    rc = store_txn(store, 0, txn_sandbox, &sb, err);
    if (!rc)
        *out = json_pack("{s:o, s:s, s:O}", "uri", link_url(links, LINK_SANDBOX, org, id, NULL),
                         "sandbox_id", id, "checksums", sb.answer);
    json_decref(sb.answer);
    free(id);
    return rc;
}

int cookbook_sandbox_commit(struct store *store, struct arena *arena, const char *org,
                            const char *id, const json_t *body, json_t **out,
                            struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(id)};
    struct store_rows rows;
    json_t *checksums = NULL;
    const json_t *done = json_object_get(body, "is_completed");
    int rc;

    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "invalid JSON");
    if (!json_is_true(done))
        return purser_error_set(err, PURSER_EINVAL, "Field 'is_completed' invalid");
    rc = store_query(store, arena, &rows,
                     "SELECT sc.checksum, fc.checksum IS NOT NULL, s.completed,"
                     " " STORE_ISO_TIME(
                         "s.created_at") " FROM sandboxes s JOIN organizations o ON o.id = s.org_id"
                                         " LEFT JOIN sandbox_checksums sc ON sc.sandbox_id = s.id"
                                         " LEFT JOIN file_contents fc ON fc.org_id = s.org_id AND "
                                         "fc.checksum = sc.checksum"
                                         " WHERE o.name = ? AND s.id = ? ORDER BY sc.checksum",
                     p, 2, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "No such sandbox '%s'", id);
    if (!rc)
        checksums = json_array();
    for (size_t i = 0; !rc && i < rows.count; i++) {
        if (!store_cell(&rows, i, 0))
            continue;
        if (strcmp(store_cell(&rows, i, 1), "1") != 0)
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "Cannot update sandbox %s: checksum %s was not uploaded", id,
                                  store_cell(&rows, i, 0));
        else
            json_array_append_new(checksums, json_string(store_cell(&rows, i, 0)));
    }
    if (!rc) {
        struct store_value key = STORE_STR(id);
        rc = store_exec(store, "UPDATE sandboxes SET completed = 1 WHERE id = ?", &key, 1, NULL,
                        NULL, err);
    }
    if (rc)
        json_decref(checksums);
    else /* the answer takes checksums */
        *out = json_pack("{s:s, s:s, s:o, s:s, s:b}", "guid", id, "name", id, "checksums",
                         checksums, "create_time", store_cell(&rows, 0, 3), "is_completed", 1);
    return rc;
}

/* ---- the file store ----------------------------------------------------------------------------
 */

/* Checks the content against its MD5 and stores it; with a sandbox, only a checksum an open
 * sandbox of the organization expects. */
static int file_store(struct store *store, const char *org, const char *checksum, const char *data,
                      size_t len, int from_sandbox, struct purser_error *err)
{
    struct arena *arena = arena_new();
    struct store_rows rows;
    char md5[33];
    long long oid = 0;
    int rc = arena ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");

    if (!rc && !checksum_ok(checksum))
        rc = purser_error_set(err, PURSER_EINVAL, "'%.40s' is not an MD5 checksum", checksum);
    if (!rc) {
        crypto_md5_hex(md5, data, len);
        if (strcmp(md5, checksum) != 0)
            rc = purser_error_set(err, PURSER_EINVAL,
                                  "the content's MD5 is %s, not the checksum %s", md5, checksum);
    }
    if (!rc)
        rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc && from_sandbox) {
        struct store_value p[] = {STORE_INT(oid), STORE_STR(checksum)};
        rc = store_query(
            store, arena, &rows,
            "SELECT 1 FROM sandboxes s JOIN sandbox_checksums sc ON sc.sandbox_id = s.id"
            " WHERE s.org_id = ? AND sc.checksum = ? AND s.completed = 0 LIMIT 1",
            p, 2, err);
        if (!rc && rows.count == 0)
            rc = purser_error_set(err, PURSER_ENOTFOUND, "no open sandbox expects checksum %s",
                                  checksum);
    }
    if (!rc) {
        struct store_value p[] = {STORE_INT(oid), STORE_STR(checksum), STORE_INT((long long)len),
                                  STORE_BLOB(data, len)};
        rc = store_exec(store,
                        "INSERT IGNORE INTO file_contents (org_id, checksum, size, content)"
                        " VALUES (?, ?, ?, ?)",
                        p, 4, NULL, NULL, err);
    }
    arena_free(arena);
    return rc;
}

int cookbook_file_put(struct store *store, const char *org, const char *checksum, const char *data,
                      size_t len, struct purser_error *err)
{
    return file_store(store, org, checksum, data, len, 1, err);
}

int cookbook_file_import(struct store *store, const char *org, const char *checksum,
                         const char *data, size_t len, struct purser_error *err)
{
    return file_store(store, org, checksum, data, len, 0, err);
}

int cookbook_file_get(struct store *store, struct arena *arena, const char *org,
                      const char *checksum, const char **data, size_t *len,
                      struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(checksum)};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows,
                         "SELECT fc.content FROM file_contents fc JOIN organizations o"
                         " ON o.id = fc.org_id WHERE o.name = ? AND fc.checksum = ?",
                         p, 2, err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "no file with checksum %s", checksum);
    if (!rc) {
        *data = store_cell(&rows, 0, 0);
        *len = rows.lengths[0];
    }
    return rc;
}

/* ---- cookbook artifacts ---------------------------------------------------------------------- */

int cookbook_artifact_list(struct store *store, struct arena *arena, const char *org,
                           const char *name, const struct links *links, json_t **out,
                           struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name ? name : "")};
    struct store_rows rows;
    long long oid;
    int rc = identity_org_id(store, arena, org, &oid, err);
    if (!rc)
        rc =
            store_query(store, arena, &rows,
                        name ? "SELECT a.name, a.identifier FROM cookbook_artifacts a JOIN"
                               " organizations o ON o.id = a.org_id WHERE o.name = ? AND a.name = ?"
                               " ORDER BY a.name, a.created_at, a.id"
                             : "SELECT a.name, a.identifier FROM cookbook_artifacts a JOIN"
                               " organizations o ON o.id = a.org_id WHERE o.name = ?"
                               " ORDER BY a.name, a.created_at, a.id",
                        p, name ? 2 : 1, err);
    if (!rc && name && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "Cannot find a cookbook named %s", name);
    if (!rc) {
        *out = json_object();
        for (size_t i = 0; i < rows.count; i++) {
            const char *cookbook = store_cell(&rows, i, 0);
            json_t *entry = json_object_get(*out, cookbook);
            if (!entry) {
                entry = json_pack("{s:o, s:[]}", "url",
                                  link_url(links, LINK_COOKBOOK_ARTIFACT, org, cookbook, NULL),
                                  "versions");
                json_object_set_new(*out, cookbook, entry);
            }
            json_array_append_new(json_object_get(entry, "versions"),
                                  json_pack("{s:o, s:s}", "url",
                                            link_url(links, LINK_COOKBOOK_ARTIFACT_VERSION, org,
                                                     cookbook, store_cell(&rows, i, 1)),
                                            "identifier", store_cell(&rows, i, 1)));
        }
    }
    return rc;
}

void cookbook_manifest_checksums(const json_t *manifest, json_t *set)
{
    for (size_t s = 0; s < SEGMENT_COUNT; s++) {
        size_t i;
        json_t *file;
        json_array_foreach (json_object_get(manifest, file_segments[s]), i, file) {
            const char *checksum = json_string_value(json_object_get(file, "checksum"));
            if (checksum_ok(checksum))
                json_object_set_new(set, checksum, json_true());
        }
    }
}

/* Every file entry of the manifest: checks its shape and that its content is stored (locked
 * until the transaction ends). */
static int check_files(struct store *store, struct arena *arena, long long oid, const json_t *body,
                       struct purser_error *err)
{
    int rc = 0;
    for (size_t s = 0; s < SEGMENT_COUNT && !rc; s++) {
        const json_t *files = json_object_get(body, file_segments[s]);
        size_t i;
        json_t *file;
        if (files && !json_is_array(files))
            rc = purser_error_set(err, PURSER_EINVAL, "Field '%s' invalid", file_segments[s]);
        json_array_foreach (files, i, file) { /* (none when files is not an array) */
            const char *checksum = json_string_value(json_object_get(file, "checksum"));
            int exists = 0;
            if (!json_is_object(file) || !json_is_string(json_object_get(file, "name")) ||
                !json_is_string(json_object_get(file, "path")) || !checksum_ok(checksum))
                rc = purser_error_set(err, PURSER_EINVAL, "Field '%s' invalid", file_segments[s]);
            if (!rc)
                rc = file_exists(store, arena, oid, checksum, 1, &exists, err);
            if (!rc && !exists)
                rc = purser_error_set(err, PURSER_EINVAL,
                                      "Manifest has checksum %s but it hasn't yet been uploaded",
                                      checksum);
            if (rc)
                break;
        }
    }
    return rc;
}

static int check_artifact(const json_t *body, const char *name, const char *identifier,
                          struct purser_error *err)
{
    const json_t *v;
    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "invalid JSON");
    v = json_object_get(body, "name");
    if (!json_is_string(v) || strcmp(json_string_value(v), name) != 0 || !cookbook_name_ok(name))
        return purser_error_set(err, PURSER_EINVAL, "Field 'name' invalid");
    v = json_object_get(body, "identifier");
    if (!json_is_string(v) || strcmp(json_string_value(v), identifier) != 0 ||
        !policy_name_ok(identifier))
        return purser_error_set(err, PURSER_EINVAL, "Field 'identifier' invalid");
    v = json_object_get(body, "version");
    if (!json_is_string(v) || !policy_version_ok(json_string_value(v)))
        return purser_error_set(err, PURSER_EINVAL, "Field 'version' invalid");
    return 0;
}

/* An artifact to store (txn_artifact): the manifest, its texts and who uploads it. */
struct artifact_write {
    long long oid;
    const char *name, *identifier, *sha, *text, *who;
    const json_t *body;
    int created; /* out: stored by this write (not there already, identical) */
};

/* An artifact of that name and identifier is stored: the same content is no change, other
 * content PURSER_EEXISTS. */
static int artifact_same(struct store *store, struct arena *arena, const struct artifact_write *w,
                         struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(w->oid), STORE_STR(w->name), STORE_STR(w->identifier)};
    struct store_rows rows;
    int rc = store_query(store, arena, &rows,
                         "SELECT content_sha256 FROM cookbook_artifacts"
                         " WHERE org_id = ? AND name = ? AND identifier = ?",
                         p, 3, err);
    if (!rc && (rows.count == 0 || strcmp(store_cell(&rows, 0, 0), w->sha) != 0))
        rc = purser_error_set(err, PURSER_EEXISTS,
                              "Cookbook artifact %s/%s already exists with other content", w->name,
                              w->identifier);
    return rc;
}

/* The files' check and the insert in one transaction: the files stay locked until the artifact
 * naming them is stored, so that a collection (policy_collect) never leaves it without one. */
static int txn_artifact(struct store *store, void *ctx, struct purser_error *err)
{
    struct artifact_write *w = ctx;
    struct arena *arena = arena_new();
    int rc = arena ? check_files(store, arena, w->oid, w->body, err)
                   : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    w->created = 0; /* (a transaction run again starts over) */
    if (!rc) {
        struct store_value p[] = {STORE_INT(w->oid),
                                  STORE_STR(w->name),
                                  STORE_STR(w->identifier),
                                  STORE_STR(json_string_value(json_object_get(w->body, "version"))),
                                  STORE_STR(w->sha),
                                  STORE_STR(w->text),
                                  STORE_STR(w->who)};
        rc = event_exec(store, w->who, w->oid, NULL,
                        "INSERT INTO cookbook_artifacts (org_id, name, identifier, version,"
                        " content_sha256, body, created_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        p, 7, NULL, "cookbook_artifact",
                        arena_sprintf(arena, "%s/%s", w->name, w->identifier), "put", err);
        w->created = !rc;
    }
    if (rc == PURSER_EEXISTS)
        rc = artifact_same(store, arena, w, err);
    arena_free(arena);
    return rc;
}

int cookbook_artifact_put(struct store *store, struct arena *arena, const char *org,
                          const char *name, const char *identifier, const json_t *body,
                          const char *who, int *created, json_t **out, struct purser_error *err)
{
    struct artifact_write w = {.name = name, .identifier = identifier, .who = who, .body = body};
    char sha[65], *text = NULL, *canonical = NULL;
    int rc = check_artifact(body, name, identifier, err);
    *created = 0;
    if (!rc)
        rc = identity_org_id(store, arena, org, &w.oid, err);
    if (!rc) {
        text = json_text(body, JSON_COMPACT);
        canonical = json_text(body, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text || !canonical)
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        if (!rc) {
            crypto_sha256_hex(sha, canonical, strlen(canonical));
            w.sha = sha;
            w.text = text;
            rc = store_txn(store, 0, txn_artifact, &w, err);
        }
        *created = !rc && w.created;
        if (!rc)
            *out = json_incref((json_t *)body);
        free(text);
        free(canonical);
    }
    return rc;
}

/* The stored artifact's row (id, body); PURSER_ENOTFOUND when there is none. */
static int artifact_row(struct store *store, struct arena *arena, const char *org, const char *name,
                        const char *identifier, struct store_rows *rows, struct purser_error *err)
{
    struct store_value p[] = {STORE_STR(org), STORE_STR(name), STORE_STR(identifier)};
    int rc = store_query(store, arena, rows,
                         "SELECT a.id, a.body FROM cookbook_artifacts a JOIN organizations o"
                         " ON o.id = a.org_id WHERE o.name = ? AND a.name = ? AND a.identifier = ?",
                         p, 3, err);
    if (!rc && rows->count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "Cannot find cookbook artifact %s/%s", name,
                              identifier);
    return rc;
}

int cookbook_artifact_get(struct store *store, struct arena *arena, const char *org,
                          const char *name, const char *identifier, const struct links *links,
                          json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    int rc = artifact_row(store, arena, org, name, identifier, &rows, err);
    if (!rc && !(*out = json_loads(store_cell(&rows, 0, 1), 0, NULL)))
        rc = purser_error_set(err, PURSER_EINTERNAL, "stored artifact is not JSON");
    if (!rc) {
        for (size_t s = 0; s < SEGMENT_COUNT; s++) {
            size_t i;
            json_t *file;
            json_array_foreach (json_object_get(*out, file_segments[s]), i, file) {
                json_object_set_new(file, "url",
                                    link_url(links, LINK_FILE, org,
                                             json_string_value(json_object_get(file, "checksum")),
                                             NULL));
            }
        }
    }
    return rc;
}

int cookbook_artifact_delete(struct store *store, const char *actor, struct arena *arena,
                             const char *org, const char *name, const char *identifier,
                             json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    int rc = artifact_row(store, arena, org, name, identifier, &rows, err);
    if (!rc) {
        struct store_value id = STORE_INT(atoll(store_cell(&rows, 0, 0)));
        rc = event_exec(store, actor, 0, org, "DELETE FROM cookbook_artifacts WHERE id = ?", &id, 1,
                        NULL, "cookbook_artifact", arena_sprintf(arena, "%s/%s", name, identifier),
                        "delete", err);
    }
    if (!rc)
        *out = json_loads(store_cell(&rows, 0, 1), 0, NULL);
    return rc;
}
