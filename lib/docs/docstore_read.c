/* docstore_read.c: reading the document store: a revision's documents with Deckhand's
 * filters, revisions with their tags and ValidationPolicy status, tags (validations:
 * docstore_validations.c; diffs: docstore_diff.c). */
#include "docs/docstore_private.h"
#include "store/events.h"

#include "base/buf.h"
#include "base/crypto.h"
#include "base/json_text.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *docstore_url_of(const struct docstore_ctx *ctx, long long id, const char *what,
                            const char *name)
{
    char digits[24];
    char *url = arena_concat(ctx->arena, ctx->base_url ? ctx->base_url : "", "/revisions/",
                             decimal_text(digits, id < 0 ? 0 : (unsigned long long)id), what, name,
                             (const char *)NULL);
    return url ? url : "";
}

int docstore_listing(json_t *results, json_t **out, struct purser_error *err)
{
    *out = results
               ? json_pack("{s:I, s:n, s:n, s:o}", "count", (json_int_t)json_array_size(results),
                           "next", "prev", "results", results)
               : NULL;
    return *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "out of memory");
}

static json_t *oom(struct purser_error *err)
{
    purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    return NULL;
}

/* ---- validations and ValidationPolicy status ---- */

int docstore_is_success(const char *status)
{
    return strcmp(status, "success") == 0 || strcmp(status, "succeeded") == 0;
}

/* A validation's status from its latest entry (status, age in seconds; NULL: none) under a
 * policy's expiresAfter. */
static const char *status_of_entry(const char *status, const char *age_text,
                                   const json_t *expires_after)
{
    long long limit;
    if (!status)
        return "missing";
    if (!docstore_is_success(status))
        return "failed";
    limit = json_is_string(expires_after)
                ? document_duration_seconds(json_string_value(expires_after))
                : -1;
    if (limit >= 0 && atoll(age_text ? age_text : "0") > limit)
        return "expired";
    return "succeeded";
}

/* What revisions need besides their rows, read in four queries whatever their number (and
 * the number of validations): every tag, every ValidationPolicy document, the latest entry of
 * every validation, and the revisions whose own validations (recorded by the write) failed,
 * keyed by revision id (and "id name" for entries). A single revision reads the same for its
 * own id, without the tags (it shows them with their data). */
struct revision_facts {
    json_t *tags;     /* {"id": ["tag", ...]} */
    json_t *policies; /* {"id": [[name, data text], ...]} */
    json_t *latest;   /* {"id name": [status, age]} */
    json_t *failed;   /* {"id": true} */
};

static void facts_release(struct revision_facts *f)
{
    json_decref(f->tags);
    json_decref(f->policies);
    json_decref(f->latest);
    json_decref(f->failed);
}

/* The revisions in [from, to] whose deckhand-schema-validation or deckhand-policy-validation
 * (entry 0, the write's) failed. */
static int failed_rows(const struct docstore_ctx *ctx, long long from, long long to,
                       struct store_rows *rows, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(from), STORE_INT(to)};
    return docstore_query(ctx, rows,
                          "SELECT DISTINCT revision_id FROM doc_validations WHERE org_id = ? AND"
                          " revision_id BETWEEN ? AND ? AND entry_id = 0 AND name IN"
                          " ('deckhand-policy-validation', 'deckhand-schema-validation') AND"
                          " status NOT IN ('success', 'succeeded')",
                          p, 3, err);
}

static void facts_add(json_t *map, const char *key, json_t *value)
{
    json_t *list = json_object_get(map, key);
    if (!list) {
        list = json_array();
        json_object_set_new(map, key, list);
    }
    json_array_append_new(list, value);
}

/* Policy rows in the list's order: by revision, then by name. */
static int policy_row_order(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    long long rx = atoll(x[0]), ry = atoll(y[0]);
    return rx != ry ? (rx > ry) - (rx < ry) : strcmp(x[1], y[1]);
}

