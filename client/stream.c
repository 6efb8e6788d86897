/* stream.c: purserctl's streams: watch follows the event feed; export and import move an
 * organization as its YAML stream. */
#include "ctl.h"

#include "base/secret_file.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FEED "/organizations/{org}/events"
#define WATCH_WAIT 30        /* seconds the server holds a poll (its limit is 60) */
#define WATCH_SLACK 15       /* more seconds before purserctl gives up on a held poll */
#define WATCH_BACKOFF_MAX 16 /* seconds between retries, at most */

/* ---- watch ------------------------------------------------------------------------------ */

struct watch {
    struct ctl *ctl;
    const struct ctl_command *self;
    const char *kinds; /* --kinds, or NULL */
    const char *actor; /* --actor, or NULL */
    long last;         /* --last: the newest N printed first (0: none) */
    long long since;   /* the seq the next poll asks after: every event up to it is printed */
    double deadline;   /* --timeout's end, on the monotonic clock; 0: none */
    int answered;      /* an answer came: from then on, failures are retried */
    int header_shown;
};

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Seconds until --timeout's end (a day when there is none). */
static double watch_left(const struct watch *w)
{
    return w->deadline ? w->deadline - monotonic_seconds() : 86400;
}

static int watch_parse(struct watch *w, int argc, char **argv, int *since_given)
{
    static const struct option options[] = {
        {"since", required_argument, NULL, 's'},   {"kinds", required_argument, NULL, 'k'},
        {"actor", required_argument, NULL, 'a'},   {"last", required_argument, NULL, 'l'},
        {"timeout", required_argument, NULL, 't'}, {NULL, 0, NULL, 0}};
    char *end;
    long timeout;
    int opt;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
        switch (opt) {
        case 's':
            w->since = strtoll(optarg, &end, 10);
            if (!*optarg || *end || w->since < 0)
                return ctl_usage(w->self, "--since: a seq (0 or more), not %s", optarg);
            *since_given = 1;
            break;
        case 'k': w->kinds = *optarg ? optarg : NULL; break;
        case 'a': w->actor = *optarg ? optarg : NULL; break;
        case 'l':
            w->last = strtol(optarg, &end, 10);
            if (!*optarg || *end || w->last < 1 || w->last > 1000)
                return ctl_usage(w->self, "--last: a number of events (1 to 1000), not %s", optarg);
            break;
        case 't':
            timeout = strtol(optarg, &end, 10);
            if (!*optarg || *end || timeout <= 0)
                return ctl_usage(w->self, "--timeout: seconds (1 or more), not %s", optarg);
            w->deadline = monotonic_seconds() + (double)timeout;
            break;
        default: return ctl_usage(w->self, NULL);
        }
    if (optind < argc)
        return ctl_usage(w->self, "no arguments, only options");
    if (w->last && *since_given)
        return ctl_usage(w->self, "--last or --since, not both");
    return CTL_OK;
}

/* One GET of the feed after since (below 0: its newest -since events), held up to wait
 * seconds; CTL_OK with any answer. */
static int feed_get(struct watch *w, long long since, const char *kinds, const char *page_size,
                    long wait, struct ctl_answer *out)
{
    struct buf query = BUF_INIT;
    struct ctl_request request = {.method = "GET", .template = FEED};
    char number[24];
    int rc;

    snprintf(number, sizeof(number), "%lld", since < 0 ? -since : since);
    ctl_query_add(&query, since < 0 ? "last" : "since", number); /* since < 0: the newest -since */
    if (kinds)
        ctl_query_add(&query, "kinds", kinds);
    if (w->actor)
        ctl_query_add(&query, "actor", w->actor);
    if (page_size)
        ctl_query_add(&query, "page_size", page_size);
    if (wait > 0) {
        snprintf(number, sizeof(number), "%ld", wait);
        ctl_query_add(&query, "wait", number);
    }
    request.query = query.data;
    request.timeout = wait + WATCH_SLACK;
    if (w->deadline && watch_left(w) + 2 < request.timeout)
        request.timeout = (long)watch_left(w) + 2;
    rc = ctl_send(w->ctl, &request, out);
    buf_release(&query);
    return rc;
}

/* A feed page ({events: [...], next}) from a 2xx answer; NULL (with a message) otherwise. */
static json_t *page_parse(const struct ctl_answer *answer)
{
    json_t *page = json_loadb(answer->body.data, answer->body.len, 0, NULL);
    if (!json_is_array(json_object_get(page, "events")) ||
        !json_is_integer(json_object_get(page, "next"))) {
        ctl_error(CTL_FAILED, "the event feed answered what is not {events, next}");
        json_decref(page);
        return NULL;
    }
    return page;
}

