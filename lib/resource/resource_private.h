/* resource_private.h: what resource.c and resource_list.c share. */
#ifndef PURSER_RESOURCE_PRIVATE_H
#define PURSER_RESOURCE_PRIVATE_H

#include "resource/resource.h"

/* The columns every read of a resource selects (table alias r), in this order. */
#define RESOURCE_COLUMNS                                                                           \
    "r.id, r.name, r.revision, r.body, r.status, " STORE_ISO_TIME("r.created_at") ", "             \
    STORE_ISO_TIME("r.updated_at") ", DATE_FORMAT(r.created_at, '%Y-%m-%d %H:%i:%s.%f'), r.title"
#define COLUMNS RESOURCE_COLUMNS
enum { C_ID, C_NAME, C_REVISION, C_BODY, C_STATUS, C_CREATED, C_UPDATED, C_CREATED_RAW, C_TITLE };

/* The resource of row i, or NULL when what is stored no longer decodes (logged as a warning
 * naming the kind and name). */
json_t *resource_decode(const struct resource_kind *k, const struct store_rows *rows, size_t i);

#endif