static int facts_read(const struct docstore_ctx *ctx, long long from, long long to, int with_tags,
                      struct revision_facts *f, struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(from), STORE_INT(to)};
    struct store_rows tags = {0}, policies, latest = {0}, failed;
    const char **sorted = NULL;
    /* the policies' rows whose interval meets [from, to], one answer row per revision */
    struct store_value vp[] = {STORE_INT(from), STORE_INT(to), STORE_INT(ctx->org_id),
                               STORE_INT(from), STORE_INT(to)};
    int rc = with_tags
                 ? docstore_query(ctx, &tags,
                                  "SELECT revision_id, tag FROM doc_tags WHERE org_id = ? AND "
                                  "revision_id BETWEEN ? AND ? ORDER BY revision_id, tag",
                                  p, 3, err)
                 : 0;
    /* unordered: sorting the few rows here spares the server a temporary table */
    if (!rc)
        rc = docstore_query(ctx, &policies,
                            "SELECT r.id, c.name, c.data FROM doc_revision_documents m "
                            "JOIN doc_contents c ON c.id = m.content_id JOIN doc_revisions r ON "
                            "r.org_id = m.org_id AND r.id >= m.revision_id AND r.id < "
                            "m.until_revision AND r.id BETWEEN ? AND ? WHERE m.org_id = ? AND "
                            "m.schema_name LIKE 'deckhand/ValidationPolicy/%' AND "
                            "m.until_revision > ? AND m.revision_id <= ?",
                            vp, 5, err);
    if (!rc && policies.count) {
        /* the latest entries matter only where a policy names validations: between the first
         * and the last revision that has one (without a policy, no query at all) */
        sorted = arena_calloc(ctx->arena, policies.count, 3 * sizeof(*sorted));
        if (!sorted)
            return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        for (size_t i = 0; i < policies.count; i++)
            for (int c = 0; c < 3; c++)
                sorted[i * 3 + c] = store_cell(&policies, i, c);
        qsort(sorted, policies.count, 3 * sizeof(*sorted), policy_row_order);
        p[1] = STORE_INT(atoll(sorted[0]));
        p[2] = STORE_INT(atoll(sorted[(policies.count - 1) * 3]));
        rc = docstore_query(ctx, &latest,
                            "SELECT revision_id, name, status, TIMESTAMPDIFF(SECOND, created_at, "
                            "UTC_TIMESTAMP(6)) FROM (SELECT revision_id, name, status, created_at, "
                            "ROW_NUMBER() OVER (PARTITION BY revision_id, name ORDER BY entry_id "
                            "DESC) AS n FROM doc_validations WHERE org_id = ? AND revision_id "
                            "BETWEEN ? AND ?) v WHERE n = 1",
                            p, 3, err);
    }
    if (!rc)
        rc = failed_rows(ctx, from, to, &failed, err);
    if (!rc) {
        f->tags = json_object();
        f->policies = json_object();
        f->latest = json_object();
        f->failed = json_object();
        for (size_t i = 0; i < failed.count; i++)
            json_object_set_new(f->failed, store_cell(&failed, i, 0), json_true());
        for (size_t i = 0; i < tags.count; i++)
            facts_add(f->tags, store_cell(&tags, i, 0), json_string(store_cell(&tags, i, 1)));
        for (size_t i = 0; i < policies.count; i++)
            facts_add(f->policies, sorted[i * 3],
                      json_pack("[s, s]", sorted[i * 3 + 1], sorted[i * 3 + 2]));
        for (size_t i = 0; i < latest.count; i++) {
            char *key = arena_concat(ctx->arena, store_cell(&latest, i, 0), " ",
                                     store_cell(&latest, i, 1), (const char *)NULL);
            if (key)
                json_object_set_new(
                    f->latest, key,
                    json_pack("[s, s]", store_cell(&latest, i, 2), store_cell(&latest, i, 3)));
        }
    }
    return rc;
}

/* {name: {url, status, validations: [{name, url, status}]}} of revision id's
 * ValidationPolicy documents, from the facts; *all_ok when every policy succeeded. */
