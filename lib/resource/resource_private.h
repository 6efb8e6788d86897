/* resource_private.h: what resource.c and resource_list.c share. */
#ifndef PURSER_RESOURCE_PRIVATE_H
#define PURSER_RESOURCE_PRIVATE_H

#include "resource/resource.h"

#include "base/buf.h"

/* The columns every read of a resource selects (table alias r), in this order (a kind with a
 * table selects the same: resource.h, struct resource_table). */
#define RESOURCE_COLUMNS                                                                           \
    "r.id, r.name, r.revision, r.labels, r.annotations, r.description, r.spec, "                   \
    "r.status, " STORE_ISO_TIME("r.created_at") ", " STORE_ISO_TIME(                               \
        "r.updated_at") ", "                                                                       \
                        "DATE_FORMAT(r.created_at, '%Y-%m-%d %H:%i:%s.%f'), r.title, "             \
                        "r.sub_kind, " STORE_ISO_TIME("r.expires_at")

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
    C_CREATED_RAW,
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

/* Inside a create's transaction (store): deletes the expired resource of that name, with its
 * event, so that the name is free (resource_expire.c). */
int resource_expire_in(struct store *store, const struct resource_kind *k,
                       const struct resource_scope *s, const char *name, struct purser_error *err);

#endif
