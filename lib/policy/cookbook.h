/* cookbook.h: cookbook artifacts, and the sandboxes and content-addressed file store that
 * `chef push` uploads them through, in the Chef Infra Server's shapes.
 *
 * The sequence: POST sandboxes {"checksums": {md5: null}} answers an upload URL per checksum
 * (needs_upload false for content already stored); PUT each file to its URL (the MD5 of the
 * body must be the checksum); PUT sandboxes/{id} {"is_completed": true} (every checksum must
 * have arrived); PUT cookbook_artifacts/{name}/{identifier} with the manifest, whose files
 * must all be stored. Re-PUT of an identical artifact is 200; different content is 409.
 * Conventions as identity.h; the upload URLs and artifact links are made by `links`
 * (base/links.h, as policy.h).
 */
#ifndef PURSER_COOKBOOK_H
#define PURSER_COOKBOOK_H

#include "base/arena.h"
#include "base/links.h"
#include "store/store.h"

#include <jansson.h>

int cookbook_sandbox_create(struct store *store, const char *org, const json_t *body,
                            const struct links *links, json_t **out, struct purser_error *err);
int cookbook_sandbox_commit(struct store *store, struct arena *arena, const char *org,
                            const char *id, const json_t *body, json_t **out,
                            struct purser_error *err);

/* Stores a file a sandbox of org is waiting for; PURSER_EINVAL when its MD5 is not checksum,
 * PURSER_ENOTFOUND when no open sandbox expects it. */
int cookbook_file_put(struct store *store, const char *org, const char *checksum, const char *data,
                      size_t len, struct purser_error *err);
/* The same without a sandbox (an organization's import): checked against its MD5. */
int cookbook_file_import(struct store *store, const char *org, const char *checksum,
                         const char *data, size_t len, struct purser_error *err);
/* A stored file's bytes (arena memory). */
int cookbook_file_get(struct store *store, struct arena *arena, const char *org,
                      const char *checksum, const char **data, size_t *len,
                      struct purser_error *err);

/* GET cookbook_artifacts (name NULL) or cookbook_artifacts/{name}:
 * {name: {url, versions: [{url, identifier}]}} */
int cookbook_artifact_list(struct store *store, struct arena *arena, const char *org,
                           const char *name, const struct links *links, json_t **out,
                           struct purser_error *err);
/* Stores the manifest once its files are all stored (checked and stored in one transaction,
 * the files locked meanwhile); *created 1 when new, 0 when identical to the stored one. */
int cookbook_artifact_put(struct store *store, struct arena *arena, const char *org,
                          const char *name, const char *identifier, const json_t *body,
                          const char *who, int *created, json_t **out, struct purser_error *err);
/* The manifest with a download "url" on every file. */
int cookbook_artifact_get(struct store *store, struct arena *arena, const char *org,
                          const char *name, const char *identifier, const struct links *links,
                          json_t **out, struct purser_error *err);
int cookbook_artifact_delete(struct store *store, const char *actor, struct arena *arena,
                             const char *org, const char *name, const char *identifier,
                             json_t **out, struct purser_error *err);

/* Adds the checksum of every file a manifest lists (all_files, or API v0/v1's segments) as a
 * key of the object set. */
void cookbook_manifest_checksums(const json_t *manifest, json_t *set);

/* Its part in an organization's export and import (lib/resource/transfer_hooks.h;
 * policy_transfer.c): CookbookArtifact ("<name>/<identifier>", the manifest and every file's
 * content in base64). */
struct transfer_hooks;
extern const struct transfer_hooks cookbook_transfer;

#endif
