/* 0005-log: the log's held-back request lines (written whole, in order, at most a buffer at
 * once, never after another kind of line), the JSON string writer of the request line, and the
 * UTF-8 helpers its messages rely on. */
#include "base/buf.h"
#include "base/log.h"
#include "base/utf8.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[] = "/tmp/purser-0005-XXXXXX";

/* What standard error (the log file) holds so far. */
static char *logged(void)
{
    static char text[65536];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
    if (fd >= 0)
        close(fd);
    text[n > 0 ? n : 0] = '\0';
    return text;
}

static size_t logged_len(void)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static const char *escaped(const char *s)
{
    static struct buf b = BUF_INIT;
    buf_reset(&b);
    log_json_string(&b, s);
    return buf_cstr(&b);
}

int main(int argc, char **argv)
{
    int fd = mkstemp(path);
    char line[1001];
    tap_init(argc, argv);
    if (!tap_ok(fd >= 0 && dup2(fd, STDERR_FILENO) >= 0, "standard error is a file"))
        return tap_done();

    log_buffer_line("{\"n\":1}", 7);
    log_buffer_line("{\"n\":2}", 7);
    tap_is_int(logged_len(), 0, "held lines are not written yet");
    log_flush();
    tap_is_str(logged(), "{\"n\":1}\n{\"n\":2}\n", "a flush writes them, whole and in order");
    log_flush();
    tap_is_int(logged_len(), 16, "an empty flush writes nothing");

    log_buffer_line("{\"n\":3}", 7);
    log_message("warning", "something else", NULL);
    tap_ok(strstr(logged(), "{\"n\":3}\n{\"ts\":") != NULL,
           "a line of another kind writes the held ones first");
    tap_ok(strstr(logged(), "\"msg\":\"something else\"}\n") != NULL, "and then itself");

    ftruncate(STDERR_FILENO, 0);
    lseek(STDERR_FILENO, 0, SEEK_SET);
    memset(line, 'x', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\0';
    for (int i = 0; i < 4; i++)
        log_buffer_line(line, 1000);
    tap_is_int(logged_len(), 0, "four lines of 1000 bytes fit in the buffer");
    log_buffer_line(line, 1000);
    tap_is_int(logged_len(), 4004, "the fifth writes the first four (whole lines, one buffer)");
    tap_ok(LOG_BUFFER_BYTES <= 4096, "a buffer is at most PIPE_BUF, so a write of it is atomic");
    {
        char *big = malloc(5001);
        memset(big, 'y', 5000);
        big[5000] = '\0';
        log_buffer_line(big, 5000);
        tap_is_int(logged_len(), 4004 + 1001 + 5001,
                   "a line longer than the buffer goes out at once, after the held one");
        free(big);
    }
    log_buffer_line("{\"n\":4}", 7);
    sleep(1);
    log_buffer_line("{\"n\":5}", 7);
    tap_ok(strstr(logged(), "{\"n\":4}\n") != NULL && strstr(logged(), "{\"n\":5}") == NULL,
           "a line held a second is written when the next one comes");
    log_flush();

    tap_is_str(escaped("GET"), "\"GET\"", "a plain string is quoted");
    tap_is_str(escaped("a\"b\\c"), "\"a\\\"b\\\\c\"", "quotes and backslashes are escaped");
    tap_is_str(escaped("a\nb\x01"), "\"a\\u000ab\\u0001\"", "control characters as \\u");
    tap_is_str(escaped("caf\xc3\xa9/\xe2\x82\xac"), "\"caf\xc3\xa9/\xe2\x82\xac\"",
               "UTF-8 passes as it is");
    tap_is_str(escaped("a\xff"
                       "b\xc3"),
               "\"a\xef\xbf\xbd"
               "b\xef\xbf\xbd\"",
               "bytes that are not UTF-8 become U+FFFD");
    tap_is_str(escaped("\xed\xa0\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
               "so does an encoded surrogate");
    /* The UTF-8 helpers the messages rely on. */
    tap_is_int(utf8_count("caf\xc3\xa9\xe2\x82\xac", 8), 5, "utf8_count counts characters");
    tap_is_int(utf8_prefix("ab\xc3\xa9", 4, 3), 2, "utf8_prefix cuts before a split character");
    tap_is_int(utf8_prefix("ab\xc3\xa9", 4, 4), 4, "and keeps a string that fits");
    tap_is_int(utf8_prefix("a\xe2\x82\xac", 4, 3), 1,
               "and a three-byte character whole or not at all");
    tap_is_int(utf8_prefix_chars("a\xc3\xa9\xe2\x82\xac!", 7, 3), 6,
               "utf8_prefix_chars: three characters are six bytes here");
    tap_is_int(utf8_prefix_chars("ab", 2, 5), 2, "and a shorter string is kept whole");
    tap_is_int(utf8_prefix_chars("\xff\xfe"
                                 "a",
                                 3, 2),
               2, "a byte that starts no character counts as one");
    unlink(path);
    return tap_done();
}
