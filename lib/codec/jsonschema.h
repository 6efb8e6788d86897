/* jsonschema.h: JSON Schema draft 4 validation, compiled once per schema.
 *
 * jsonschema_compile() walks the schema once: every subschema becomes a node with its
 * keywords parsed (patterns compiled with PCRE2, ECMAScript-like), "id"s are resolved into
 * base URIs and registered, and "$ref"s are resolved (JSON pointers, location-independent
 * "#name" ids, relative URIs against the nearest "id", and the draft 4 meta-schema, which is
 * built in). Remote references to other documents are not fetched. Validation then walks the
 * nodes only. Numbers compare mathematically (1 equals 1.0 in enum and uniqueItems), string
 * lengths count code points; "format" is an annotation and does not fail validation.
 */
#ifndef PURSER_JSONSCHEMA_H
#define PURSER_JSONSCHEMA_H

#include "base/err.h"

#include <jansson.h>

struct jsonschema;

/* Compiles schema (a reference is kept). PURSER_EINVAL naming the schema path for a schema
 * that is not valid draft 4 (a keyword of the wrong type, a bad regular expression). */
int jsonschema_compile(struct jsonschema **out, json_t *schema, struct purser_error *err);

void jsonschema_free(struct jsonschema *schema);

/* 1 when instance is valid. When errors is not NULL, each failure is appended to it as
 * {"path": "$.a[0]", "schema_path": "#/properties/a/items/type", "message": "..."}; at most
 * max_errors are collected (0: no limit). Messages never quote the instance's values (they
 * may be secrets). A $ref that cannot be resolved counts as failing. */
int jsonschema_validate(struct jsonschema *schema, const json_t *instance, json_t *errors,
                        size_t max_errors);

/* Deep equality with numbers compared by value (1 == 1.0), as JSON Schema's enum and
 * uniqueItems need. */
int jsonschema_equal(const json_t *a, const json_t *b);

#endif
