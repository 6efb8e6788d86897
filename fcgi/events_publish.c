/* events_publish.c: committed events posted to nginx's nchan publisher (events_publish.h), so
 * that readers waiting with wait= are held by nginx, not by a purser worker. */
#include "events_publish.h"

#include "base/io.h"
#include "base/json_text.h"
#include "base/log.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A wake-up carrying more than this many bytes of events carries none: the reader reads
 * them from the log (nchan keeps each message in shared memory for a minute). */
#define PUBLISH_MAX_BODY 65536

/* One POST to the publisher location /<where>/<channel>; 0 when nchan answered 2xx. */
static int post(const char *socket_path, const char *where, const char *channel, const char *body)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    struct timeval timeout = {.tv_sec = 1};
    char head[256], status[16] = "";
    size_t len = strlen(body);
    int fd, rc = -1;
    if (strlen(socket_path) >= sizeof(addr.sun_path))
        return -1;
    strcpy(addr.sun_path, socket_path);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    snprintf(head, sizeof(head),
             "POST /%s/%s HTTP/1.0\r\nHost: purser\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n",
             where, channel, len);
    if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr)) &&
        !io_write_all(fd, head, strlen(head)) && !io_write_all(fd, body, len)) {
        ssize_t n = read(fd, status, sizeof(status) - 1); /* "HTTP/1.1 201 Created" */
        if (n > 12)
            status[n] = 0, rc = status[9] == '2' ? 0 : -1;
    }
    close(fd);
    return rc;
}

static void publish_one(const char *socket_path, long long org, long long before, json_t *events,
                        long long last)
{
    json_t *page = json_pack("{s:O, s:I}", "events", events, "next", (json_int_t)last);
    char *full = json_text(page, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char channel[64], empty[64];
    int events_rc, wake_rc;
    snprintf(empty, sizeof(empty), "{\"events\":[],\"next\":%lld}", before);
    snprintf(channel, sizeof(channel), "e%lld.%lld", org, before);
    events_rc =
        post(socket_path, "pub", channel,
             full && strlen(full) <= PUBLISH_MAX_BODY && json_array_size(events) ? full : empty);
    snprintf(channel, sizeof(channel), "w%lld.%lld", org, before);
    wake_rc = post(socket_path, "pub", channel, empty);
    if (events_rc || wake_rc) {
        json_t *fields = json_pack("{s:s, s:I, s:I}", "socket", socket_path, "org", (json_int_t)org,
                                   "seq", (json_int_t)(before + 1));
        log_message("warn",
                    "events: posting to the nchan publisher failed (waiters read the log again "
                    "at their timeout)",
                    fields);
        json_decref(fields);
    }
    free(full);
    json_decref(page);
}

void events_publish(void *socket_path, const struct json_t *notices)
{
    size_t n = json_array_size(notices);
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    /* per organization, the transaction's events in order (a write may touch several) */
    for (size_t i = 0; i < n; i++) {
        long long org, first, last;
        json_t *events;
        if (done[i])
            continue;
        org = json_integer_value(json_object_get(json_array_get(notices, i), "org"));
        first = last = json_integer_value(json_object_get(json_array_get(notices, i), "seq"));
        events = json_array();
        for (size_t j = i; j < n; j++) {
            json_t *notice = json_array_get(notices, j);
            if (done[j] || json_integer_value(json_object_get(notice, "org")) != org)
                continue;
            done[j] = 1;
            last = json_integer_value(json_object_get(notice, "seq"));
            json_array_append(events, json_object_get(notice, "event"));
        }
        publish_one(socket_path, org, first - 1, events, last);
        json_decref(events);
    }
    free(done);
}

/* The follower posts a page with its events to a boundary this many events from the end at
 * most; one further back gets a wake-up (the reader reads the log), so that a burst of n events
 * costs n posts of bounded size, not n pages of up to n events each. */
#define FOLLOW_FULL_PAGE 50

void events_publish_followed(const char *socket_path, long long org, const json_t *events,
                             long long next)
{
    size_t n = json_array_size(events);
    for (size_t i = 0; i < n; i++) {
        long long seq = json_integer_value(json_object_get(json_array_get(events, i), "seq"));
        json_t *slice = json_array();
        for (size_t j = i; n - i <= FOLLOW_FULL_PAGE && j < n; j++)
            json_array_append(slice, json_array_get(events, j));
        if (slice && seq > 0)
            publish_one(socket_path, org, seq - 1, slice, next);
        json_decref(slice);
    }
}
