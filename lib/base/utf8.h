/* utf8.h: checking and repairing UTF-8 (what reaches purser from the network may be any
 * bytes; what it answers in JSON or YAML must be UTF-8). */
#ifndef PURSER_UTF8_H
#define PURSER_UTF8_H

#include <stddef.h>

/* The length (1-4) of the well-formed UTF-8 sequence at s (at most n bytes), or 0 when none
 * starts there (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, a
 * truncated sequence). */
int utf8_sequence(const unsigned char *s, size_t n);

/* The characters (code points) in the n bytes of UTF-8 at s: what a VARCHAR(n) and JSON
 * Schema's maxLength count. */
size_t utf8_count(const char *s, size_t n);

/* The longest prefix of the n bytes at s that is at most max bytes and does not end inside a
 * character: where to cut a string that is too long. */
size_t utf8_prefix(const char *s, size_t n, size_t max);

/* How many of the n bytes at s its first max_chars characters take (a byte that starts no
 * character counts as one): where to cut a string to a column's length in characters. */
size_t utf8_prefix_chars(const char *s, size_t n, size_t max_chars);

/* 1 when the n bytes at s are well-formed UTF-8 without NUL. */
int utf8_valid(const char *s, size_t n);

/* 1 when the n bytes of UTF-8 at s hold a control character: C0 (NUL to U+001F, tab and
 * newline included), DEL or C1 (U+0080 to U+009F). Names refuse them: they cannot be typed,
 * shown or logged as they are. */
int utf8_has_control(const char *s, size_t n);

/* A copy of s (malloc'd; NULL when out of memory) where each byte that is not part of
 * well-formed UTF-8 is written as the four characters \xNN: a message may quote what a client
 * sent and still be encoded. */
char *utf8_escape(const char *s);

#endif
