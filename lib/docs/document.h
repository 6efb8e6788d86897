/* document.h: the Deckhand document model: schema / metadata / data.
 *
 * A document's identity is (schema, metadata.layeringDefinition.layer, metadata.name); its
 * metadata schema makes it a Document (configuration), a Control document (LayeringPolicy,
 * ValidationPolicy, DataSchema) or a Tombstone (deletes the document of the same schema and
 * name). document_prepare() checks a posted stream against the base and metadata schemas,
 * reporting every failure as a Deckhand D001 ValidationMessage, fills the metadata defaults
 * (storagePolicy: cleartext, layeringDefinition.abstract: false, replacement: false) and
 * computes each document's content hash for change detection.
 */
#ifndef PURSER_DOCUMENT_H
#define PURSER_DOCUMENT_H

#include "base/arena.h"
#include "base/buf.h"
#include "base/err.h"

#include <jansson.h>
#include <stddef.h>
#include <string.h>

enum document_kind { DOCUMENT_DOCUMENT, DOCUMENT_CONTROL, DOCUMENT_TOMBSTONE };

#define DOCUMENT_NAME_MAX 255 /* longest schema, layer, name, bucket or tag */

/* Whether what (a bucket, tag or validation name: 'bucket name', 'tag', ...) is a name: 1 to
 * DOCUMENT_NAME_MAX characters without a control character. 0, or PURSER_EINVAL naming what and
 * the rule. Any other character is allowed and the name is then found under exactly its bytes. */
int document_name_check(const char *what, const char *name, struct purser_error *err);

struct document {
    json_t *doc;        /* borrowed: the document as posted, defaults filled */
    const char *schema; /* borrowed from doc */
    const char *name;
    const char *layer; /* "" when the document has none */
    enum document_kind kind;
    int abstract;
    int encrypted;
    unsigned char content_sha256[32]; /* identity, metadata and data in canonical form */
    const char *metadata_json;        /* metadata and data in that form (arena memory): */
    const char *data_json;            /* what is hashed is what is stored (NULL: encrypted) */
};

/* Checks and prepares every document of docs (an array, as yaml_codec_parse gives it),
 * filling the defaults in place. *out is an arena array of *count entries in input order.
 * Failures: PURSER_EINVAL with *messages (a new array of D001 ValidationMessages, one per
 * fault, each naming the document and the field) or PURSER_EEXISTS for an identity given
 * twice (err names it). *messages is NULL on success. */
int document_prepare(struct arena *arena, json_t *docs, struct document **out, size_t *count,
                     json_t **messages, struct purser_error *err);

/* document_prepare one document at a time, for a stream checked as it is parsed: checks doc
 * (the index-th of the stream, from 0) into *out, appending its faults to faults. Its content
 * hash is document_hash's, taken apart (by the thread that stores it). */
void document_check(json_t *doc, size_t index, json_t *faults, struct document *out);

/* Takes d's content hash and keeps its canonical metadata and data (in arena) for storing.
 * Reads d->doc only. -1 when out of memory. */
int document_hash(struct arena *arena, struct document *d);

/* The PURSER_EINVAL document_prepare answers for faults (not empty). */
int document_faults(json_t *faults, struct purser_error *err);

/* PURSER_EEXISTS naming the first identity (schema, layer, name) given twice among docs. */
int document_check_duplicates(struct arena *arena, const struct document *const *docs, size_t n,
                              struct purser_error *err);

/* The compact JSON of value with keys sorted (the form hashes are taken of); malloc'd. */
char *document_canonical(const json_t *value);

/* The YAML block mapping of {schema, metadata, data} in that order, as the API sends a
 * document (no "---" line; ends with a newline), appended to out. */
int document_yaml(struct buf *out, const char *schema, const json_t *metadata, const json_t *data,
                  struct purser_error *err);

/* The YAML lines "data: ..." of a document's data, appended to out. */
int document_data_yaml(struct buf *out, const json_t *data, struct purser_error *err);

/* The YAML lines "status:\n  bucket: B\n  revision: N\n", appended to out. */
int document_status_yaml(struct buf *out, const char *bucket, long long revision,
                         struct purser_error *err);

/* The associated data that binds a sealed value to its owner: org \0 schema \0 layer \0 name,
 * into arena memory. */
char *document_aad(struct arena *arena, long long org_id, const char *schema, const char *layer,
                   const char *name, size_t *len);

/* A Deckhand ValidationMessage (a new object) for a document. */
json_t *document_message(const char *code, const char *message, const char *schema,
                         const char *name, const char *layer);

/* Orders identities by schema, then name, then layer (strcmp's sign). */
int document_identity_compare(const char *schema_a, const char *name_a, const char *layer_a,
                              const char *schema_b, const char *name_b, const char *layer_b);

/* 1 when schema names the kind: "deckhand/LayeringPolicy" matches deckhand/LayeringPolicy/v1.
 * Inline: a string test every file of docs/ makes, dataschema.c's too, so that naming a kind
 * calls nothing in the model (document.c calls dataschema.c; tools/docs-cycles). */
static inline int document_schema_is(const char *schema, const char *kind)
{
    size_t n = strlen(kind);
    return schema && strncmp(schema, kind, n) == 0 && schema[n] == '/';
}

/* The layering actions (metadata.layeringDefinition.actions[].method), one table in the order
 * messages list them: document_check checks a method against it, and the renderer
 * (render_layer.c) applies each by its index. */
enum document_action { DOCUMENT_MERGE, DOCUMENT_REPLACE, DOCUMENT_DELETE, DOCUMENT_ACTION_COUNT };
extern const char *const document_actions[DOCUMENT_ACTION_COUNT];

/* The action whose method is method, or -1 when there is none. */
int document_action_find(const char *method);

/* The methods as a message lists them ("merge, replace or delete") into out, size bytes (cut
 * to fit, always terminated when size is not 0). */
void document_action_names(char *out, size_t size);

/* Parses an ISO 8601 duration (PnYnMnWnDTnHnMnS, years 365 days, months 30) into seconds.
 * -1 when malformed. */
long long document_duration_seconds(const char *text);

#endif
