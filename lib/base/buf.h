/* buf.h: a growable byte buffer (after git's strbuf).
 *
 * Invariants: `len` bytes of `data` are in use; when `data` is not NULL, data[len] is '\0', so
 * buf_cstr() is always a valid C string (the contents may hold other NULs). A buffer starts as
 * BUF_INIT (no allocation) and owns its heap memory until buf_release() or buf_detach().
 * Functions that grow return 0, or PURSER_EINTERNAL when out of memory,
 * and PURSER_ETOOLARGE past `limit` when the buffer has one (0 = no limit); on failure the
 * contents are unchanged.
 */
#ifndef PURSER_BUF_H
#define PURSER_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
    char *data;
    size_t len;
    size_t cap;   /* allocated bytes, counting the NUL */
    size_t limit; /* most bytes the buffer may hold; 0 = no limit */
};

#define BUF_INIT                                                                                   \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

/* Makes room for `extra` more bytes. */
int buf_grow(struct buf *b, size_t extra);

/* Appends n bytes / a C string / one byte / formatted text. */
int buf_add(struct buf *b, const void *data, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The contents as a C string ("" for an empty buffer that never allocated). Borrowed. */
const char *buf_cstr(const struct buf *b);

/* Empties the buffer, keeping its memory. */
void buf_reset(struct buf *b);

/* Frees the memory and returns the buffer to BUF_INIT (keeping its limit). Accepts NULL. */
void buf_release(struct buf *b);

/* The decimal digits of v, written at the end of out (NUL-terminated); returns where they
 * start. For hot paths that build text by concatenation instead of formatting. */
const char *decimal_text(char out[24], unsigned long long v);

/* Hands the contents to the caller (free() it; never NULL unless out of memory) and resets
 * the buffer to empty. *len_out (if not NULL) gets the length. */
char *buf_detach(struct buf *b, size_t *len_out);

#endif
