/* fuzz.h: what the libFuzzer targets of t/fuzz share (make fuzz; docs/developer.md, "Fuzzing").
 * Each target is one file, LLVMFuzzerTestOneInput over one parser that takes outside input, and its
 * seed corpus is t/fuzz/corpus/<target>/. A crash found becomes a file of that corpus, which make
 * test replays (t/0009). */
#ifndef PURSER_FUZZ_H
#define PURSER_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A NUL-terminated copy of the input (malloc'd). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* Splits text at its first newline: *rest is what follows (or ""). */
static inline char *fuzz_line(char *text, char **rest)
{
    char *nl = strchr(text, '\n');
    *rest = nl ? nl + 1 : text + strlen(text);
    if (nl)
        *nl = '\0';
    return text;
}

#endif