static json_t *policy_statuses(const struct docstore_ctx *ctx, const struct revision_facts *facts,
                               long long id, int *all_ok)
{
    json_t *out = json_object();
    const json_t *known;
    char key[32];
    *all_ok = 1;
    snprintf(key, sizeof(key), "%lld", id);
    known = json_object_get(facts->policies, key);
    for (size_t i = 0; out && i < json_array_size(known); i++) {
        json_error_t jerr;
        const char *pname = json_string_value(json_array_get(json_array_get(known, i), 0));
        const char *text = json_string_value(json_array_get(json_array_get(known, i), 1));
        json_t *data = json_loads(text, JSON_DECODE_ANY, &jerr), *v;
        json_t *list = json_array();
        const char *policy_status = "succeeded";
        size_t j;
        json_array_foreach (json_object_get(data, "validations"), j, v) {
            const char *vname = json_string_value(json_object_get(v, "name"));
            char entry_key[64 + 256];
            const json_t *entry;
            const char *status;
            if (!vname)
                continue;
            snprintf(entry_key, sizeof(entry_key), "%lld %s", id, vname);
            entry = json_object_get(facts->latest, entry_key);
            status = status_of_entry(json_string_value(json_array_get(entry, 0)),
                                     json_string_value(json_array_get(entry, 1)),
                                     json_object_get(v, "expiresAfter"));
            if (strcmp(status, "succeeded"))
                policy_status = "failed";
            json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "name", vname, "url",
                                                  docstore_url_of(ctx, id, "/validations/", vname),
                                                  "status", status));
        }
        if (strcmp(policy_status, "succeeded"))
            *all_ok = 0;
        json_object_set_new(out, pname,
                            json_pack("{s:s, s:o}", "status", policy_status, "validations", list));
        json_decref(data);
    }
    return out;
}

/* ---- revisions ---- */

/* {revision id: [tags]} or {tag: data} of one revision. */
static json_t *tags_of(const struct docstore_ctx *ctx, long long id, int with_data,
                       struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id)};
    struct store_rows rows;
    json_t *out = with_data ? json_object() : json_array();
    if (!out)
        return oom(err);
    if (docstore_query(
            ctx, &rows,
            "SELECT tag, data FROM doc_tags WHERE org_id = ? AND revision_id = ? ORDER BY tag", p,
            2, err)) {
        json_decref(out);
        return NULL;
    }
    for (size_t i = 0; i < rows.count; i++) {
        json_error_t jerr;
        if (with_data)
            json_object_set_new(out, store_cell(&rows, i, 0),
                                json_loads(store_cell(&rows, i, 1), JSON_DECODE_ANY, &jerr));
        else
            json_array_append_new(out, json_string(store_cell(&rows, i, 0)));
    }
    return out;
}

/* One revision's summary (list) or detail, from a row of id, createdAt, buckets. */
static json_t *revision_json(const struct docstore_ctx *ctx, const struct revision_facts *facts,
                             const struct store_rows *rows, size_t i, int detail,
                             struct purser_error *err)
{
    long long id = atoll(store_cell(rows, i, 0));
    json_error_t jerr;
    json_t *buckets = json_loads(store_cell(rows, i, 2), 0, &jerr);
    json_t *tags = !detail ? json_incref(json_object_get(facts->tags, store_cell(rows, i, 0)))
                           : tags_of(ctx, id, detail, err);
    int all_ok = 1, bad = 0;
    json_t *policies, *out;
    if (!detail && !tags)
        tags = json_array();
    policies = tags ? policy_statuses(ctx, facts, id, &all_ok) : NULL;
    if (json_object_get(facts->failed, store_cell(rows, i, 0)))
        all_ok = 0;
    /* built member by member (json_pack's format parsing and checks were a quarter of a
     * list); each set runs, so each value is either kept or released */
    if (!buckets || !tags || !policies || !(out = json_object())) {
        json_decref(buckets);
        json_decref(tags);
        json_decref(policies);
        return err->code ? NULL : oom(err);
    }
    bad |= json_object_set_new_nocheck(out, "id", json_integer(id));
    bad |= json_object_set_new_nocheck(out, "url", json_string(docstore_url_of(ctx, id, "", "")));
    bad |= json_object_set_new_nocheck(out, "createdAt", json_string(store_cell(rows, i, 1)));
    bad |= json_object_set_new_nocheck(out, "buckets", buckets);
    bad |= json_object_set_new_nocheck(out, "tags", tags);
    bad |= json_object_set_new_nocheck(out, "validationPolicies", policies);
    bad |= json_object_set_new_nocheck(out, "status",
                                       json_string_nocheck(all_ok ? "succeeded" : "failed"));
    if (bad) {
        json_decref(out);
        return oom(err);
    }
    return out;
}

