/* fleet-ohai.h: what bench/fleet-load.c takes from fleet-ohai.c (bench only, not part of
 * purser). */
#ifndef FLEET_OHAI_H
#define FLEET_OHAI_H

#include <jansson.h>
#include <stddef.h>

/* A well-mixed hash of x (the generator's only randomness: the same seed, the same node). */
unsigned long fleet_mix(unsigned long x);

/* Node n's automatic attributes at its run k (a new reference), named name, about target bytes
 * once dumped: the static parts from n, what changes each run from k. */
json_t *fleet_ohai(const char *name, size_t n, long k, size_t target);

#endif
