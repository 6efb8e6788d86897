/* handlers.h: every request handler, by resource family (one .c file each). */
#ifndef PURSER_HANDLERS_H
#define PURSER_HANDLERS_H

#include "request.h"

/* health.c */
int health_live(struct request *req);
int health_deep(struct request *req);

#endif