/* A page token of the revision list: "r<id>" of the last revision given, base64url. */
static int token_id(const char *token, long long *id, struct purser_error *err)
{
    size_t len = 0;
    unsigned char *raw = crypto_base64url_decode(token, &len);
    char text[24];
    char *end = NULL;
    int ok = raw && len > 1 && len < sizeof(text) && raw[0] == 'r';
    if (ok) {
        memcpy(text, raw + 1, len - 1);
        text[len - 1] = 0;
        *id = strtoll(text, &end, 10);
        ok = end && !*end && *id >= 0;
    }
    free(raw);
    return ok ? 0 : purser_error_set(err, PURSER_EINVAL, "page_token: not a token of this list");
}

/* filter= on the revisions, docstore_revision_fields' SQL */
#define TAG_LIKE                                                                                   \
    "EXISTS (SELECT 1 FROM doc_tags t WHERE t.org_id = r.org_id AND t.revision_id = r.id AND "     \
    "t.tag LIKE ?)"
#define BUCKET_LIKE "JSON_SEARCH(r.buckets, 'one', ?) IS NOT NULL"
static const char *const revision_sql[] = {TAG_LIKE, BUCKET_LIKE, BUCKET_LIKE " OR " TAG_LIKE};

/* " AND ..." of the tags and conditions after r.org_id = ?: PURSER_EINVAL (-1) when the
 * parameters are full, PURSER_EINTERNAL when out of memory. */
static int revisions_where(const struct docstore_ctx *ctx, const struct docstore_revision_query *q,
                           struct buf *sql, struct docstore_params *p)
{
    int rc = docstore_param(p, STORE_INT(ctx->org_id));
    if (!rc && q->tag_count) {
        rc = buf_adds(sql, " AND EXISTS (SELECT 1 FROM doc_tags t WHERE t.org_id = r.org_id AND"
                           " t.revision_id = r.id");
        if (!rc)
            rc = docstore_filter_in(sql, p, "t.tag", q->tags, q->tag_count);
        if (!rc)
            rc = buf_addc(sql, ')');
    }
    if (!rc)
        rc = docstore_page_where(q->conds, docstore_revision_fields, revision_sql, sql, p);
    return rc;
}

/* The revisions of rows [0, count) (ids from to to) as the API shows them: *out a new array. */
static int revisions_json(const struct docstore_ctx *ctx, const struct store_rows *rows,
                          size_t count, long long from, long long to, json_t **out,
                          struct purser_error *err)
{
    /* the tags and validation status of all of them in three more queries */
    struct revision_facts facts = {0};
    json_t *results = NULL;
    int rc = facts_read(ctx, from, to, 1, &facts, err);
    if (!rc) {
        if (!(results = json_array()))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
        for (size_t i = 0; !rc && i < count; i++) {
            json_t *r = revision_json(ctx, &facts, rows, i, 0, err);
            if (r)
                json_array_append_new(results, r);
            else
                rc = err->code; /* (revision_json gives its code there) */
        }
        facts_release(&facts);
    }
    if (rc)
        json_decref(results);
    else
        *out = results;
    return rc;
}

/* How many revisions the tags and conditions select. */
static int revisions_total(const struct docstore_ctx *ctx, const struct docstore_revision_query *q,
                           long long *total, struct purser_error *err)
{
    struct buf sql = BUF_INIT;
    struct docstore_params p = {.n = 0};
    struct store_rows rows;
    int rc = buf_adds(&sql, "SELECT COUNT(*) FROM doc_revisions r WHERE r.org_id = ?");
    if (!rc)
        rc = revisions_where(ctx, q, &sql, &p);
    if (rc)
        rc = docstore_query_failed(rc, "too many tags", err);
    else
        rc = docstore_query(ctx, &rows, buf_cstr(&sql), p.v, p.n, err);
    buf_release(&sql);
    if (!rc)
        *total = rows.count ? atoll(store_cell(&rows, 0, 0)) : 0;
    return rc;
}

/* The revisions q asks for, after the page token's id (-1: from the first), one more than its
 * limit (is there a next page?). */
