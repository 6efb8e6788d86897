/* html.c: escaping text for HTML (html.h). */
#include "base/html.h"

#include <string.h>

int html_escape(struct buf *out, const char *text)
{
    int rc = 0;
    while (!rc && *text) {
        size_t plain = strcspn(text, "&<>\"'");
        rc = buf_add(out, text, plain);
        text += plain;
        if (rc || !*text)
            break;
        switch (*text++) {
        case '&': rc = buf_adds(out, "&amp;"); break;
        case '<': rc = buf_adds(out, "&lt;"); break;
        case '>': rc = buf_adds(out, "&gt;"); break;
        case '"': rc = buf_adds(out, "&quot;"); break;
        default: rc = buf_adds(out, "&#39;");
        }
    }
    return rc;
}
