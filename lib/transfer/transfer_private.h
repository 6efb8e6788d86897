/* transfer_private.h: what export (transfer_export.c) and import (transfer.c) share. */
#ifndef PURSER_TRANSFER_PRIVATE_H
#define PURSER_TRANSFER_PRIVATE_H

#include "registry/registry.h"
#include "resource/resource.h"
#include "transfer/transfer.h"

/* At most this many rows in an export, and kinds in a stream. */
#define TRANSFER_ROWS_MAX 32

/* The id of the organization c transfers. */
int transfer_org_id(const struct transfer_ctx *c, long long *id, struct purser_error *err);

#endif
