/* key_expiry.h: when the next Chef key expires, for GET /metrics (an alert's warning ahead). */
#ifndef PURSER_KEY_EXPIRY_H
#define PURSER_KEY_EXPIRY_H

#include "base/err.h"
#include "store/store.h"

/* *seconds_out gets the Unix time at which the first key of principal_keys that has not
 * expired yet will expire, or 0 when no live key has an expiration date. 0, or
 * PURSER_EUNAVAIL (err filled) when the database does not answer. */
int key_expiry_next(struct store *store, long long *seconds_out, struct purser_error *err);

#endif