/* The seq to resume from that a 410 names (oldest_seq); 0 when it names none. */
static long long gone_oldest(const struct ctl_answer *answer)
{
    json_t *body = json_loadb(answer->body.data, answer->body.len, 0, NULL);
    long long oldest = json_integer_value(json_object_get(body, "oldest_seq"));
    json_decref(body);
    return oldest;
}

static int gone_error(const struct ctl_answer *answer, long long since)
{
    long long oldest = gone_oldest(answer);
    return ctl_error(CTL_NOTFOUND,
                     "the events after seq %lld are no longer kept: the oldest kept is %lld "
                     "(re-read what you follow, then watch --since %lld)",
                     since, oldest, oldest > 0 ? oldest - 1 : 0);
}

/* The newest seq, where a watch without --since starts. A page shorter than page_size has
 * looked at everything committed, so its next is the newest seq: asking for a kind that is
 * rare (the organization's own) answers that in one request with (almost) no events. */
static int feed_end(struct watch *w, long long *out)
{
    long long since = 0;
    int rc = CTL_OK, done = 0;

    while (!rc && !done) {
        struct ctl_answer answer;
        json_t *page = NULL;
        if ((rc = feed_get(w, since, "organization", "1000", 0, &answer)))
            break;
        if (answer.status == 410 && gone_oldest(&answer) > since + 1)
            since = gone_oldest(&answer) - 1; /* older events are gone: from the oldest kept */
        else if (answer.status < 200 || answer.status >= 300)
            rc = ctl_fail(&answer);
        else if (!(page = page_parse(&answer)))
            rc = CTL_FAILED;
        else {
            done = json_array_size(json_object_get(page, "events")) < 1000;
            since = json_integer_value(json_object_get(page, "next"));
        }
        json_decref(page);
        ctl_answer_release(&answer);
    }
    *out = since;
    return rc;
}

/* Prints one event in the output asked, at once. */
static void event_print(struct watch *w, const json_t *event)
{
    const char *kind = json_string_value(json_object_get(event, "kind"));
    const char *name = json_string_value(json_object_get(event, "name"));
    const char *actor = json_string_value(json_object_get(event, "actor"));
    const char *at = json_string_value(json_object_get(event, "at"));

    switch (w->ctl->output) {
    case OUT_JSON:
        json_dumpf(event, stdout, JSON_COMPACT);
        putchar('\n');
        break;
    case OUT_YAML: ctl_print_yaml(stdout, event); break;
    case OUT_NAME: printf("%s/%s\n", kind ? kind : "-", name ? name : "-"); break;
    default:
        if (!w->header_shown++)
            printf("%-7s %-22s %-32s %-6s %-12s %s\n", "SEQ", "KIND", "NAME", "OP", "ACTOR", "AT");
        printf("%-7lld %-22s %-32s %-6s %-12s %s\n",
               (long long)json_integer_value(json_object_get(event, "seq")), kind ? kind : "-",
               name ? name : "-", ctl_text(event, "op"), actor ? actor : "-", at ? at : "-");
    }
    fflush(stdout);
}

/* Prints a page's events past since (none twice) and moves since to the page's next. */
static void page_print(struct watch *w, const json_t *page)
{
    const json_t *event;
    long long next = json_integer_value(json_object_get(page, "next"));
    size_t i;

    json_array_foreach (json_object_get(page, "events"), i, event) {
        long long seq = json_integer_value(json_object_get(event, "seq"));
        if (seq <= w->since)
            continue;
        event_print(w, event);
        w->since = seq;
    }
    if (next > w->since)
        w->since = next;
}

/* Whether an answer's status is worth asking again: the server or a proxy is busy or down. */
static int status_transient(long status)
{
    return status >= 500 || status == 429 || status == 408;
}

/* One poll. CTL_OK when its events are printed; *retry set when it failed in a way worth
 * another try (no answer, a 5xx), with the message printed. */
static int watch_poll(struct watch *w, long wait, int *retry)
{
    struct ctl_answer answer;
    json_t *page = NULL;
    int rc = feed_get(w, w->since, w->kinds, NULL, wait, &answer);

    *retry = rc == CTL_UNAVAILABLE;
    if (!rc) {
        if (answer.status == 410)
            rc = gone_error(&answer, w->since);
        else if (answer.status < 200 || answer.status >= 300) {
            rc = ctl_fail(&answer);
            *retry = status_transient(answer.status);
        } else if (!(page = page_parse(&answer)))
            rc = CTL_FAILED;
        else
            page_print(w, page);
        json_decref(page);
        ctl_answer_release(&answer);
    }
    return rc;
}

