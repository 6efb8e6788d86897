/* policy_private.h: internals shared by the policy files (policy.c, policy_group.c, policy_node.c
 * and the lists as pages: policy_page.c, policy_node_page.c, policy_list_page.c). */
#ifndef PURSER_POLICY_PRIVATE_H
#define PURSER_POLICY_PRIVATE_H

#include "policy/policy.h"

#include "base/buf.h"

#include <jansson.h>
#include <limits.h>

/* A policy revision to store and point a group at (policy_revision_write). */
struct revision_write {
    const char *org, *group, *name, *revision, *who;
    const char *text, *sha; /* the lock to store; NULL: point at the stored revision */
    int must_be_new;        /* POST: an existing revision_id is a conflict whatever its content */
    int created;            /* out: the group had no pointer for the policy */
    int inserted;           /* out: the revision was stored by this write */
};

/* The JSON of a stored text (a new reference), or NULL for NULL. */
json_t *policy_parse_stored(const char *text);

/* PURSER_ENOTFOUND "Cannot load WHAT NAME" (Chef's words). */
int policy_not_found(struct purser_error *err, const char *what, const char *name);

/* {name: uri} of the node names in the first column of rows (Chef's node listing). */
json_t *policy_node_uris(const struct store_rows *rows, const struct links *links, const char *org);

/* When rc is 0, runs the DELETE sql with p and keeps *out (read before it) as the answer;
 * otherwise releases *out. Returns the first failure. */
int policy_delete_read(struct store *store, const char *actor, int rc, const char *sql,
                       const struct store_value *p, size_t n, const char *org, const char *kind,
                       const char *name, json_t **out, struct purser_error *err);

/* The pointer row of policy name in group (group id, policy id, revision id, revision text),
 * by names: rows empty when there is none. */
int policy_pointer_by_names(struct store *store, struct arena *arena, const char *org,
                            const char *group, const char *name, struct store_rows *rows,
                            struct purser_error *err);

/* Stores w's revision (unless it is there with the same content) and points w->group at it,
 * in one transaction; *out is the stored revision (a new reference). */
int policy_revision_write(struct store *store, struct revision_write *w, const json_t *lock,
                          json_t **out, struct purser_error *err);

/* The transaction body of policy_revision_write (ctx is the struct revision_write), for callers
 * that point at a stored revision without a lock. */
int policy_revision_write_txn(struct store *store, void *ctx, struct purser_error *err);

/* The id of the row named name in table (policies or policy_groups) of organization oid,
 * inserting it when missing (insert_sql, then select_sql, each with oid and name). */
int policy_ensure_named(struct store *store, struct arena *arena, const char *insert_sql,
                        const char *select_sql, long long oid, const char *name, long long *id,
                        struct purser_error *err);

/* The lists as pages (policy_page.c). */
#define PAGE_DEFAULT 100
#define PAGE_MAX 1000
#define PAGE_FILTER_MAX 10
#define PAGE_ALL (LONG_MAX - 1)

/* A list's filter: the WHERE conditions after the organization's (" AND ..."), params[0] the
 * organization's id, then one per condition; room for two more (LIMIT, OFFSET). */
struct page_filter {
    struct buf where;
    struct store_value params[3 + PAGE_FILTER_MAX];
    size_t count;
};

/* What a list sorts and filters on: noun (for errors); fields (NULL-terminated) filter on
 * alias+field; keys (NULL-terminated, the first the default and the tie-break) sort on
 * sort_alias+key. */
struct page_spec {
    const char *noun, *alias, *sort_alias;
    const char *const *fields, *const *keys;
};

/* A page's bounds: size (PAGE_ALL for q->all), offset, and the ORDER BY of its sort. */
struct page_bounds {
    long size, offset;
    const char *order;
};

/* Parses q's page_size, page_token, sort and filter into f and b (400s naming the field). */
int page_prepare(struct page_filter *f, struct arena *arena, const struct page_query *q,
                 const struct page_spec *spec, struct page_bounds *b, struct purser_error *err);
int page_filter_parse(struct page_filter *f, struct arena *arena, const char *filter,
                      const struct page_spec *spec, struct purser_error *err);
/* The ORDER BY of sort= ('-' before: descending), then keys[0] in the same direction, so that
 * the order is total and a descending one is the ascending one reversed. */
const char *page_sort_order(struct arena *arena, const char *sort, const struct page_spec *spec,
                            struct purser_error *err);
/* A page's answer: {items: [], next_page_token, total}, the token the page after b's when more
 * than b->size rows came (a page reads size + 1), else "". */
json_t *page_answer(long long total, size_t rows, const struct page_bounds *b);
/* A count parameter: fallback when absent; clamped to 1..max (max 0: any n >= 0). */
int page_count_param(const char *text, long fallback, long max, const char *what, long *out,
                     struct purser_error *err);

#endif