static int revisions_query(const struct docstore_ctx *ctx, const struct docstore_revision_query *q,
                           long long after, struct store_rows *rows, struct purser_error *err)
{
    const char *sort = q->sort;
    int descending = q->descending;
    long limit = q->limit;
    struct buf sql = BUF_INIT;
    struct docstore_params p = {.n = 0};
    int rc =
        buf_adds(&sql, "SELECT r.id, " STORE_ISO_TIME(
                           "r.created_at") ", r.buckets FROM doc_revisions r WHERE r.org_id = ?");
    if (!rc)
        rc = revisions_where(ctx, q, &sql, &p);
    /* keyset pages follow the id (revisions are numbered in the order they are made) */
    if (!rc && after >= 0) {
        rc = buf_adds(&sql, descending ? " AND r.id < ?" : " AND r.id > ?");
        if (!rc)
            rc = docstore_param(&p, STORE_INT(after));
    }
    if (!rc)
        rc = buf_adds(&sql, sort && strcmp(sort, "createdAt") == 0 ? " ORDER BY r.created_at"
                                                                   : " ORDER BY r.id");
    if (!rc)
        rc = buf_adds(&sql, descending ? " DESC, r.id DESC" : ", r.id");
    if (!rc && limit > 0) { /* one more than asked: is there a next page? */
        rc = buf_adds(&sql, " LIMIT ?");
        if (!rc)
            rc = docstore_param(&p, STORE_INT(limit + 1));
    }
    if (rc)
        rc = docstore_query_failed(rc, "too many tags", err);
    else
        rc = docstore_query(ctx, rows, buf_cstr(&sql), p.v, p.n, err);
    buf_release(&sql);
    return rc;
}

int docstore_revisions(const struct docstore_ctx *ctx, const struct docstore_revision_query *q,
                       json_t **out, struct purser_error *err)
{
    const char *sort = q->sort, *page_token = q->page_token;
    long limit = q->limit;
    long long total = 0;
    struct store_rows rows;
    json_t *results;
    long long after = -1, from = 0, to = 0;
    size_t count;
    int rc = 0;

    *out = NULL;
    if (sort && strcmp(sort, "id") && strcmp(sort, "createdAt"))
        return purser_error_set(err, PURSER_EINVAL, "sort must be id or createdAt, not '%s'", sort);
    if (page_token && *page_token)
        rc = token_id(page_token, &after, err);
    if (!rc && limit > 0 && q->with_total)
        rc = revisions_total(ctx, q, &total, err);
    if (!rc)
        rc = revisions_query(ctx, q, after, &rows, err);
    if (!rc) {
        count = limit > 0 && rows.count > (size_t)limit ? (size_t)limit : rows.count;
        for (size_t i = 0; i < count; i++) {
            long long id = atoll(store_cell(&rows, i, 0));
            if (i == 0 || id < from)
                from = id;
            if (i == 0 || id > to)
                to = id;
        }
        rc = revisions_json(ctx, &rows, count, from, to, &results, err);
    }
    if (!rc)
        rc = docstore_listing(results, out, err);
    if (!rc && limit > 0) {
        char *token = NULL;
        if (rows.count > count) {
            const char *last =
                arena_concat(ctx->arena, "r", store_cell(&rows, count - 1, 0), (const char *)NULL);
            token = last ? crypto_base64url(last, strlen(last)) : NULL;
        }
        json_object_set_new(*out, "next_page_token", json_string(token ? token : ""));
        if (q->with_total)
            json_object_set_new(*out, "total", json_integer(total));
        free(token);
    }
    return rc;
}

int docstore_revision(const struct docstore_ctx *ctx, long long id, json_t **out,
                      struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id)};
    struct store_rows rows;
    int rc =
        docstore_query(ctx, &rows,
                       "SELECT id, " STORE_ISO_TIME("created_at") ", buckets FROM doc_revisions"
                                                                  " WHERE org_id = ? AND id = ?",
                       p, 2, err);
    *out = NULL;
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND, "The requested revision=%lld was not found.",
                              id);
    if (!rc) {
        struct revision_facts facts = {0};
        if (!(rc = facts_read(ctx, id, id, 0, &facts, err)))
            *out = revision_json(ctx, &facts, &rows, 0, 1, err);
        facts_release(&facts);
    }
    if (!rc)
        rc = *out ? 0 : err->code;
    return rc;
}

