/* log.c: JSON log lines on standard error. */
#include "base/log.h"

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

void log_write(const json_t *line)
{
    char stack[2048], *text = stack;
    size_t len = json_dumpb(line, stack, sizeof(stack) - 1, JSON_COMPACT | JSON_REAL_PRECISION(9));
    if (len == 0)
        return;
    if (len >= sizeof(stack) - 1) { /* a long line: the heap */
        if (!(text = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(9))))
            return;
        len = strlen(text);
    }
    text[len] = '\n'; /* the NUL's place: one write, the line and its newline */
    (void)!write(STDERR_FILENO, text, len + 1);
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
