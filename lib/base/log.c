/* log.c: JSON log lines on standard error. */
#include "base/log.h"

#include "base/buf.h"
#include "base/json_text.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

void log_timestamp(char *out, unsigned long size)
{
    static time_t last_second = -1;
    static char base[32]; /* "2026-01-02T03:04:05", redone once a second */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    if (tv.tv_sec != last_second) {
        struct tm tm;
        gmtime_r(&tv.tv_sec, &tm);
        strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
        last_second = tv.tv_sec;
    }
    snprintf(out, size, "%s.%03ldZ", base, (long)(tv.tv_usec / 1000));
}

/* getpid() once per process: a forked child starts with pid 0 here again (log_reset_pid). */
static pid_t cached_pid;

void log_reset_pid(void)
{
    cached_pid = 0;
}

static pid_t log_pid(void)
{
    if (!cached_pid)
        cached_pid = getpid();
    return cached_pid;
}

/* ---- held-back request lines ------------------------------------------------------------- */

static char held[LOG_BUFFER_BYTES];
static size_t held_len;
static time_t held_since;

static void write_all(const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, text, len);
        if (n <= 0)
            return; /* the log is gone: nothing better to do with the lines */
        text += n;
        len -= (size_t)n;
    }
}

void log_flush(void)
{
    if (held_len)
        write_all(held, held_len);
    held_len = 0;
}

void log_buffer_line(const char *text, size_t len)
{
    time_t now = time(NULL);
    if (held_len && (held_len + len + 1 > sizeof(held) || now - held_since >= 1))
        log_flush();
    if (len + 1 > sizeof(held)) {
        char *line = malloc(len + 1);
        if (!line)
            return;
        memcpy(line, text, len);
        line[len] = '\n';
        write_all(line, len + 1);
        free(line);
        return;
    }
    if (!held_len)
        held_since = now;
    memcpy(held + held_len, text, len);
    held[held_len + len] = '\n';
    held_len += len + 1;
}

int log_json_string(struct buf *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    int rc = buf_addc(out, '"');
    while (!rc && *p) {
        int n = utf8_sequence(p, (size_t)(end - p));
        if (*p == '"' || *p == '\\') {
            rc = buf_addc(out, '\\');
            if (!rc)
                rc = buf_addc(out, (char)*p);
        } else if (*p < 0x20)
            rc = buf_printf(out, "\\u%04x", *p);
        else if (n == 0)
            rc = buf_adds(out, "\xef\xbf\xbd"); /* U+FFFD for a byte that is not UTF-8 */
        else {
            rc = buf_add(out, p, (size_t)n);
            p += n;
            continue;
        }
        p++;
    }
    if (!rc)
        rc = buf_addc(out, '"');
    return rc;
}

void log_write(const json_t *line)
{
    char stack[2048], *text = stack;
    size_t len = json_dumpb(line, stack, sizeof(stack) - 1, JSON_COMPACT | JSON_REAL_PRECISION(9));
    if (len == 0)
        return;
    if (len >= sizeof(stack) - 1) { /* a long line: the heap */
        if (!(text = json_text(line, JSON_COMPACT | JSON_REAL_PRECISION(9))))
            return;
        len = strlen(text);
    }
    text[len] = '\n'; /* the NUL's place: one write, the line and its newline */
    log_flush();      /* the held request lines come first */
    write_all(text, len + 1);
    if (text != stack)
        free(text);
}

void log_json(json_t *fields)
{
    json_t *line = json_object();
    char ts[40];
    if (!line)
        return;
    log_timestamp(ts, sizeof(ts));
    json_object_set_new(line, "ts", json_string(ts));
    json_object_set_new(line, "pid", json_integer(log_pid()));
    json_object_update(line, fields);
    log_write(line);
    json_decref(line);
}

/* The process's pid for log lines, without a syscall per line. */
long log_process_id(void)
{
    return (long)log_pid();
}

void log_message(const char *level, const char *message, json_t *fields)
{
    json_t *line = json_object();
    if (!line)
        return;
    json_object_set_new(line, "level", json_string(level));
    json_object_set_new(line, "msg", json_string(message));
    if (fields)
        json_object_update(line, fields);
    log_json(line);
    json_decref(line);
}
