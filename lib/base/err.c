/* err.c: filling purser_error structs and naming error codes. */
#include "base/err.h"

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
    int n = vsnprintf(err->message, sizeof(err->message), fmt, ap);
    if (n >= (int)sizeof(err->message)) {
        /* Cut: end on a whole UTF-8 character, not inside one (the message may quote a
         * client's text, and a half character is not UTF-8). */
        size_t len = sizeof(err->message) - 1, end = len;
        while (end > 0 && ((unsigned char)err->message[end - 1] & 0xC0) == 0x80)
            end--;
        if (end > 0 && (unsigned char)err->message[end - 1] >= 0xC0) {
            unsigned char lead = (unsigned char)err->message[end - 1];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            if (len - (end - 1) < need)
                err->message[end - 1] = '\0';
        }
    }
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
    case PURSER_EINTERNAL: break;
    }
    return "internal";
}
