/* policy_collect.c: collection of an organization's policy revisions, the cookbook artifacts no
 * remaining revision names and the files only those artifacts used (POST collect_policies and
 * `purser gc-policies`, one code for both). */
#include "policy/policy.h"
#include "policy/policy_private.h"

#include "auth/identity.h"
#include "policy/cookbook.h"
#include "policy/policy_lock.h"
#include "store/events.h"

#include <stdlib.h>
#include <string.h>

#define KEEP_MAX 1000000

/* ---- the request ---------------------------------------------------------------------------- */

static int field_known(const char *key)
{
    return !strcmp(key, "keep") || !strcmp(key, "dry_run") || !strcmp(key, "policies");
}

static int policies_check(const json_t *policies, struct purser_error *err)
{
    size_t i;
    json_t *name;
    if (!json_is_array(policies))
        return purser_error_set(err, PURSER_EINVAL, "Field 'policies' invalid: a list of names");
    json_array_foreach (policies, i, name) {
        if (!json_is_string(name) || !policy_name_ok(json_string_value(name)))
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field 'policies' invalid: item %zu is not a policy name", i);
    }
    return 0;
}

int policy_collect_parse(const json_t *body, struct policy_collect_options *out,
                         struct purser_error *err)
{
    const json_t *keep = json_object_get(body, "keep"), *dry_run = json_object_get(body, "dry_run");
    const json_t *policies = json_object_get(body, "policies");
    const char *key;
    json_t *value;
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL,
                                "the body must be a JSON object: {\"keep\": N, \"dry_run\": "
                                "true|false, \"policies\": [names]}");
    json_object_foreach ((json_t *)body, key, value) {
        if (!field_known(key))
            return purser_error_set(err, PURSER_EINVAL,
                                    "Field '%.80s' is not known (keep, dry_run, policies)", key);
    }
    if (!keep)
        return purser_error_set(err, PURSER_EINVAL, "Field 'keep' missing");
    if (!json_is_integer(keep) || json_integer_value(keep) < 0 ||
        json_integer_value(keep) > KEEP_MAX)
        return purser_error_set(err, PURSER_EINVAL, "Field 'keep' invalid: an integer from 0 to %d",
                                KEEP_MAX);
    if (dry_run && !json_is_boolean(dry_run))
        return purser_error_set(err, PURSER_EINVAL, "Field 'dry_run' invalid: true or false");
    if (policies && !json_is_null(policies))
        rc = policies_check(policies, err);
    if (!rc) {
        out->keep = (long)json_integer_value(keep);
        out->dry_run = json_is_true(dry_run);
        out->policies = json_is_array(policies) ? policies : NULL;
    }
    return rc;
}

/* ---- one collection, one transaction ------------------------------------------------------- */

struct collection {
    const char *actor; /* who collects (the events') */
    const char *org;
    const struct policy_collect_options *opts;
    long long oid;
    struct arena *arena;
    json_t *revisions, *artifacts, *files; /* the answer's lists */
    json_t *skipped;                       /* revision ids gone (or, dry, going): {id: true} */
    json_t *used;                          /* "cookbook/identifier" the remaining locks name */
    json_t *kept_files, *loose_files;      /* checksums of kept artifacts, of those going */
};

/* Every policy opts->policies names exists, or PURSER_ENOTFOUND and nothing goes. */
static int policies_exist(struct store *store, struct collection *c, struct purser_error *err)
{
    size_t i;
    json_t *name;
    int rc = 0;
    json_array_foreach (c->opts->policies, i, name) {
        struct store_value p[] = {STORE_INT(c->oid), STORE_STR(json_string_value(name))};
        struct store_rows rows;
        rc = store_query(store, c->arena, &rows,
                         "SELECT 1 FROM policies WHERE org_id = ? AND name = ?", p, 2, err);
        if (!rc && rows.count == 0)
            rc = policy_not_found(err, "policy", json_string_value(name));
        if (rc)
            break;
    }
    return rc;
}

static int policy_chosen(const struct collection *c, const char *policy)
{
    size_t i;
    json_t *name;
    if (!c->opts->policies)
        return 1;
    json_array_foreach (c->opts->policies, i, name) {
        if (!strcmp(json_string_value(name), policy))
            return 1;
    }
    return 0;
}

/* The revisions no group points at past the newest `keep` of their policy, oldest first: each
 * deleted (only if still unpointed: a group may have moved onto it meanwhile) with its event,
 * as the API's delete writes one. */