/* Sleeps before the next try (1, 2, 4... seconds), no later than --timeout's end. */
static void watch_backoff(struct watch *w, unsigned failures)
{
    double delay = (double)(1u << (failures < 5 ? failures : 4));
    struct timespec pause;

    if (delay > WATCH_BACKOFF_MAX)
        delay = WATCH_BACKOFF_MAX;
    if (delay > watch_left(w))
        delay = watch_left(w) > 0 ? watch_left(w) : 0;
    fprintf(stderr, "purserctl: resuming after seq %lld in %.0fs\n", w->since, delay);
    pause.tv_sec = (time_t)delay;
    pause.tv_nsec = (long)((delay - (double)pause.tv_sec) * 1e9);
    nanosleep(&pause, NULL);
}

int cmd_watch(struct ctl *ctl, int argc, char **argv)
{
    struct watch w = {.ctl = ctl, .self = ctl_command_find("watch")};
    unsigned failures = 0;
    int since_given = 0, retry, rc = watch_parse(&w, argc, argv, &since_given);

    if (!rc && w.last) { /* the newest first, then what follows them */
        struct ctl_answer answer;
        json_t *page = NULL;
        if (!(rc = feed_get(&w, -(long long)w.last, w.kinds, NULL, 0, &answer))) {
            if (answer.status < 200 || answer.status >= 300)
                rc = ctl_fail(&answer);
            else if (!(page = page_parse(&answer)))
                rc = CTL_FAILED;
            else
                page_print(&w, page);
            json_decref(page);
            ctl_answer_release(&answer);
        }
    } else if (!rc && !since_given)
        rc = feed_end(&w, &w.since);
    w.answered = !since_given;
    while (!rc && watch_left(&w) > 0.05) {
        double left = watch_left(&w);
        long wait = left >= WATCH_WAIT ? WATCH_WAIT : (long)left + (left > (long)left);
        rc = watch_poll(&w, wait, &retry);
        if (!rc) {
            w.answered = 1;
            failures = 0;
        } else if (retry && w.answered) {
            rc = CTL_OK;
            if (watch_left(&w) > 0.05)
                watch_backoff(&w, failures++);
        }
    }
    return rc;
}

/* ---- export ------------------------------------------------------------------------------ */

/* A stream that counts the bytes written through it to another. */
struct counted {
    FILE *to;
    size_t bytes;
};

static ssize_t counted_write(void *cookie, const char *data, size_t n)
{
    struct counted *c = cookie;
    if (fwrite(data, 1, n, c->to) != n)
        return -1;
    c->bytes += n;
    return (ssize_t)n;
}

/* Streams the export to out, counting its bytes. */
static int export_get(struct ctl *ctl, FILE *out, int secrets, size_t *bytes)
{
    struct counted counted = {out, 0};
    cookie_io_functions_t io = {.write = counted_write};
    FILE *through = fopencookie(&counted, "w", io);
    struct ctl_request request = {.method = "GET",
                                  .template = "/organizations/{org}/export",
                                  .query = secrets ? "secrets=true" : NULL,
                                  .accept = "application/x-yaml",
                                  .download = through,
                                  .progress = 1};
    struct ctl_answer answer;
    int rc;

    if (!through)
        return ctl_error(CTL_FAILED, "out of memory");
    rc = ctl_call(ctl, &request, &answer);
    if (fclose(through) && !rc)
        rc = ctl_error(CTL_FAILED, "cannot write the export: %s", strerror(errno));
    ctl_answer_release(&answer);
    *bytes = counted.bytes;
    return rc;
}

/* The export into path (base/secret_file: a new file of mode 600 beside it, renamed only once
 * whole and on disk, whatever was at either name). */
static int export_to_file(struct ctl *ctl, const char *path, int secrets, size_t *bytes)
{
    struct secret_file f;
    FILE *file = NULL;
    int fd, rc;

    if (secret_file_begin(&f, path))
        return ctl_error(CTL_INVALID, "cannot write %s: %s", path, strerror(errno));
    if ((fd = dup(f.fd)) < 0 || !(file = fdopen(fd, "wb"))) {
        if (fd >= 0)
            close(fd);
        secret_file_abort(&f);
        return ctl_error(CTL_FAILED, "cannot write %s: %s", path, strerror(errno));
    }
    rc = export_get(ctl, file, secrets, bytes);
    if (fclose(file) && !rc)
        rc = ctl_error(CTL_FAILED, "cannot write %s: %s", f.tmp, strerror(errno));
    if (rc)
        secret_file_abort(&f);
    else if (secret_file_commit(&f))
        rc = ctl_error(CTL_FAILED, "cannot write %s: %s", path, strerror(errno));
    return rc;
}

