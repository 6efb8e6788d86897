/* policy_private.h: internals shared by policy.c, policy_group.c and policy_node.c. */
#ifndef PURSER_POLICY_PRIVATE_H
#define PURSER_POLICY_PRIVATE_H

#include "policy/policy.h"

#include <jansson.h>

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
json_t *policy_node_uris(const struct store_rows *rows, const char *base, const char *org);

/* When rc is 0, runs the DELETE sql with p and keeps *out (read before it) as the answer;
 * otherwise releases *out. Returns the first failure. */
int policy_delete_read(struct store *store, int rc, const char *sql, const struct store_value *p,
                       size_t n, const char *org, const char *kind, const char *name, json_t **out,
                       struct purser_error *err);

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

#endif
