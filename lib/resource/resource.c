/* resource.c: the resource convention's reads and writes (resource.h). */
#include "resource/resource.h"

#include "base/crypto.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/utf8.h"
#include "codec/json_check.h"
#include "codec/merge_patch.h"
#include "resource/resource_private.h"
#include "resource/selector.h"
#include "store/events.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DESCRIPTION_MAX 1024                /* characters */
#define ANNOTATIONS_MAX ((size_t)256 << 10) /* bytes of keys and values, as Kubernetes */
#define LABELS_MAX 64

/* ---- checking what a client wrote ---- */

static int string_map(const json_t *v, const char *where, int labels, struct purser_error *err)
{
    const char *key;
    const json_t *value;
    size_t bytes = 0;
    int rc = 0;
    if (!json_is_object(v))
        return purser_error_set(err, PURSER_EINVAL, "%s must be a mapping of strings", where);
    if (labels && json_object_size(v) > LABELS_MAX)
        return purser_error_set(err, PURSER_EINVAL, "%s: more than %d labels", where, LABELS_MAX);
    json_object_foreach ((json_t *)v, key, value) {
        if (!json_is_string(value))
            rc = purser_error_set(err, PURSER_EINVAL, "%s.%.80s must be a string", where, key);
        if (!rc)
            rc = selector_label_check(where, key, labels ? json_string_value(value) : NULL, err);
        if (rc)
            break;
        bytes += strlen(key) + json_string_length(value);
    }
    if (!rc && bytes > ANNOTATIONS_MAX)
        rc =
            purser_error_set(err, PURSER_EINVAL, "%s: more than %zu bytes", where, ANNOTATIONS_MAX);
    return rc;
}

static int only_members(const json_t *obj, const char *where, const char *const *allowed,
                        struct purser_error *err)
{
    const char *key;
    const json_t *v;
    json_object_foreach ((json_t *)obj, key, v) {
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], key) != 0)
            i++;
        if (!allowed[i])
            return purser_error_set(err, PURSER_EINVAL, "%s%.80s: unknown field", where, key);
    }
    return 0;
}

/* 1 when a body's metadata.name (given) names the resource at name: the same, or the same
 * once the kind's id prefix is added, as creation adds it ("edge-1" for "c-edge-1"). */
static int same_name(const struct resource_kind *k, const char *given, const char *name)
{
    size_t n = k->id_prefix ? strlen(k->id_prefix) : 0;
    if (!given)
        return 0;
    if (!strcmp(given, name))
        return 1;
    return n && !strncmp(name, k->id_prefix, n) && strncmp(given, k->id_prefix, n) != 0 &&
           !strcmp(given, name + n);
}

/* Strict checks of a written resource; name: what metadata.name must be when given. */
static int check_body(const struct resource_kind *k, const json_t *body, const char *name,
                      struct purser_error *err)
{
    static const char *const top[] = {"kind", "version", "metadata", "spec", "status", NULL};
    static const char *const meta[] = {"name",     "labels",     "annotations", "description",
                                       "revision", "created_at", "updated_at",  "sub_kind",
                                       "expires",  NULL};
    const json_t *md = json_object_get(body, "metadata"), *v;
    int rc;
    if (!json_is_object(body))
        return purser_error_set(err, PURSER_EINVAL, "the body must be a JSON object");
    rc = only_members(body, "", top, err);
    if (!rc && (v = json_object_get(body, "kind")) &&
        !(json_is_string(v) && !strcmp(json_string_value(v), k->kind)))
        rc = purser_error_set(err, PURSER_EINVAL, "kind must be '%s'", k->kind);
    if (!rc && (v = json_object_get(body, "version")) &&
        !(json_is_string(v) && !strcmp(json_string_value(v), k->version)))
        rc = purser_error_set(err, PURSER_EINVAL, "version must be '%s'", k->version);
    if (!rc && md && !json_is_object(md))
        rc = purser_error_set(err, PURSER_EINVAL, "metadata must be an object");
    if (!rc && md)
        rc = only_members(md, "metadata.", meta, err);
    if (!rc && name && (v = json_object_get(md, "name")) &&
        !same_name(k, json_string_value(v), name))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "metadata.name must be '%s', the name in the path (a resource "
                              "is not renamed)",
                              name);
    if (!rc && (v = json_object_get(md, "labels")))
        rc = string_map(v, "metadata.labels", 1, err);
    if (!rc && (v = json_object_get(md, "annotations")))
        rc = string_map(v, "metadata.annotations", 0, err);
    if (!rc && (v = json_object_get(md, "description")) &&
        (!json_is_string(v) ||
         utf8_count(json_string_value(v), json_string_length(v)) > DESCRIPTION_MAX))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "metadata.description must be a string of at most %d characters",
                              DESCRIPTION_MAX);
    if (!rc && (v = json_object_get(md, "revision")) && !json_is_string(v))
        rc = purser_error_set(err, PURSER_EINVAL, "metadata.revision must be a string");
    if (!rc && (v = json_object_get(md, "sub_kind")) && !json_is_null(v))
        rc = resource_sub_kind_check("metadata.sub_kind", v, err);
    if (!rc && (v = json_object_get(md, "expires")) && !json_is_null(v)) {
        char when[20];
        rc = resource_expires_parse("metadata.expires", json_string_value(v), when, NULL, err);
    }
    if (!rc && (v = json_object_get(body, "spec")) && !json_is_object(v))
        rc = purser_error_set(err, PURSER_EINVAL, "spec must be an object");
    if (!rc && k->check_spec && v) {
        rc = k->check_spec(v, err);
    } else if (!rc && k->check_spec) {
        json_t *empty = json_object();
        rc = k->check_spec(empty, err);
        json_decref(empty);
    }
    return rc;
}

