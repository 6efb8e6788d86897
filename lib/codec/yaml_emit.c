/* yaml_emit.c: jansson values to a YAML stream through libyaml's emitter. */
#include "codec/yaml_codec.h"
#include "codec/yaml_scalar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Shortest text that reads back as the same double and as a YAML 1.1 float (a dot, and a
 * signed exponent). */
static void format_real(char *out, size_t size, double value)
{
    char digits[40], *e;
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(digits, sizeof(digits), "%.*g", precision, value);
        if (strtod(digits, NULL) == value)
            break;
    }
    e = strchr(digits, 'e');
    if (e) {
        const char *exp = e + 1;
        char sign = '+';
        if (*exp == '+' || *exp == '-')
            sign = *exp++;
        *e = '\0';
        snprintf(out, size, "%s%se%c%s", digits, strchr(digits, '.') ? "" : ".0", sign, exp);
    } else {
        snprintf(out, size, "%s%s", digits, strchr(digits, '.') ? "" : ".0");
    }
}

char *yaml_codec_key_text(const json_t *scalar)
{
    char text[64];
    switch (json_typeof(scalar)) {
    case JSON_STRING: return strdup(json_string_value(scalar));
    case JSON_INTEGER:
        snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(scalar));
        break;
    case JSON_REAL: format_real(text, sizeof(text), json_real_value(scalar)); break;
    case JSON_TRUE: return strdup("true");
    case JSON_FALSE: return strdup("false");
    case JSON_NULL: return strdup("null");
    default: return NULL;
    }
    return strdup(text);
}

char *yaml_codec_key_text_in(struct arena *arena, const json_t *scalar)
{
    char *text = yaml_codec_key_text(scalar), *copy = text ? arena_strdup(arena, text) : NULL;
    free(text);
    return copy;
}

static int emit(yaml_emitter_t *emitter, yaml_event_t *event)
{
    return yaml_emitter_emit(emitter, event) ? 0 : PURSER_EINTERNAL;
}

static int emit_scalar(yaml_emitter_t *emitter, const char *text, size_t len,
                       yaml_scalar_style_t style)
{
    yaml_event_t event;
    if (!yaml_scalar_event_initialize(&event, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1,
                                      style))
        return PURSER_EINTERNAL;
    return emit(emitter, &event);
}

static int emit_string(yaml_emitter_t *emitter, const char *text, size_t len)
{
    yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
    if (yaml_scalar_kind(text, len) != YAML_SCALAR_STRING)
        style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
    else if (memchr(text, '\n', len))
        style = YAML_LITERAL_SCALAR_STYLE;
    return emit_scalar(emitter, text, len, style);
}

static int emit_value(yaml_emitter_t *emitter, const json_t *value)
{
    yaml_event_t event;
    char text[64];
    int rc = 0;

    switch (json_typeof(value)) {
    case JSON_OBJECT: {
        const char *key;
        const json_t *item;
        if (!yaml_mapping_start_event_initialize(&event, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
            emit(emitter, &event))
            return PURSER_EINTERNAL;
        json_object_foreach ((json_t *)value, key, item) {
            rc = emit_string(emitter, key, strlen(key));
            if (!rc)
                rc = emit_value(emitter, item);
            if (rc)
                break;
        }
        if (!rc && !yaml_mapping_end_event_initialize(&event))
            rc = PURSER_EINTERNAL;
        if (!rc)
            rc = emit(emitter, &event);
        return rc;
    }
    case JSON_ARRAY: {
        size_t i;
        const json_t *item;
        if (!yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
                                                  YAML_BLOCK_SEQUENCE_STYLE) ||
            emit(emitter, &event))
            return PURSER_EINTERNAL;
        json_array_foreach (value, i, item) {
            rc = emit_value(emitter, item);
            if (rc)
                break;
        }
        if (!rc && !yaml_sequence_end_event_initialize(&event))
            rc = PURSER_EINTERNAL;
        if (!rc)
            rc = emit(emitter, &event);
        return rc;
    }
    case JSON_STRING:
        return emit_string(emitter, json_string_value(value), json_string_length(value));
    case JSON_INTEGER:
        snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(value));
        break;
    case JSON_REAL: format_real(text, sizeof(text), json_real_value(value)); break;
    case JSON_TRUE: strcpy(text, "true"); break;
    case JSON_FALSE: strcpy(text, "false"); break;
    case JSON_NULL: strcpy(text, "null"); break;
    }
    return emit_scalar(emitter, text, strlen(text), YAML_PLAIN_SCALAR_STYLE);
}

static int write_to_buf(void *data, unsigned char *bytes, size_t size)
{
    return buf_add(data, bytes, size) == 0;
}

static int emit_stream(yaml_emitter_t *emitter, const json_t *docs)
{
    yaml_event_t event;
    size_t i;
    const json_t *doc;
    int rc = 0;

    if (!yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING) || emit(emitter, &event))
        return PURSER_EINTERNAL;
    json_array_foreach (docs, i, doc) {
        if (!yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 0) ||
            emit(emitter, &event))
            rc = PURSER_EINTERNAL;
        if (!rc)
            rc = emit_value(emitter, doc);
        if (!rc && (!yaml_document_end_event_initialize(&event, 1) || emit(emitter, &event)))
            rc = PURSER_EINTERNAL;
        if (rc)
            break;
    }
    if (!rc && (!yaml_stream_end_event_initialize(&event) || emit(emitter, &event)))
        rc = PURSER_EINTERNAL;
    if (!rc && !yaml_emitter_flush(emitter))
        rc = PURSER_EINTERNAL;
    return rc;
}

int yaml_codec_emit(struct buf *out, const json_t *docs, struct purser_error *err)
{
    yaml_emitter_t emitter;
    int rc;

    if (!json_is_array(docs))
        return purser_error_set(err, PURSER_EINTERNAL, "yaml_codec_emit needs an array");
    if (!yaml_emitter_initialize(&emitter))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory emitting YAML");
    yaml_emitter_set_output(&emitter, write_to_buf, out);
    yaml_emitter_set_unicode(&emitter, 1);
    yaml_emitter_set_width(&emitter, -1);
    yaml_emitter_set_indent(&emitter, 2);
    rc = emit_stream(&emitter, docs);
    if (rc)
        purser_error_set(err, rc, "cannot emit YAML: %s",
                         emitter.problem ? emitter.problem : "out of memory");
    yaml_emitter_delete(&emitter);
    return rc;
}
