/* json_text.h: jansson values as JSON text, fast.
 *
 * Every JSON answer, every stored document and every content hash is a jansson tree turned
 * into text. jansson's own json_dumps() calls back for each token, keeps a hash table of the
 * containers it is inside (formatting each one's address to a string), grows its buffer by
 * malloc, copy and free, and copies the finished text once more: for a list of a thousand
 * revisions that was half the request. These write the same bytes straight into a buffer.
 *
 * The text is byte for byte what json_dumps() gives for the same flags (t/0008 checks it):
 * stored hashes of canonical JSON (JSON_SORT_KEYS) stay valid. Flags beyond JSON_COMPACT,
 * JSON_SORT_KEYS, JSON_PRESERVE_ORDER, JSON_ENCODE_ANY and JSON_REAL_PRECISION (indentation,
 * JSON_ENSURE_ASCII, JSON_ESCAPE_SLASH, JSON_EMBED) are handed to jansson itself. */
#ifndef PURSER_JSON_TEXT_H
#define PURSER_JSON_TEXT_H

#include "base/buf.h"

#include <jansson.h>

/* json_dumps(), with the text allocated by malloc (free() it); NULL when value cannot be
 * encoded (a string that is not UTF-8, a real that is not finite, nesting past 2048, a
 * scalar without JSON_ENCODE_ANY) or memory ran out. */
char *json_text(const json_t *value, size_t flags);

/* Appends the text of value to out: 0, or -1 as json_text() fails (out may then hold part of
 * it). */
int json_text_append(struct buf *out, const json_t *value, size_t flags);

#endif