/* What is stored of a checked body: labels, annotations and spec as compact JSON, the
 * description, sub_kind (or NULL) and the expiry (a DATETIME parameter, "" for none; expires
 * the time). */
struct stored {
    char *labels, *annotations, *spec;
    const char *description, *sub_kind;
    char expiry[20];
    long long expires;
};

static int stored_of(const json_t *body, struct stored *st)
{
    const json_t *md = json_object_get(body, "metadata");
    const json_t *desc = json_object_get(md, "description");
    const json_t *expires = json_object_get(md, "expires");
    json_t *empty = json_object();
    st->sub_kind = json_string_value(json_object_get(md, "sub_kind"));
    st->expiry[0] = '\0';
    if (json_is_string(expires)) /* checked: it parses */
        resource_expires_parse("metadata.expires", json_string_value(expires), st->expiry,
                               &st->expires, NULL);
    st->labels = json_text(json_object_get(md, "labels") ? json_object_get(md, "labels") : empty,
                           JSON_COMPACT | JSON_PRESERVE_ORDER);
    st->annotations =
        json_text(json_object_get(md, "annotations") ? json_object_get(md, "annotations") : empty,
                  JSON_COMPACT | JSON_PRESERVE_ORDER);
    st->spec = json_text(json_object_get(body, "spec") ? json_object_get(body, "spec") : empty,
                         JSON_COMPACT | JSON_PRESERVE_ORDER);
    st->description = desc ? json_string_value(desc) : "";
    json_decref(empty);
    return st->labels && st->annotations && st->spec ? 0 : -1;
}

static void stored_free(struct stored *st)
{
    free(st->labels);
    free(st->annotations);
    free(st->spec);
}

/* The kind's title column: spec.<title> as text, cut to the column's 255 characters. */
static char *title_of(const struct resource_kind *k, struct arena *arena, const json_t *body)
{
    const json_t *t = k->title ? json_object_get(json_object_get(body, "spec"), k->title) : NULL;
    if (!json_is_string(t))
        return "";
    return arena_strndup(arena, json_string_value(t),
                         utf8_prefix_chars(json_string_value(t), json_string_length(t), 255));
}

static int not_found(const struct resource_kind *k, const char *name, struct purser_error *err)
{
    return purser_error_set(err, PURSER_ENOTFOUND, "%s '%s' was not found", k->kind, name);
}

/* The row of name (locked for update when lock), into rows. */
static int read_row(const struct resource_kind *k, const struct resource_scope *s,
                    struct store *store, const char *name, int lock, struct store_rows *rows,
                    struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(s->org_id), STORE_STR(k->stored), STORE_STR(name)};
    int rc =
        store_query(store, s->arena, rows,
                    lock ? "SELECT " RESOURCE_COLUMNS " FROM resources r WHERE r.org_id = ? AND "
                           "r.kind = ? AND r.name = ?" RESOURCE_LIVE " FOR UPDATE"
                         : "SELECT " RESOURCE_COLUMNS " FROM resources r WHERE r.org_id = ? AND "
                           "r.kind = ? AND r.name = ?" RESOURCE_LIVE,
                    p, 3, err);
    if (!rc && rows->count == 0)
        rc = not_found(k, name, err);
    return rc;
}