int cmd_export(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"filename", required_argument, NULL, 'f'},
                                            {"secrets", no_argument, NULL, 's'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("export");
    const char *path = NULL;
    size_t bytes = 0;
    int opt, secrets = 0, rc;

    while ((opt = getopt_long(argc, argv, "f:", options, NULL)) != -1)
        switch (opt) {
        case 'f': path = optarg; break;
        case 's': secrets = 1; break;
        default: return ctl_usage(self, NULL);
        }
    if (optind < argc)
        return ctl_usage(self, "no arguments: the organization is --org's or the context's");
    if (path && !strcmp(path, "-"))
        path = NULL;
    rc = path ? export_to_file(ctl, path, secrets, &bytes)
              : export_get(ctl, stdout, secrets, &bytes);
    if (!rc && !path && fflush(stdout))
        rc = ctl_error(CTL_FAILED, "cannot write the export: %s", strerror(errno));
    if (!rc && !ctl->quiet)
        fprintf(stderr, "exported %s to %s (%zu bytes)\n", ctl->context.organization,
                path ? path : "standard output", bytes);
    return rc;
}

/* ---- import ------------------------------------------------------------------------------ */

/* The import's summary ({imported: {Kind: count}, left_out?: [...]}) as people read it: what
 * was left out (encrypted documents of an export without secrets) for the operator to supply. */
static void imported_print(struct ctl *ctl, const json_t *answer)
{
    const json_t *summary = json_object_get(answer, "imported"), *count, *d;
    const char *kind;
    json_int_t total = 0;
    size_t i;

    json_object_foreach ((json_t *)summary, kind, count)
        total += json_integer_value(count);
    printf("imported %lld resource%s into %s\n", (long long)total, total == 1 ? "" : "s",
           ctl->context.organization);
    json_object_foreach ((json_t *)summary, kind, count)
        printf("  %-20s %lld\n", kind, (long long)json_integer_value(count));
    json_array_foreach (json_object_get(answer, "left_out"), i, d)
        printf("left out (encrypted, its data not in the export): bucket %s, %s %s\n",
               json_string_value(json_object_get(d, "bucket")),
               json_string_value(json_object_get(d, "schema")),
               json_string_value(json_object_get(d, "name")));
}

/* The bytes of the file to send: a regular file is mapped (sent from the page cache as curl
 * reads it, never copied whole into memory), standard input is read. *mapped is the mapping's
 * length to unmap (0: stream holds the bytes). */
static int import_source(const char *path, struct buf *stream, const void **data, size_t *len,
                         size_t *mapped)
{
    struct stat st;
    void *map;
    int fd = strcmp(path, "-") ? open(path, O_RDONLY) : -1, rc;

    *mapped = 0;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED) {
        close(fd);
        *data = map;
        *len = *mapped = (size_t)st.st_size;
        return CTL_OK;
    }
    if (fd >= 0)
        close(fd);
    rc = ctl_read_file(stream, path);
    *data = stream->data ? stream->data : "";
    *len = stream->len;
    return rc;
}

int cmd_import(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"filename", required_argument, NULL, 'f'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("import");
    struct ctl_request request = {.method = "POST",
                                  .template = "/organizations/{org}/import",
                                  .content_type = "application/x-yaml",
                                  .progress = 1};
    struct buf stream = BUF_INIT;
    struct ctl_answer answer = {0};
    const char *path = NULL;
    json_t *value = NULL;
    size_t mapped = 0;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "f:", options, NULL)) != -1)
        switch (opt) {
        case 'f': path = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    if (!path || optind < argc)
        return ctl_usage(self, "-f FILE: an export's YAML stream (- for standard input)");
    rc = import_source(path, &stream, &request.body, &request.body_len, &mapped);
    if (!rc) {
        if (!(rc = ctl_call(ctl, &request, &answer)))
            value = json_loadb(answer.body.data, answer.body.len, 0, NULL);
        if (!rc && ctl->output == OUT_JSON)
            rc = ctl_print(ctl, value, NULL, answer.body.data);
        else if (!rc && ctl->output == OUT_YAML)
            rc = ctl_print_yaml(stdout, value ? value : json_null());
        else if (!rc)
            imported_print(ctl, value);
        json_decref(value);
        ctl_answer_release(&answer);
        if (mapped)
            munmap((void *)request.body, mapped);
        buf_release(&stream);
    }
    return rc;
}
