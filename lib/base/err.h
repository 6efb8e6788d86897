/* err.h: purser's error codes and the caller-owned error struct every lib/ function fills.
 *
 * Functions in lib/ return 0 on success or a negative enum purser_err value on failure. When
 * they take a `struct purser_error *err`, they fill it (if not NULL) with the code, and a
 * message that names the field or the position at fault. The message never holds a secret.
 */
#ifndef PURSER_ERR_H
#define PURSER_ERR_H

#include <stddef.h>

enum purser_err {
    PURSER_OK = 0,
    PURSER_EINVAL = -1,     /* bad input: malformed, wrong type, unknown field (400) */
    PURSER_EUNAUTH = -2,    /* no or wrong credentials (401) */
    PURSER_EDENIED = -3,    /* authenticated but not allowed (403) */
    PURSER_ENOTFOUND = -4,  /* no such thing (404) */
    PURSER_EEXISTS = -7,    /* already exists, or conflicts with what is stored (409) */
    PURSER_ECOMPARE = -8,   /* a precondition (revision, If-Match) failed (412) */
    PURSER_ETOOLARGE = -9,  /* over a size limit (413) */
    PURSER_ELIMIT = -11,    /* rate or quota limit (429) */
    PURSER_EINTERNAL = -12, /* a bug or an unexpected system failure (500) */
    PURSER_EUNAVAIL = -13,  /* a dependency (the database) is unreachable (503) */
    PURSER_EGONE = -14,     /* what was asked for is no longer kept (410) */
    /* -5, -6 and -10 are the web layer's (fcgi/request.h: method, acceptable, media type) */
};

#define PURSER_ERROR_MESSAGE_SIZE 256

/* Where an error came from, as precisely as the failing function knows. */
struct purser_error {
    enum purser_err code;
    int line;   /* 1-based line in the input, or 0 when not about a text position */
    int column; /* 1-based column, or 0 */
    char message[PURSER_ERROR_MESSAGE_SIZE];
};

/* Fills err (if not NULL) with code and a printf-style message; returns code, so that callers
 * can write `return purser_error_set(err, PURSER_EINVAL, "field '%s' ...", name);`. */
int purser_error_set(struct purser_error *err, enum purser_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like purser_error_set, with a text position. */
int purser_error_set_at(struct purser_error *err, enum purser_err code, int line, int column,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Resets err to "no error". */
void purser_error_clear(struct purser_error *err);

/* The short machine name of a code: "bad_request", "not_found", ... (SPEC §2). */
const char *purser_err_name(enum purser_err code);

#endif
