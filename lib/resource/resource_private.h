/* resource_private.h: what resource.c and resource_list.c share. */
#ifndef PURSER_RESOURCE_PRIVATE_H
#define PURSER_RESOURCE_PRIVATE_H

#include "resource/resource.h"

#include "base/buf.h"

/* The columns every read of a resource selects (table alias r), in this order. */
#define RESOURCE_COLUMNS                                                                           \
    "r.id, r.name, r.revision, r.labels, r.annotations, r.description, r.spec, "                   \
    "r.status, " STORE_ISO_TIME("r.created_at") ", " STORE_ISO_TIME(                               \
        "r.updated_at") ", "                                                                       \
                        "DATE_FORMAT(r.created_at, '%Y-%m-%d %H:%i:%s.%f'), r.title"
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
    C_TITLE
};

/* The resource of row i, or NULL when what is stored no longer decodes (logged as a warning
 * naming the kind and name). */
json_t *resource_decode(const struct resource_kind *k, const struct store_rows *rows, size_t i);

/* Appends the resource of row i to out as JSON text, from the stored JSON as it is (checked,
 * not parsed): 0, 1 when the row no longer decodes (logged and skipped, nothing appended), or
 * -1 when out of memory. */
int resource_write_text(const struct resource_kind *k, const struct store_rows *rows, size_t i,
                        struct buf *out);

#endif
