/* follower.h: the events follower, a child of purser-fcgi's master on each host (README,
 * "Deploying on several hosts": one event feed across hosts). */
#ifndef PURSER_FOLLOWER_H
#define PURSER_FOLLOWER_H

#include "config/config.h"

/* Follows the events table every events.follow_interval milliseconds until SIGTERM (or its
 * master's end): each organization's events committed since its last look, through any host,
 * are posted to this host's nchan (events_publish_followed), so that readers waiting here wake
 * for commits made elsewhere. At start it posts again what was committed in the last few
 * seconds (what a follower that died may have missed). Returns the process exit status. */
int follower_run(const struct purser_config *cfg);

#endif
