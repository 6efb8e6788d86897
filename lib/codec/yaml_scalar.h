/* yaml_scalar.h: YAML 1.1 scalar resolution shared by the parser and the emitter (private). */
#ifndef PURSER_YAML_SCALAR_H
#define PURSER_YAML_SCALAR_H

#include "base/err.h"

#include <jansson.h>
#include <stddef.h>

enum yaml_scalar_kind {
    YAML_SCALAR_STRING,
    YAML_SCALAR_NULL,
    YAML_SCALAR_BOOL,
    YAML_SCALAR_INT,
    YAML_SCALAR_FLOAT,
    YAML_SCALAR_SPECIAL_FLOAT, /* .inf, -.inf, .nan: a float JSON cannot hold */
    YAML_SCALAR_BINARY,        /* !!binary: kept as its base64 text, which must be base64 */
    YAML_SCALAR_TIMESTAMP,     /* !!timestamp: kept as its text, which must be a YAML 1.1 one */
};

/* What a plain scalar of this text resolves to (PyYAML's implicit resolvers). */
enum yaml_scalar_kind yaml_scalar_kind(const char *text, size_t len);

/* Converts text to a JSON value of the given kind. Returns 0 and a new reference in *out, or
 * PURSER_EINVAL when the text is not of that kind or out of range (message says why, naming
 * the text as it was written, cut to a readable length). */
int yaml_scalar_to_json(json_t **out, enum yaml_scalar_kind kind, const char *text, size_t len,
                        struct purser_error *err);

#endif