static int collect_revisions(struct store *store, struct collection *c, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(c->oid), STORE_INT(c->opts->keep)};
    struct store_rows rows;
    int rc = store_query(
        store, c->arena, &rows,
        "SELECT id, policy, revision_id FROM ("
        " SELECT r.id, p.name AS policy, r.revision_id,"
        "  ROW_NUMBER() OVER (PARTITION BY r.policy_id ORDER BY r.created_at DESC, r.id DESC) AS n,"
        "  EXISTS (SELECT 1 FROM policy_group_pointers pp WHERE pp.revision_pk = r.id) AS pointed"
        " FROM policy_revisions r JOIN policies p ON p.id = r.policy_id WHERE p.org_id = ?) ranked"
        " WHERE n > ? AND NOT pointed ORDER BY policy, n DESC",
        p, 2, err);
    for (size_t i = 0; !rc && i < rows.count; i++) {
        const char *id = store_cell(&rows, i, 0), *policy = store_cell(&rows, i, 1);
        const char *revision = store_cell(&rows, i, 2);
        struct store_value key = STORE_INT(atoll(id));
        unsigned long long affected = 1;
        if (!policy_chosen(c, policy))
            continue;
        if (!c->opts->dry_run)
            rc = event_exec(store, c->actor, c->oid, NULL,
                            "DELETE FROM policy_revisions WHERE id = ? AND NOT EXISTS (SELECT 1"
                            " FROM policy_group_pointers pp WHERE pp.revision_pk ="
                            " policy_revisions.id)",
                            &key, 1, &affected, "policy_revision",
                            arena_sprintf(c->arena, "%s/%s", policy, revision), "delete", err);
        if (!rc && affected) {
            json_object_set_new(c->skipped, id, json_true());
            json_array_append_new(
                c->revisions, json_pack("{s:s, s:s}", "policy", policy, "revision_id", revision));
        }
    }
    return rc;
}

/* store_query_each: notes the cookbooks a remaining revision's lock names (row: id, body). */
static int note_locks(void *ctx, const struct store_rows *row, struct purser_error *err)
{
    struct collection *c = ctx;
    const char *cookbook;
    json_t *lock, *entry;
    if (json_object_get(c->skipped, store_cell(row, 0, 0)))
        return 0;
    if (!(lock = policy_parse_stored(store_cell(row, 0, 1))))
        return purser_error_set(err, PURSER_EINTERNAL, "stored revision %s is not JSON",
                                store_cell(row, 0, 0));
    json_object_foreach (json_object_get(lock, "cookbook_locks"), cookbook, entry) {
        const char *identifier = json_string_value(json_object_get(entry, "identifier"));
        if (identifier)
            json_object_set_new(c->used, arena_sprintf(c->arena, "%s/%s", cookbook, identifier),
                                json_true());
    }
    json_decref(lock);
    return 0;
}

/* store_query_each: sorts each artifact (row: id, name, identifier, body) into kept (a lock
 * names it) or going, with the checksums of its files. */
static int sort_artifact(void *ctx, const struct store_rows *row, struct purser_error *err)
{
    struct collection *c = ctx;
    const char *name = store_cell(row, 0, 1), *identifier = store_cell(row, 0, 2);
    int kept = json_object_get(c->used, arena_sprintf(c->arena, "%s/%s", name, identifier)) != NULL;
    json_t *manifest = json_loads(store_cell(row, 0, 3), 0, NULL);
    if (!manifest)
        return purser_error_set(err, PURSER_EINTERNAL, "stored artifact %s/%s is not JSON", name,
                                identifier);
    cookbook_manifest_checksums(manifest, kept ? c->kept_files : c->loose_files);
    json_decref(manifest);
    if (!kept)
        json_array_append_new(c->artifacts, json_pack("{s:s, s:s, s:s}", "name", name, "identifier",
                                                      identifier, "id", store_cell(row, 0, 0)));
    return 0;
}

/* Deletes the artifacts sort_artifact found going, each with its event as the API's delete
 * writes one (not in a dry run), and drops their ids from the answer. */
static int delete_artifacts(struct store *store, struct collection *c, struct purser_error *err)
{
    size_t i;
    json_t *artifact;
    int rc = 0;
    json_array_foreach (c->artifacts, i, artifact) {
        const char *name = json_string_value(json_object_get(artifact, "name"));
        const char *identifier = json_string_value(json_object_get(artifact, "identifier"));
        struct store_value id =
            STORE_INT(atoll(json_string_value(json_object_get(artifact, "id"))));
        if (!rc && !c->opts->dry_run)
            rc = event_exec(store, c->actor, c->oid, NULL,
                            "DELETE FROM cookbook_artifacts WHERE id = ?", &id, 1, NULL,
                            "cookbook_artifact", arena_sprintf(c->arena, "%s/%s", name, identifier),
                            "delete", err);
        json_object_del(artifact, "id");
    }
    return rc;
}

/* The artifacts no remaining revision names. Every lock and every artifact is read with a
 * shared lock: what committed meanwhile is seen, and a revision or artifact that would commit
 * now waits until this transaction ends. */
