/* transfer.h: an organization exported as a stream of resources, and imported again into an
 * empty one (issue 13, items 4 and 5), for `GET/POST /organizations/{org}/export|import` and
 * `purser export|import`.
 *
 * The stream is a list of documents in the resource envelope, {kind, version: v1, metadata:
 * {name, ...}, spec}, in dependency order: the registry's rows that an export writes
 * (lib/registry, registry_exports), by their export_rank, the Organization first; each kind's
 * documents refer only to kinds before it. Each row's documents are its kind's transfer hooks'
 * (lib/resource/transfer_hooks.h, in the kind's own lib file: lib/auth, lib/policy, lib/docs),
 * or, for a kind of the resource convention, its descriptor's export_doc and import_doc
 * (Cluster, with its dynamic facts, after the core's). docs/automation.md lists the kinds.
 * No times, no revision ids of the store, no secret: token and private keys never; encrypted
 * documents' data only with secrets (else their names are listed as redacted, and such
 * documents are left out of an import). This module names no kind: the stream's envelope,
 * order and duplicates, the transaction and the summary are its; what a kind's document holds
 * is the kind's (t/0013-one-registry.t).
 */
#ifndef PURSER_TRANSFER_H
#define PURSER_TRANSFER_H

#include "base/err.h"
#include "resource/transfer_hooks.h"

#include <jansson.h>

/* The organization's stream: *out is a JSON array of documents. */
int transfer_export(const struct transfer_ctx *c, json_t **out, struct purser_error *err);

/* Checks the whole stream (known kinds, the envelope, names, no duplicate, the export's order,
 * then each document with its kind's check: every reference found in it), then writes it into
 * c->org, which must be empty (PURSER_EEXISTS otherwise: nothing but its validator and
 * members), in one transaction: all or nothing. An error names the document ("document 7 (Node
 * web1): ...") and the field. *summary: {imported: {kind: count}, left_out?: [...]}, left_out
 * what the kinds' imports did not make, for the operator to supply: the encrypted documents
 * an export without secrets named as redacted ({bucket, schema, name}), the identity
 * providers' secrets or the providers themselves ({kind, name, field?, reason}). */
int transfer_import(const struct transfer_ctx *c, const json_t *docs, json_t **summary,
                    struct purser_error *err);

#endif
