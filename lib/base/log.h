/* log.h: one JSON object per line on standard error (the service's log).
 *
 * Callers build the object with jansson and never put a request body, a token, a password or
 * a key in it. Each line is written with one write() so lines from several workers sharing
 * the log file never interleave.
 *
 * Request lines (one per request, the busiest) may be held back in a per-process buffer and
 * written together: whole lines only, at most LOG_BUFFER_BYTES at once (PIPE_BUF: a write
 * that size to a pipe is still atomic), and never later than a second after the first of
 * them or than the next line written any other way. The worker flushes whenever it goes idle,
 * so under light load every line is out as soon as its request is answered. A process killed
 * outright loses what it held (at most a second's request lines, as nginx's buffered
 * access_log does).
 */
#ifndef PURSER_LOG_H
#define PURSER_LOG_H

#include <jansson.h>

/* Writes fields (borrowed) as one line, adding "ts" (UTC ISO 8601 with milliseconds) and
 * "pid" first when they are absent. */
void log_json(json_t *fields);

/* Writes line as it is (the caller put "ts" and "pid" first): the request path's way, which
 * builds its object once. */
void log_write(const json_t *line);

#define LOG_BUFFER_BYTES 4096

struct buf;

/* Appends s as a JSON string (quoted, escaped; bytes that are not UTF-8 become U+FFFD). */
int log_json_string(struct buf *out, const char *s);

/* Adds one finished line (without its newline) to the buffer, writing the buffer first when
 * the line would not fit or the oldest line has waited a second; a line longer than the
 * buffer is written at once. */
void log_buffer_line(const char *text, size_t len);

/* Writes what the buffer holds (nothing when empty). */
void log_flush(void);

/* The pid to put in a line (looked up once per process). */
long log_process_id(void);

/* A line with "level" and "msg", plus any fields given (borrowed; may be NULL). */
void log_message(const char *level, const char *message, json_t *fields);

/* Call in a child after fork(): the "pid" of its lines is looked up again. */
void log_reset_pid(void);

/* The current UTC time as "2026-01-02T03:04:05.678Z" into out (at least 32 bytes). */
void log_timestamp(char *out, unsigned long size);

#endif
