/* json_check.h: whether text is JSON, without building it (a stored value checked on its way
 * out, where parsing it into a tree only to write it again would cost the most). */
#ifndef PURSER_JSON_CHECK_H
#define PURSER_JSON_CHECK_H

#include <stddef.h>

/* 1 when the n bytes at s are exactly one JSON value (RFC 8259), whitespace around it
 * allowed, nested at most 512 deep; 0 otherwise. Strings must be UTF-8 (checked byte for byte
 * as jansson would). */
int json_text_valid(const char *s, size_t n);

#endif