static int collect_artifacts(struct store *store, struct collection *c, struct purser_error *err)
{
    struct store_value oid = STORE_INT(c->oid);
    int rc = store_query_each(store,
                              "SELECT r.id, r.body FROM policy_revisions r JOIN policies p"
                              " ON p.id = r.policy_id WHERE p.org_id = ? LOCK IN SHARE MODE",
                              &oid, 1, note_locks, c, err);
    if (!rc)
        rc = store_query_each(store,
                              "SELECT id, name, identifier, body FROM cookbook_artifacts"
                              " WHERE org_id = ? ORDER BY name, created_at, id LOCK IN SHARE MODE",
                              &oid, 1, sort_artifact, c, err);
    if (!rc)
        rc = delete_artifacts(store, c, err);
    return rc;
}

/* A stored file of the organization that no open sandbox lists: a push under way may have
 * been told it need not upload it. */
#define LOOSE_FILE                                                                                 \
    " FROM file_contents WHERE org_id = ? AND checksum = ? AND NOT EXISTS (SELECT 1 FROM"          \
    " sandboxes s JOIN sandbox_checksums sc ON sc.sandbox_id = s.id WHERE s.org_id ="              \
    " file_contents.org_id AND sc.checksum = file_contents.checksum AND s.completed = 0)"

/* The files only the artifacts going used: no kept artifact lists them (an artifact stored
 * meanwhile waited for this transaction: cookbook_artifact_put locks its files). Files have no
 * event, as their uploads have none. */
static int collect_files(struct store *store, struct collection *c, struct purser_error *err)
{
    const char *checksum;
    json_t *ignored;
    int rc = 0;
    json_object_foreach (c->loose_files, checksum, ignored) {
        struct store_value p[] = {STORE_INT(c->oid), STORE_STR(checksum)};
        struct store_rows rows;
        unsigned long long affected = 0;
        if (rc || json_object_get(c->kept_files, checksum))
            continue;
        if (c->opts->dry_run) {
            rc = store_query(store, c->arena, &rows, "SELECT 1" LOOSE_FILE, p, 2, err);
            affected = !rc && rows.count > 0;
        } else {
            rc = store_exec(store, "DELETE" LOOSE_FILE, p, 2, &affected, NULL, err);
        }
        if (!rc && affected)
            json_array_append_new(c->files, json_string(checksum));
    }
    return rc;
}

static int txn_collect(struct store *store, void *ctx, struct purser_error *err)
{
    struct collection *c = ctx;
    int rc;
    /* (a transaction run again starts over) */
    json_array_clear(c->revisions);
    json_array_clear(c->artifacts);
    json_array_clear(c->files);
    json_object_clear(c->skipped);
    json_object_clear(c->used);
    json_object_clear(c->kept_files);
    json_object_clear(c->loose_files);
    rc = identity_org_id(store, c->arena, c->org, &c->oid, err);
    if (!rc)
        rc = policies_exist(store, c, err);
    if (!rc)
        rc = collect_revisions(store, c, err);
    if (!rc)
        rc = collect_artifacts(store, c, err);
    if (!rc)
        rc = collect_files(store, c, err);
    return rc;
}

int policy_collect(struct store *store, const char *actor, const char *org,
                   const struct policy_collect_options *opts, json_t **out,
                   struct purser_error *err)
{
    struct collection c = {.actor = actor, .org = org, .opts = opts};
    int rc;
    c.arena = arena_new();
    c.revisions = json_array();
    c.artifacts = json_array();
    c.files = json_array();
    c.skipped = json_object();
    c.used = json_object();
    c.kept_files = json_object();
    c.loose_files = json_object();
    if (!c.arena || !c.revisions || !c.artifacts || !c.files || !c.skipped || !c.used ||
        !c.kept_files || !c.loose_files) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        goto cleanup;
    }
    rc = store_txn(store, 0, txn_collect, &c, err);
    if (!rc)
        *out = json_pack("{s:I, s:b, s:O, s:O, s:O}", "keep", (json_int_t)opts->keep, "dry_run",
                         opts->dry_run, "revisions", c.revisions, "cookbook_artifacts", c.artifacts,
                         "files", c.files);
cleanup:
    arena_free(c.arena);
    json_decref(c.revisions);
    json_decref(c.artifacts);
    json_decref(c.files);
    json_decref(c.skipped);
    json_decref(c.used);
    json_decref(c.kept_files);
    json_decref(c.loose_files);
    return rc;
}

int policy_collect_organizations(struct store *store, struct arena *arena, struct store_rows *out,
                                 struct purser_error *err)
{
    return store_query(store, arena, out, "SELECT name FROM organizations ORDER BY name", NULL, 0,
                       err);
}
