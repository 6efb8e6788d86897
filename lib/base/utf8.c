/* utf8.c: well-formed UTF-8 (RFC 3629), checked and repaired. */
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int utf8_sequence(const unsigned char *s, size_t n)
{
    int len = s[0] < 0x80             ? 1
              : (s[0] & 0xE0) == 0xC0 ? 2
              : (s[0] & 0xF0) == 0xE0 ? 3
              : (s[0] & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (len == 0 || (size_t)len > n)
        return 0;
    for (int i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 2 && s[0] < 0xC2)
        return 0; /* overlong */
    if (len == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0)))
        return 0; /* overlong, or a surrogate */
    if (len == 4 &&
        ((s[0] == 0xF0 && s[1] < 0x90) || s[0] > 0xF4 || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 0; /* overlong, or past U+10FFFF */
    return len;
}

size_t utf8_count(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += ((unsigned char)s[i] & 0xC0) != 0x80;
    return count;
}

size_t utf8_prefix(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--; /* s[max] continues a character: cut before that character starts */
    return max;
}

int utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        int len = p[i] ? utf8_sequence(p + i, n - i) : 0;
        if (!len)
            return 0;
        i += (size_t)len;
    }
    return 1;
}

char *utf8_escape(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;
    char *out = malloc(n * 4 + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        int len = utf8_sequence(p + i, n - i);
        if (len) {
            memcpy(out + o, p + i, (size_t)len);
            o += (size_t)len;
            i += (size_t)len;
        } else {
            snprintf(out + o, 5, "\\x%02x", p[i++]);
            o += 4;
        }
    }
    out[o] = '\0';
    return out;
}

int utf8_has_control(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] == 0x7f ||
            (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f))
            return 1;
    return 0;
}

size_t utf8_prefix_chars(const char *s, size_t n, size_t max_chars)
{
    size_t at = 0;
    for (size_t chars = 0; at < n && chars < max_chars; chars++) {
        int len = utf8_sequence((const unsigned char *)s + at, n - at);
        at += len ? (size_t)len : 1;
    }
    return at;
}
