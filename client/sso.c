/* sso.c: purserctl login --sso (a browser and a loopback listener, or the device grant) and
 * logout. The provider's client secret stays in purser: purserctl only ever holds the session. */
#include "ctl.h"

#include "base/crypto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define WAIT_SECONDS 300 /* how long a sign-in in the browser may take */

/* The provider to sign in through: the one named, or the server's only one. */
static int provider_pick(struct ctl *ctl, const char *given, const char **out)
{
    struct ctl_request request = {.method = "GET", .template = "/auth/sso/providers"};
    json_t *answer = NULL, *items;
    int rc;
    *out = given;
    if (given)
        return CTL_OK;
    rc = ctl_call_json(ctl, &request, &answer);
    items = json_object_get(answer, "items");
    if (!rc && json_array_size(items) == 1)
        *out = ctl_printf(ctl, "%s",
                          json_string_value(json_object_get(json_array_get(items, 0), "name")));
    else if (!rc) {
        struct buf names = BUF_INIT;
        size_t i;
        json_t *item;
        json_array_foreach (items, i, item)
            buf_printf(&names, "%s%s", i ? ", " : "",
                       json_string_value(json_object_get(item, "name")));
        rc = ctl_error(CTL_USAGE, "name the identity provider: login --sso PROVIDER (%s)",
                       names.len ? buf_cstr(&names) : "the server has none");
        buf_release(&names);
    }
    json_decref(answer);
    return rc;
}

/* The session traded or polled for: the context's token and end, *who its user. */
static void session_take(struct ctl *ctl, struct ctl_context *c, const json_t *session,
                         const char **who)
{
    c->token = ctl_printf(ctl, "%s", json_string_value(json_object_get(session, "token")));
    c->expires =
        json_is_string(json_object_get(session, "expires_at"))
            ? ctl_printf(ctl, "%s", json_string_value(json_object_get(session, "expires_at")))
            : NULL;
    *who = ctl_printf(ctl, "%s", json_string_value(json_object_get(session, "user")) ?: "?");
}

/* A listening socket on 127.0.0.1, a free port: *fd and *port. */
static int listener_open(int *fd, int *port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    socklen_t len = sizeof addr;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (*fd < 0 || bind(*fd, (struct sockaddr *)&addr, sizeof addr) || listen(*fd, 4) ||
        getsockname(*fd, (struct sockaddr *)&addr, &len))
        return ctl_error(CTL_FAILED, "a listener on 127.0.0.1: %s", strerror(errno));
    *port = ntohs(addr.sin_port);
    return CTL_OK;
}

/* The browser's visit to the listener: its request line's code= (the one-time code purser's
 * callback handed over), answered with a page that says what to do next. */
static int listener_code(struct ctl *ctl, int fd, const char **code)
{
    static const char done[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                               "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
                               "<!DOCTYPE html><title>purser</title><p>Signed in: purserctl has "
                               "the session. You may close this tab.</p>\n";
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char request[8192];
    ssize_t n = 0;
    int client = -1;
    const char *at;
    *code = NULL;
    for (;;) {
        if (poll(&p, 1, WAIT_SECONDS * 1000) <= 0)
            return ctl_error(CTL_UNAVAILABLE, "no sign-in came back within %d seconds",
                             WAIT_SECONDS);
        client = accept(fd, NULL, NULL);
        if (client < 0)
            continue;
        /* a local program that connects and says nothing does not hold the listener */
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){.tv_sec = 5},
                   sizeof(struct timeval));
        n = recv(client, request, sizeof request - 1, 0);
        request[n > 0 ? n : 0] = '\0';
        at = strstr(request, "code=");
        if (!strncmp(request, "GET /callback?", 14) && at && at < strstr(request, " HTTP/")) {
            *code = ctl_printf(ctl, "%.*s", (int)strcspn(at + 5, "& \r\n"), at + 5);
            if (write(client, done, sizeof done - 1) < 0) { /* the browser left: no matter */
            }
            close(client);
            return CTL_OK;
        }
        /* another request (a favicon): not the sign-in's */
        if (write(client, "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n", 45) < 0) {
        }
        close(client);
    }
}

/* $BROWSER opens url when set (the address is printed either way). */
static void browser_open(const char *url)
{
    const char *browser = getenv("BROWSER");
    char *argv[] = {(char *)browser, (char *)url, NULL};
    pid_t pid;
    if (browser && *browser && !posix_spawnp(&pid, browser, NULL, NULL, argv, environ))
        fprintf(stderr, "(opened with %s)\n", browser);
}

/* A verifier (32 random bytes, base64url) and its challenge, base64url(SHA-256(verifier)):
 * purser hands the sign-in's code to the listener only, and trades it only with the verifier,
 * so another program listening on a loopback port that gets the code cannot use it. */
static int verifier_make(struct ctl *ctl, const char **verifier, const char **challenge)
{
    unsigned char bytes[32], digest[32];
    char *text = NULL, *hashed = NULL;
    int rc = crypto_random(bytes, sizeof bytes) ? ctl_error(CTL_FAILED, "no random bytes") : 0;
    if (!rc)
        text = crypto_base64url(bytes, sizeof bytes);
    if (text) {
        crypto_sha256(digest, text, strlen(text));
        hashed = crypto_base64url(digest, sizeof digest);
    }
    if (!rc && !hashed)
        rc = ctl_error(CTL_FAILED, "out of memory");
    if (!rc) {
        *verifier = ctl_printf(ctl, "%s", text);
        *challenge = ctl_printf(ctl, "%s", hashed);
    }
    free(text);
    free(hashed);
    return rc;
}

