/* 0002-buf: the growable buffer's invariants. */
#include "base/buf.h"
#include "base/err.h"
#include "tap.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    struct buf b = BUF_INIT;
    char *detached;
    size_t len;
    tap_init(argc, argv);

    tap_is_str(buf_cstr(&b), "", "a new buffer reads as the empty string");
    tap_is_int(b.len, 0, "and has length 0");
    tap_is_int(buf_adds(&b, "abc"), 0, "adds");
    tap_is_int(buf_addc(&b, 'd'), 0, "addc");
    tap_is_int(buf_printf(&b, "-%03d", 7), 0, "printf");
    tap_is_str(buf_cstr(&b), "abcd-007", "contents after appends");
    tap_is_int(b.len, 8, "length after appends");
    tap_ok(b.data[b.len] == '\0', "always NUL-terminated");
    tap_is_int(buf_add(&b, "x\0y", 3), 0, "add with an inner NUL");
    tap_is_int(b.len, 11, "the inner NUL counts");
    for (int i = 0; i < 10000; i++)
        buf_addc(&b, 'z');
    tap_is_int(b.len, 10011, "grows past many doublings");
    tap_ok(b.cap > b.len, "capacity stays above the length");
    buf_reset(&b);
    tap_is_int(b.len, 0, "reset empties");
    tap_is_str(buf_cstr(&b), "", "reset leaves an empty string");
    buf_adds(&b, "keep");
    detached = buf_detach(&b, &len);
    tap_is_str(detached, "keep", "detach hands over the contents");
    tap_is_int(len, 4, "with its length");
    tap_ok(b.data == NULL && b.len == 0, "and leaves the buffer empty");
    free(detached);
    detached = buf_detach(&b, NULL);
    tap_is_str(detached, "", "detaching an empty buffer gives an empty string");
    free(detached);

    b.limit = 5;
    tap_is_int(buf_adds(&b, "12345"), 0, "up to the limit");
    tap_is_int(buf_addc(&b, '6'), PURSER_ETOOLARGE, "past the limit is refused");
    tap_is_str(buf_cstr(&b), "12345", "a refused append changes nothing");
    tap_is_int(buf_printf(&b, "%d", 6), PURSER_ETOOLARGE, "a format past the limit is refused");
    tap_is_str(buf_cstr(&b), "12345", "  and changes nothing, though it had the room");
    buf_release(&b);

    /* printf formats into the room the buffer has, else grows and formats again */
    b.limit = 0;
    buf_adds(&b, "ab");
    tap_is_int(buf_printf(&b, "%s-%d", "cd", 42), 0, "printf within the room");
    tap_is_str(buf_cstr(&b), "abcd-42", "  appends");
    len = b.cap - b.len - 1; /* exactly what still fits with its NUL */
    tap_is_int(buf_printf(&b, "%0*d", (int)len, 0), 0, "printf that fills the room exactly");
    tap_ok(b.len == 7 + len && b.data[b.len] == '\0' && b.data[b.len - 1] == '0', "  appends it");
    tap_is_int(buf_printf(&b, "%s|%0300d", "x", 1), 0, "printf longer than the room");
    tap_ok(b.len == 7 + len + 302 && b.data[7 + len] == 'x' && b.data[b.len - 1] == '1' &&
               b.data[b.len] == '\0',
           "  grows and appends it whole");
    buf_release(&b);
    tap_ok(b.data == NULL && b.cap == 0, "release frees and resets");
    buf_release(NULL);
    return tap_done();
}
