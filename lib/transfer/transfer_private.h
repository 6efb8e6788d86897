/* transfer_private.h: what export (transfer_export.c) and import (transfer.c) share. */
#ifndef PURSER_TRANSFER_PRIVATE_H
#define PURSER_TRANSFER_PRIVATE_H

#include "docs/docstore.h"
#include "transfer/transfer.h"

/* The metadata.name of an envelope, or NULL. */
const char *transfer_meta_name(const json_t *doc);

/* The id of the organization c transfers. */
int transfer_org_id(const struct transfer_ctx *c, long long *id, struct purser_error *err);

/* A document store context for c's organization (org_id), reading and writing encrypted
 * documents. */
void transfer_docs_ctx(const struct transfer_ctx *c, long long org_id, struct docstore_ctx *d);

#endif
