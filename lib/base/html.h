/* html.h: the one place text is escaped for HTML (as cgit's html.c is): the few pages purser's
 * C writes itself (a refused sign-in's page) put every text through it. The admin pages build
 * their HTML with the DOM (nginx/admin/dom.js), never from strings. */
#ifndef PURSER_HTML_H
#define PURSER_HTML_H

#include "base/buf.h"

/* Appends text to out with & < > " ' as character references: safe in an element's content and
 * in a quoted attribute. 0, or buf's error (out then holds a prefix). */
int html_escape(struct buf *out, const char *text);

#endif
