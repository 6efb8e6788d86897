/* events_publish.h: the store's commit hook that wakes the event feed's waiting readers. lib/
 * records events (store/events.h) and hands each committed transaction's to the hook
 * (store_set_commit_hook); speaking HTTP to nginx's nchan is the web layer's, here. */
#ifndef PURSER_EVENTS_PUBLISH_H
#define PURSER_EVENTS_PUBLISH_H

struct json_t;

/* The commit hook (store_set_commit_hook) that posts each committed transaction's events to
 * nginx's nchan publisher at the unix socket `socket_path` (a string that must outlive the
 * store): per organization and transaction, channel "e<org>.<seq before>" gets
 * {events, next} and "w<org>.<seq before>" gets {events: [], next: seq before} (readers
 * with a kinds filter wake there and read again). Each goes to this host's nginx's /pub/
 * (memory only: on several hosts each host's events follower posts what any host committed,
 * events_publish_followed). Failures are logged and dropped: the log in the database stays the
 * truth, and a waiter that missed a wake-up times out and asks again with since. */
void events_publish(void *socket_path, const struct json_t *notices);

/* The events follower's post (fcgi/follower.c): events (a page's, oldest first, borrowed) of
 * org up to next, read from the log, posted as events_publish posts a commit's, to every
 * boundary a reader may wait at: channel e<org>.<seq - 1> of each event gets the events from
 * it on (or, past the last 50, a wake-up), w<org>.<seq - 1> a wake-up. A reader waits at a
 * commit's boundary, and the follower cannot tell which seqs are boundaries, so it serves
 * them all; posting one twice (the writer's host posts it at commit too) is harmless. */
void events_publish_followed(const char *socket_path, long long org, const struct json_t *events,
                             long long next);

#endif
