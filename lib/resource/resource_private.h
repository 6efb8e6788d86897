/* resource_private.h: what resource.c and resource_list.c share. */
#ifndef PURSER_RESOURCE_PRIVATE_H
#define PURSER_RESOURCE_PRIVATE_H

#include "resource/resource.h"

#include "base/buf.h"

/* The columns every read of a resource selects (table alias r), in this order (a kind with a
 * table selects the same: resource.h, struct resource_table). The times come as the store
 * gives them ("YYYY-MM-DD HH:MM:SS.ffffff", which a page token keeps to the microsecond) and
 * are written in RFC 3339 by resource_time (four DATE_FORMATs a row were some 6% of the
 * server's time on a page of clusters). */
#define RESOURCE_COLUMNS                                                                           \
    "r.id, r.name, r.revision, r.labels, r.annotations, r.description, r.spec, r.status, "         \
    "r.created_at, r.updated_at, r.title, r.sub_kind, r.expires_at"

/* What a read of the resources table adds to its conditions: an expired resource is gone. */
#define RESOURCE_LIVE " AND (r.expires_at IS NULL OR r.expires_at > NOW(6))"
enum {
    C_ID,
    C_NAME,
    C_REVISION,
    C_LABELS,
    C_ANNOTATIONS,
    C_DESCRIPTION,
    C_SPEC,
    C_STATUS,
    C_CREATED,
    C_UPDATED,
    C_TITLE,
    C_SUB_KIND,
    C_EXPIRES,
    C_ORGANIZATION,   /* every organization's list only (resource_query.all_organizations): */
    C_ORGANIZATION_ID /* the organization's name and id, after the columns above */
};

/* The resource of row i, or NULL when what is stored no longer decodes (logged as a warning
 * naming the kind and name). */
json_t *resource_decode(const struct resource_kind *k, const struct store_rows *rows, size_t i);

/* Appends the resource of row i to out as JSON text, from the stored JSON as it is (checked,
 * not parsed): 0, 1 when the row no longer decodes (logged and skipped, nothing appended), or
 * -1 when out of memory. */
int resource_write_text(const struct resource_kind *k, const struct store_rows *rows, size_t i,
                        struct buf *out);

/* The time of row i's column (a DATETIME as MariaDB gives it) in RFC 3339 to the second
 * ("2030-01-02T03:04:05Z") in out; NULL when the cell is NULL. */
const char *resource_time(const struct store_rows *rows, size_t i, int column, char out[21]);

/* Inside a create's transaction (store): deletes the expired resource of that name, with its
 * event, so that the name is free (resource_expire.c). */
int resource_expire_in(struct store *store, const struct resource_kind *k,
                       const struct resource_scope *s, const char *name, struct purser_error *err);

/* Before a list: what has expired of the kind in the organization goes, with its events, at
 * most once a second in a worker (the list leaves expired rows out either way, and a GET of an
 * expired name deletes it at once). Failures are logged. */
void resource_expire_sweep(const struct resource_kind *k, const struct resource_scope *s);

#endif
