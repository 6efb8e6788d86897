/* transfer_private.h: what export (transfer_export.c) and import (transfer.c) share. */
#ifndef PURSER_TRANSFER_PRIVATE_H
#define PURSER_TRANSFER_PRIVATE_H

#include "docs/docstore.h"
#include "registry/registry.h"
#include "resource/resource.h"
#include "transfer/transfer.h"

/* The metadata.name of an envelope, or NULL. */
const char *transfer_meta_name(const json_t *doc);

/* The id of the organization c transfers. */
int transfer_org_id(const struct transfer_ctx *c, long long *id, struct purser_error *err);

/* The kinds of the resource convention an export writes after the core's and an import reads
 * back: the registry's with export and import hooks (lib/registry), at most max into out. */
size_t transfer_resource_kinds(const struct resource_kind **out, size_t max);

/* A document store context for c's organization (org_id), reading and writing encrypted
 * documents. */
void transfer_docs_ctx(const struct transfer_ctx *c, long long org_id, struct docstore_ctx *d);

#endif