static int read_by_id(const struct resource_kind *k, const struct resource_scope *s,
                      struct store *store, long long id, json_t **out, struct purser_error *err)
{
    struct store_rows rows;
    struct store_value p = STORE_INT(id);
    int rc = store_query(store, s->arena, &rows,
                         "SELECT " RESOURCE_COLUMNS " FROM resources r WHERE r.id = ?", &p, 1, err);
    if (!rc && (rows.count == 0 || !(*out = resource_decode(k, &rows, 0))))
        rc = purser_error_set(err, PURSER_EINTERNAL, "the %s just written cannot be read", k->kind);
    return rc;
}

/* What a 404 found expired goes, its own failure logged (the 404 stands). */
static void expire_quietly(const struct resource_kind *k, const struct resource_scope *s,
                           const char *name)
{
    struct purser_error ignored;
    resource_expire(k, s, name, &ignored);
}

int resource_get(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                 json_t **out, long long *id, struct purser_error *err)
{
    struct store_rows rows;
    int rc = read_row(k, s, s->store, name, 0, &rows, err);
    *out = NULL;
    if (rc == PURSER_ENOTFOUND) /* an expired one is deleted now, with its event */
        expire_quietly(k, s, name);
    if (!rc && !(*out = resource_decode(k, &rows, 0)))
        rc = purser_error_set(err, PURSER_EINTERNAL,
                              "%s '%s' is stored in a form that no longer decodes", k->kind, name);
    if (!rc) {
        if (id)
            *id = strtoll(store_cell(&rows, 0, C_ID), NULL, 10);
    }
    return rc;
}

/* ---- writing ---- */

static int write_labels(const struct resource_kind *k, const struct resource_scope *s,
                        struct store *store, long long id, const char *name, const json_t *body,
                        int replace, struct purser_error *err)
{
    const json_t *labels = json_object_get(json_object_get(body, "metadata"), "labels");
    struct store_value p = STORE_INT(id);
    const char *key;
    const json_t *v;
    int rc = replace ? store_exec(store, "DELETE FROM resource_labels WHERE resource_id = ?", &p, 1,
                                  NULL, NULL, err)
                     : 0;
    json_object_foreach ((json_t *)labels, key, v) {
        struct store_value q[] = {STORE_INT(id),        STORE_INT(s->org_id),
                                  STORE_STR(k->stored), STORE_STR(name),
                                  STORE_STR(key),       STORE_STR(json_string_value(v))};
        if (rc)
            break;
        rc =
            store_exec(store,
                       "INSERT INTO resource_labels (resource_id, org_id, kind, name, lkey, lvalue)"
                       " VALUES (?, ?, ?, ?, ?, ?)",
                       q, 6, NULL, NULL, err);
    }
    return rc;
}

struct write {
    const struct resource_kind *k;
    const struct resource_scope *s;
    const char *name, *if_match;
    const json_t *body;     /* create, replace: the body; patch: the patch; status: the members */
    const json_t *status;   /* create: the status the server starts it with, or NULL */
    int op;                 /* 'c'reate, 'r'eplace, 'p'atch, 'd'elete, 's'tatus */
    const char *event_kind; /* the event's kind (NULL: the resource's) */
    resource_hook hook;
    void *hook_ctx;
    const char *expires; /* replace, patch: the expiry stored (ISO), or NULL */
    json_t *out;
};

/* The precondition of a write: if_match, else the body's metadata.revision; required says
 * whether a write without one is refused. */
static int precondition(const struct write *w, const char *current, int required,
                        struct purser_error *err)
{
    const char *given = w->if_match;
    if (!given && (w->op == 'r' || w->op == 'p')) /* a status value's members are not ours */
        given =
            json_string_value(json_object_get(json_object_get(w->body, "metadata"), "revision"));
    return resource_precondition(w->s->arena, w->k->kind, w->name, given, current, required, err);
}

