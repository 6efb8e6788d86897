/* err.c: filling purser_error structs and naming error codes. */
#include "base/err.h"

#include "base/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void error_vset(struct purser_error *err, enum purser_err code, int line, int column,
                       const char *fmt, va_list ap)
{
    if (!err)
        return;
    err->code = code;
    err->line = line;
    err->column = column;
    /* A message too long is cut on a whole UTF-8 character, not inside one (it may quote a
     * client's text, and half a character is not UTF-8): formatted with room for the bytes
     * just past the cut, which tell where the character there starts. */
    char text[sizeof(err->message) + 4];
    size_t len = vsnprintf(text, sizeof(text), fmt, ap) < 0 ? 0 : strlen(text);
    len = utf8_prefix(text, len, sizeof(err->message) - 1);
    memcpy(err->message, text, len);
    err->message[len] = '\0';
}

int purser_error_set(struct purser_error *err, enum purser_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, code, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

int purser_error_set_at(struct purser_error *err, enum purser_err code, int line, int column,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, code, line, column, fmt, ap);
    va_end(ap);
    return code;
}

void purser_error_clear(struct purser_error *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}

const char *purser_err_name(enum purser_err code)
{
    switch (code) {
    case PURSER_OK: return "ok";
    case PURSER_EINVAL: return "bad_request";
    case PURSER_EUNAUTH: return "unauthenticated";
    case PURSER_EDENIED: return "access_denied";
    case PURSER_ENOTFOUND: return "not_found";
    case PURSER_EEXISTS: return "already_exists";
    case PURSER_ECOMPARE: return "compare_failed";
    case PURSER_ETOOLARGE: return "too_large";
    case PURSER_ELIMIT: return "limit_exceeded";
    case PURSER_EUNAVAIL: return "unavailable";
    case PURSER_EGONE: return "gone";
    case PURSER_EINTERNAL: break;
    }
    return "internal";
}
