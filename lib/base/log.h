/* log.h: one JSON object per line on standard error (the service's log).
 *
 * Callers build the object with jansson and never put a request body, a token, a password or
 * a key in it. Each line is written with one write() so lines from several workers sharing
 * the log file never interleave.
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

/* The pid to put in a line (looked up once per process). */
long log_process_id(void);

/* A line with "level" and "msg", plus any fields given (borrowed; may be NULL). */
void log_message(const char *level, const char *message, json_t *fields);

/* Call in a child after fork(): the "pid" of its lines is looked up again. */
void log_reset_pid(void);

/* The current UTC time as "2026-01-02T03:04:05.678Z" into out (at least 32 bytes). */
void log_timestamp(char *out, unsigned long size);

#endif