/* A written expiry must be in the future, unless it is the one stored (current, or NULL). */
static int expiry_check(const struct stored *st, const char *current, struct purser_error *err)
{
    char stored[20];
    if (!st->expiry[0] || st->expires > (long long)time(NULL))
        return 0;
    if (current && !resource_expires_parse("", current, stored, NULL, NULL) &&
        strcmp(stored, st->expiry) == 0)
        return 0;
    return purser_error_set(err, PURSER_EINVAL, "metadata.expires: %s UTC is in the past",
                            st->expiry);
}

static int update_row(struct write *w, struct store *store, long long id, const json_t *body,
                      const char *status_text, struct purser_error *err)
{
    struct stored st = {0};
    char *rev = crypto_random_hex(8);
    int rc;
    if ((body && stored_of(body, &st)) || !rev) {
        stored_free(&st);
        free(rev);
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    if (body && (rc = expiry_check(&st, w->expires, err))) {
        stored_free(&st);
        free(rev);
        return rc;
    }
    if (body) {
        struct store_value p[] = {STORE_STR(rev),
                                  STORE_STR(title_of(w->k, w->s->arena, body)),
                                  STORE_STR(st.labels),
                                  STORE_STR(st.annotations),
                                  STORE_STR(st.description),
                                  STORE_STR(st.spec),
                                  st.sub_kind ? STORE_STR(st.sub_kind) : STORE_NULLV,
                                  st.expiry[0] ? STORE_STR(st.expiry) : STORE_NULLV,
                                  STORE_INT(id)};
        rc = store_exec(store,
                        "UPDATE resources SET revision = ?, title = ?, labels = ?, annotations = ?,"
                        " description = ?, spec = ?, sub_kind = ?, expires_at = ?, updated_at ="
                        " NOW(6) WHERE id = ?",
                        p, 9, NULL, NULL, err);
        if (!rc)
            rc = write_labels(w->k, w->s, store, id, w->name, body, 1, err);
    } else {
        struct store_value p[] = {STORE_STR(rev), STORE_STR(status_text), STORE_INT(id)};
        rc = store_exec(store,
                        "UPDATE resources SET revision = ?, status = ?, updated_at = NOW(6) WHERE "
                        "id = ?",
                        p, 3, NULL, NULL, err);
    }
    stored_free(&st);
    free(rev);
    return rc;
}

static int create_in(struct store *store, struct write *w, struct purser_error *err)
{
    struct stored st = {0};
    char *rev = crypto_random_hex(8);
    char *status = w->status ? json_text(w->status, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    unsigned long long id = 0;
    int rc;
    if (stored_of(w->body, &st) || !rev || (w->status && !status)) {
        rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    } else if (!(rc = expiry_check(&st, NULL, err)) &&
               !(rc = resource_expire_in(store, w->k, w->s, w->name, err))) {
        struct store_value p[] = {STORE_INT(w->s->org_id),
                                  STORE_STR(w->k->stored),
                                  STORE_STR(w->name),
                                  STORE_STR(rev),
                                  STORE_STR(title_of(w->k, w->s->arena, w->body)),
                                  STORE_STR(st.labels),
                                  STORE_STR(st.annotations),
                                  STORE_STR(st.description),
                                  STORE_STR(st.spec),
                                  status ? STORE_STR(status) : STORE_NULLV,
                                  st.sub_kind ? STORE_STR(st.sub_kind) : STORE_NULLV,
                                  st.expiry[0] ? STORE_STR(st.expiry) : STORE_NULLV};
        rc = store_exec(store,
                        "INSERT INTO resources (org_id, kind, name, revision, title, labels, "
                        "annotations, description, spec, status, sub_kind, expires_at, "
                        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "NOW(6), NOW(6))",
                        p, 12, NULL, &id, err);
        if (rc == PURSER_EEXISTS)
            rc = purser_error_set(err, PURSER_EEXISTS, "%s '%s' already exists", w->k->kind,
                                  w->name);
    }
    stored_free(&st);
    free(rev);
    free(status);
    if (!rc)
        rc = write_labels(w->k, w->s, store, (long long)id, w->name, w->body, 0, err);
    if (!rc && w->hook)
        rc = w->hook(store, (long long)id, w->hook_ctx, err);
    if (!rc)
        rc = read_by_id(w->k, w->s, store, (long long)id, &w->out, err);
    return rc;
}

static int write_change(struct store *store, struct write *w, struct purser_error *err);

/* One write and its event in one transaction (run again whole on a deadlock). */
static int write_txn(struct store *store, void *ctx, struct purser_error *err)
{
    struct write *w = ctx;
    int rc = write_change(store, w, err);
    if (!rc) {
        const char *rev =
            json_string_value(json_object_get(json_object_get(w->out, "metadata"), "revision"));
        rc = event_append(store, w->s->actor, w->s->org_id,
                          w->event_kind ? w->event_kind : w->k->stored, w->name,
                          w->op == 'd' ? "delete" : "put", rev, NULL, err);
    }
    return rc;
}

/* A replace, patch or status write of the row read (rows, id); w->out the resource after it. */
static int change_row(struct store *store, struct write *w, const struct store_rows *rows,
                      long long id, struct purser_error *err)
{
    json_t *current = resource_decode(w->k, rows, 0), *target = NULL;
    int rc = 0;
    if (!current && w->op != 'r')
        rc = purser_error_set(err, PURSER_EINTERNAL,
                              "%s '%s' is stored in a form that no longer decodes; replace it "
                              "with PUT",
                              w->k->kind, w->name);
    else if (w->op == 's') { /* each member given replaces the status member of its name */
        json_t *status = json_object_get(current, "status");
        char *text;
        json_object_update(status, (json_t *)w->body);
        text = json_text(status, JSON_COMPACT | JSON_PRESERVE_ORDER);
        rc = text ? update_row(w, store, id, NULL, text, err)
                  : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        free(text);
        if (!rc && w->hook)
            rc = w->hook(store, id, w->hook_ctx, err);
    } else {
        if (w->op == 'p') {
            json_t *patch = json_deep_copy(w->body);
            json_t *md = json_object_get(patch, "metadata");
            json_object_del(md, "revision"); /* a precondition, not a change */
            target = merge_patch(current, patch);
            json_decref(patch);
            if (!target)
                rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        } else {
            target = json_incref((json_t *)w->body);
        }
        if (!rc)
            rc = check_body(w->k, target, w->name, err);
        if (!rc)
            rc = update_row(w, store, id, target, NULL, err);
        if (!rc && w->k->on_write)
            rc = w->k->on_write(store, id, err);
        if (!rc && !current) { /* a replace repairs a row that no longer decodes: status too */
            struct store_value p = STORE_INT(id);
            rc = store_exec(store,
                            "UPDATE resources SET status = NULL WHERE id = ? AND NOT "
                            "JSON_VALID(COALESCE(status, '{}'))",
                            &p, 1, NULL, NULL, err);
        }
    }
    json_decref(current);
    json_decref(target);
    if (!rc)
        rc = read_by_id(w->k, w->s, store, id, &w->out, err);
    return rc;
}

/* The write itself. */
static int write_change(struct store *store, struct write *w, struct purser_error *err)
{
    struct store_rows rows;
    long long id;
    const char *revision;
    int rc;

    json_decref(w->out);
    w->out = NULL;
    if (w->op == 'c')
        return create_in(store, w, err);
    rc = read_row(w->k, w->s, store, w->name, 1, &rows, err);
    if (!rc) {
        id = strtoll(store_cell(&rows, 0, C_ID), NULL, 10);
        revision = store_cell(&rows, 0, C_REVISION);
        {
            char expires[21];
            w->expires = arena_strdup(w->s->arena, resource_time(&rows, 0, C_EXPIRES, expires));
        }
        rc = precondition(w, revision, w->op == 'r' || w->op == 'p', err);
    }
    if (!rc && w->op == 'd') { /* the kind's own rows first: its hook may read the row */
        struct store_value p = STORE_INT(id);
        rc = w->k->on_delete ? w->k->on_delete(store, id, w->s, err) : 0;
        if (!rc)
            rc = store_exec(store, "DELETE FROM resources WHERE id = ?", &p, 1, NULL, NULL, err);
    } else if (!rc) {
        rc = change_row(store, w, &rows, id, err);
    }
    return rc;
}

static int run(struct write *w, json_t **out, struct purser_error *err)
{
    int rc = store_txn(w->s->store, 0, write_txn, w, err);
    if (rc == PURSER_ENOTFOUND) /* an expired one is deleted now, with its event */
        expire_quietly(w->k, w->s, w->name);
    if (rc) {
        json_decref(w->out);
        w->out = NULL;
    }
    if (out)
        *out = w->out;
    else
        json_decref(w->out);
    return rc;
}

int resource_create(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                    const json_t *body, const json_t *status, resource_hook hook, void *hook_ctx,
                    json_t **out, struct purser_error *err)
{
    struct write w = {.k = k,
                      .s = s,
                      .name = name,
                      .body = body,
                      .status = status,
                      .op = 'c',
                      .hook = hook,
                      .hook_ctx = hook_ctx};
    int rc = check_body(k, body, name, err);
    *out = NULL;
    if (!rc)
        rc = run(&w, out, err);
    return rc;
}

int resource_replace(const struct resource_kind *k, const struct resource_scope *s,
                     const char *name, const json_t *body, const char *if_match, json_t **out,
                     struct purser_error *err)
{
    struct write w = {.k = k, .s = s, .name = name, .body = body, .op = 'r', .if_match = if_match};
    int rc = check_body(k, body, name, err);
    *out = NULL;
    if (!rc)
        rc = run(&w, out, err);
    return rc;
}

int resource_patch(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                   const json_t *patch, const char *if_match, json_t **out,
                   struct purser_error *err)
{
    struct write w = {.k = k, .s = s, .name = name, .body = patch, .op = 'p', .if_match = if_match};
    *out = NULL;
    if (!json_is_object(patch))
        return purser_error_set(err, PURSER_EINVAL, "a merge patch must be a JSON object");
    return run(&w, out, err);
}

int resource_owner_check(const struct resource_kind *k, const json_t *resource, long long owner,
                         const char *action, struct purser_error *err)
{
    const json_t *client = json_object_get(json_object_get(resource, "status"), "client_id");
    if (!owner || (json_is_integer(client) && json_integer_value(client) == owner))
        return 0;
    return purser_error_set(
        err, PURSER_EDENIED, "missing %s permission on %s %s", action, k->stored,
        json_string_value(json_object_get(json_object_get(resource, "metadata"), "name")));
}

int resource_delete(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                    const char *if_match, struct purser_error *err)
{
    struct write w = {.k = k, .s = s, .name = name, .op = 'd', .if_match = if_match};
    return run(&w, NULL, err);
}

int resource_set_status(const struct resource_kind *k, const struct resource_scope *s,
                        const char *name, const json_t *members, const char *event_kind,
                        resource_hook hook, void *hook_ctx, json_t **out, struct purser_error *err)
{
    struct write w = {.k = k,
                      .s = s,
                      .name = name,
                      .body = members,
                      .op = 's',
                      .event_kind = event_kind,
                      .hook = hook,
                      .hook_ctx = hook_ctx};
    *out = NULL;
    return run(&w, out, err);
}

int resource_set_status_in(const struct resource_kind *k, const struct resource_scope *s,
                           const char *name, const json_t *members, const char *event_kind,
                           struct purser_error *err)
{
    struct write w = {
        .k = k, .s = s, .name = name, .body = members, .op = 's', .event_kind = event_kind};
    int rc = write_txn(s->store, &w, err);
    json_decref(w.out);
    return rc;
}

int resource_kinds_register(const struct resource_kind *const *kinds, size_t count)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < count; i++)
        if (kinds[i]->events)
            rc = event_kinds_register(kinds[i]->events);
    return rc;
}

json_t *resource_export_doc(const struct resource_kind *k, const json_t *resource)
{
    static const char *const fields[] = {"labels", "annotations", "description", "sub_kind",
                                         "expires"};
    const json_t *meta = json_object_get(resource, "metadata");
    json_t *doc = json_pack("{s:s, s:s, s:{s:s?}, s:O}", "kind", k->export_kind, "version", "v1",
                            "metadata", "name", json_string_value(json_object_get(meta, "name")),
                            "spec", json_object_get(resource, "spec"));
    for (size_t i = 0; doc && i < sizeof(fields) / sizeof(fields[0]); i++)
        if (json_object_get(meta, fields[i]))
            json_object_set(json_object_get(doc, "metadata"), fields[i],
                            json_object_get(meta, fields[i]));
    return doc;
}
