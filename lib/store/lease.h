/* lease.h: a lease on a named duty, one holder at a time across every host of one database
 * (a row of the settings table, so a Galera cluster agrees on it as on any write).
 */
#ifndef PURSER_LEASE_H
#define PURSER_LEASE_H

#include "store/store.h"

/* Takes or renews the lease name ("expiry") for holder (a text naming this process, such as
 * "host:pid") for seconds: *held is 1 when holder has it now (it had it already, or the
 * last holder did not renew it within seconds), 0 when another holds it. Two takers at once
 * on different Galera nodes: one commit wins, the other fails (an error, nothing held).
 * name is at most 180 bytes. */
int lease_take(struct store *store, const char *name, const char *holder, long seconds, int *held,
               struct purser_error *err);

#endif