/* ---- tags ---- */

static int check_tag_name(const char *tag, struct purser_error *err)
{
    return document_name_check("tag", tag, err);
}

int docstore_tag_create(const struct docstore_ctx *ctx, long long id, const char *tag,
                        const json_t *data, json_t **out, struct purser_error *err)
{
    char *text;
    int rc;
    *out = NULL;
    rc = check_tag_name(tag, err);
    if (!rc)
        rc = docstore_revision_check(ctx, id, err);
    if (!rc && data && !json_is_null(data) && !json_is_object(data))
        rc = purser_error_set(err, PURSER_EINVAL,
                              "The requested tag data must either be null or dictionary.");
    if (!rc) {
        text = json_is_object(data) ? json_text(data, JSON_COMPACT) : strdup("{}");
        {
            struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_STR(tag),
                                      STORE_STR(text ? text : "{}")};
            rc = docstore_exec_event(ctx,
                                     "INSERT INTO doc_tags (org_id, revision_id, tag, data) VALUES "
                                     "(?, ?, ?, ?) ON DUPLICATE KEY UPDATE data = VALUES(data)",
                                     p, 4, NULL, "tag",
                                     arena_sprintf(ctx->arena, "%lld/%s", id, tag), "put", err);
        }
        free(text);
        /* the tag as this POST wrote it, not read again: a concurrent POST may have replaced it
         * since (the last one's data stays, as Deckhand's update of an existing tag leaves it) */
        if (!rc && !(*out = json_pack("{s:o}", tag,
                                      json_is_object(data) ? json_deep_copy(data) : json_object())))
            rc = purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    }
    return rc;
}

int docstore_tag_get(const struct docstore_ctx *ctx, long long id, const char *tag, json_t **out,
                     struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_STR(tag)};
    struct store_rows rows;
    json_error_t jerr;
    int rc;
    *out = NULL;
    rc = docstore_revision_check(ctx, id, err);
    if (!rc)
        rc = docstore_query(
            ctx, &rows,
            "SELECT data FROM doc_tags WHERE org_id = ? AND revision_id = ? AND tag = ?", p, 3,
            err);
    if (!rc && rows.count == 0)
        rc = purser_error_set(err, PURSER_ENOTFOUND,
                              "The requested tag '%s' for revision %lld was not found.", tag, id);
    if (!rc) {
        *out = json_pack("{s:o}", tag, json_loads(store_cell(&rows, 0, 0), JSON_DECODE_ANY, &jerr));
        rc = *out ? 0 : purser_error_set(err, PURSER_EINTERNAL, "a stored tag is not JSON");
    }
    return rc;
}

int docstore_tag_list(const struct docstore_ctx *ctx, long long id, json_t **out,
                      struct purser_error *err)
{
    int rc = docstore_revision_check(ctx, id, err);
    *out = rc ? NULL : tags_of(ctx, id, 1, err);
    if (!rc)
        rc = *out ? 0 : err->code;
    return rc;
}

int docstore_tag_delete(const struct docstore_ctx *ctx, long long id, const char *tag,
                        struct purser_error *err)
{
    struct store_value p[] = {STORE_INT(ctx->org_id), STORE_INT(id), STORE_STR(tag ? tag : "")};
    unsigned long long affected = 0;
    int rc = docstore_revision_check(ctx, id, err);
    if (!rc && !tag) {
        rc = docstore_exec_event(ctx, "DELETE FROM doc_tags WHERE org_id = ? AND revision_id = ?",
                                 p, 2, NULL, "tag", arena_sprintf(ctx->arena, "%lld/*", id),
                                 "delete", err);
    } else if (!rc) {
        rc = docstore_exec_event(
            ctx, "DELETE FROM doc_tags WHERE org_id = ? AND revision_id = ? AND tag = ?", p, 3,
            &affected, "tag", arena_sprintf(ctx->arena, "%lld/%s", id, tag), "delete", err);
        if (!rc && affected == 0)
            rc = purser_error_set(err, PURSER_ENOTFOUND,
                                  "The requested tag '%s' for revision %lld was not found.", tag,
                                  id);
    }
    return rc;
}