static int sign_in_browser(struct ctl *ctl, struct ctl_context *c, const char *provider,
                           const char **who)
{
    struct ctl_request request = {
        .method = "POST", .template = "/auth/sso/session", .content_type = "application/json"};
    struct buf url = BUF_INIT, query = BUF_INIT;
    json_t *body = NULL, *session = NULL;
    const char *code = NULL, *verifier = NULL, *challenge = NULL;
    char *text = NULL;
    int fd = -1, port = 0;
    int rc = verifier_make(ctl, &verifier, &challenge);
    if (!rc)
        rc = listener_open(&fd, &port);
    if (!rc) {
        ctl_query_add(&query, "return_to", ctl_printf(ctl, "http://127.0.0.1:%d/callback", port));
        ctl_query_add(&query, "handoff_challenge", challenge);
        buf_printf(&url, "%s/auth/sso/%s/start?%s", c->url, provider, buf_cstr(&query));
        fprintf(stderr, "Open this address in a browser to sign in through %s:\n  %s\n", provider,
                buf_cstr(&url));
        browser_open(buf_cstr(&url));
        rc = listener_code(ctl, fd, &code);
    }
    if (!rc) {
        body = json_pack("{s:s, s:s}", "code", code, "verifier", verifier);
        text = json_dumps(body, JSON_COMPACT);
        request.body = text;
        request.body_len = strlen(text);
        rc = ctl_call_json(ctl, &request, &session);
    }
    if (!rc)
        session_take(ctl, c, session, who);
    if (fd >= 0)
        close(fd);
    free(text);
    json_decref(body);
    json_decref(session);
    buf_release(&url);
    buf_release(&query);
    return rc;
}

/* The device grant: the code to enter elsewhere, then polls until the person has signed in. */
static int sign_in_device(struct ctl *ctl, struct ctl_context *c, const char *provider,
                          const char **who)
{
    const char *values[] = {provider};
    struct ctl_request start = {
        .method = "POST", .template = "/auth/sso/{provider}/device", .values = values};
    struct ctl_request poll_request = {
        .method = "POST", .template = "/auth/sso/device/token", .content_type = "application/json"};
    json_t *device = NULL, *body = NULL, *answer = NULL;
    char *text = NULL;
    long interval = 5;
    time_t until = 0;
    int rc = ctl_call_json(ctl, &start, &device);
    if (!rc) {
        const char *complete =
            json_string_value(json_object_get(device, "verification_uri_complete"));
        fprintf(stderr, "To sign in through %s, open %s and enter the code %s\n", provider,
                json_string_value(json_object_get(device, "verification_uri")),
                json_string_value(json_object_get(device, "user_code")));
        if (complete)
            fprintf(stderr, "  (or open %s)\n", complete);
        interval = json_integer_value(json_object_get(device, "interval")) ?: 5;
        until = time(NULL) + (json_integer_value(json_object_get(device, "expires_in")) ?: 600);
        body = json_pack("{s:O}", "device_id", json_object_get(device, "device_id"));
        text = json_dumps(body, JSON_COMPACT);
        poll_request.body = text;
        poll_request.body_len = strlen(text);
    }
    while (!rc) {
        sleep((unsigned)interval);
        json_decref(answer);
        answer = NULL;
        rc = ctl_call_json(ctl, &poll_request, &answer);
        if (rc || !json_is_string(json_object_get(answer, "status")))
            break;
        if (!strcmp(json_string_value(json_object_get(answer, "status")), "slow_down")) {
            interval += 5; /* RFC 8628 3.5 */
            fprintf(stderr, "(the provider asks to be polled less often: every %ld s now)\n",
                    interval);
        }
        if (time(NULL) > until)
            rc = ctl_error(CTL_DENIED, "the device sign-in expired before it was finished");
    }
    if (!rc)
        session_take(ctl, c, answer, who);
    free(text);
    json_decref(body);
    json_decref(device);
    json_decref(answer);
    return rc;
}

int ctl_login_sso(struct ctl *ctl, struct ctl_context *c, const char *provider, int device,
                  const char **who)
{
    int rc = provider_pick(ctl, provider, &provider);
    *who = NULL;
    if (!rc)
        rc =
            device ? sign_in_device(ctl, c, provider, who) : sign_in_browser(ctl, c, provider, who);
    return rc;
}

int cmd_logout(struct ctl *ctl, int argc, char **argv)
{
    struct ctl_request request = {.method = "POST", .template = "/auth/sso/sign-out"};
    struct ctl_answer answer = {0, BUF_INIT, ""};
    struct ctl_context c = ctl->context;
    int rc;
    (void)argv;
    if (argc > 1)
        return ctl_usage(ctl_command_find("logout"), "no arguments");
    rc = ctl_call(ctl, &request, &answer);
    ctl_answer_release(&answer);
    if (!rc) {
        c.token = NULL;
        c.expires = NULL;
        rc = ctl_context_save(ctl, &c, 0);
    }
    if (!rc)
        printf("signed out of %s (context %s)\n", c.url, c.name ? c.name : "-");
    return rc;
}
