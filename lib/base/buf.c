/* buf.c: the growable byte buffer. */
#include "base/buf.h"

#include "base/arena.h"
#include "base/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int buf_grow(struct buf *b, size_t extra)
{
    size_t need, cap;
    char *data;

    if (extra > SIZE_MAX / 2 - b->len - 1)
        return PURSER_ETOOLARGE;
    need = b->len + extra + 1;
    if (b->limit && need - 1 > b->limit)
        return PURSER_ETOOLARGE;
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    data = arena_injected_failure() ? NULL : realloc(b->data, cap);
    if (!data)
        return PURSER_EINTERNAL;
    if (!b->data)
        data[0] = '\0';
    b->data = data;
    b->cap = cap;
    return 0;
}

int buf_add(struct buf *b, const void *data, size_t n)
{
    int rc = buf_grow(b, n);
    if (!rc) {
        if (n)
            memcpy(b->data + b->len, data, n);
        b->len += n;
        b->data[b->len] = '\0';
    }
    return rc;
}

int buf_adds(struct buf *b, const char *s)
{
    return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
    return buf_add(b, &c, 1);
}

/* Formats into the room the buffer has, and only when the text is longer formats again after
 * growing it: once, not twice, for the short texts most calls write. */
int buf_printf(struct buf *b, const char *fmt, ...)
{
    size_t room = b->data ? b->cap - b->len : 0;
    va_list ap;
    int n, rc;

    va_start(ap, fmt);
    n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (b->limit && b->len + (size_t)n > b->limit)) {
        if (room)
            b->data[b->len] = '\0';
        return n < 0 ? PURSER_EINTERNAL : PURSER_ETOOLARGE;
    }
    if ((size_t)n < room) {
        b->len += (size_t)n;
        return 0;
    }
    if (room)
        b->data[b->len] = '\0';
    rc = buf_grow(b, (size_t)n);
    if (!rc) {
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
    }
    return rc;
}

const char *buf_cstr(const struct buf *b)
{
    return b->data ? b->data : "";
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_release(struct buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

char *buf_detach(struct buf *b, size_t *len_out)
{
    char *out;
    if (!b->data && buf_grow(b, 0))
        return NULL;
    out = b->data;
    if (len_out)
        *len_out = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return out;
}

const char *decimal_text(char out[24], unsigned long long v)
{
    char *p = out + 23;
    *p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    return p;
}
