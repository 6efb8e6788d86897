/* oidc.c: identity providers (server-wide) and signing in through them: the start, the
 * provider's callback, the handoff to the page or purserctl, and sign-out (lib/auth/oidc_*). */
#include "handlers.h"

#include "auth/identity.h"
#include "auth/oidc_login.h"
#include "auth/oidc_provider.h"
#include "base/crypto.h"
#include "base/html.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/utf8.h"
#include "store/events.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the kind ---- */

int oidc_providers_list(struct request *req)
{
    json_t *out = NULL;
    int rc = oidc_provider_list(req->svc->store, req->arena, 0, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int oidc_providers_public(struct request *req)
{
    json_t *out = NULL;
    int rc = oidc_provider_list(req->svc->store, req->arena, 1, &out, &req->err);
    return respond_owned(req, rc, 200, out);
}

int oidc_provider_create_route(struct request *req)
{
    json_t *body = NULL, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = oidc_provider_roles_check(body, req->svc->policy, &req->err);
    if (!rc)
        rc = oidc_provider_create(req->svc->store, req->principal, req->svc->keyring, body, &out,
                                  &req->err);
    return respond_resource(req, rc, 201, out);
}

int oidc_provider_show(struct request *req)
{
    json_t *out = NULL;
    int rc =
        oidc_provider_get(req->svc->store, req->arena, request_param(req, "id"), &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int oidc_provider_put(struct request *req)
{
    json_t *body = NULL, *out = NULL;
    int rc = request_json(req, &body);
    if (!rc)
        rc = oidc_provider_roles_check(body, req->svc->policy, &req->err);
    if (!rc)
        rc = oidc_provider_replace(req->svc->store, req->principal, req->arena, req->svc->keyring,
                                   request_param(req, "id"), body, request_header(req, "If-Match"),
                                   &out, &req->err);
    return respond_resource(req, rc, 200, out);
}

int oidc_provider_remove(struct request *req)
{
    int rc =
        oidc_provider_delete(req->svc->store, req->principal, req->arena, request_param(req, "id"),
                             request_header(req, "If-Match"), &req->err);
    if (rc)
        return rc;
    return respond_text(req, 204, "application/json", "", 0, NULL);
}

/* ---- signing in ---- */

/* Where people reach purser: http.external_url when set (never a Host header a client chose),
 * else the request's own. */
static const char *external_url(struct request *req)
{
    const char *configured = req->svc->config->external_url;
    return configured && *configured ? configured : request_base_url(req);
}

static const char *callback_url(struct request *req)
{
    return arena_concat(req->arena, external_url(req), "/auth/sso/callback", (const char *)NULL);
}

/* 1 when a refusal of this reason may be an event now: once a minute per reason in each
 * worker. The routes that refuse need no sign-in, so anyone could fill the organizations'
 * feeds with them; the log and /metrics still have every one. (Reasons are the literals of
 * lib/auth/oidc_login.c: their addresses stay.) */
static int refusal_event_due(const char *reason)
{
    static const char *seen[32];
    static time_t at[32];
    time_t now = time(NULL);
    for (size_t i = 0; i < sizeof seen / sizeof *seen; i++) {
        if (!seen[i] || !strcmp(seen[i], reason)) {
            int due = !seen[i] || now - at[i] >= 60;
            seen[i] = reason;
            if (due)
                at[i] = now;
            return due;
        }
    }
    return 0;
}

/* A refusal: logged (never a token or code), counted, an event in each organization the
 * provider maps to (refusal_event_due); rc goes back as the answer's 4xx. */
static int refused(struct request *req, int rc, const struct oidc_outcome *o)
{
    const char *reason = o->reason ? o->reason : "other";
    /* the message may quote what the provider's redirect carried: any bytes (as \xNN) */
    char *message = utf8_escape(req->err.message);
    oidc_count_refusal(reason);
    log_message("warning", "sign-in refused",
                json_pack("{s:s, s:s, s:s, s:s}", "reason", reason, "provider",
                          o->provider ? o->provider : "", "message", message ? message : "",
                          "request_id", req->request_id));
    free(message);
    if (o->provider && refusal_event_due(reason)) {
        json_t *p = NULL, *orgs, *org;
        struct purser_error ignored;
        size_t i;
        if (!oidc_provider_get(req->svc->store, req->arena, o->provider, &p, &ignored)) {
            orgs = oidc_provider_orgs(json_object_get(p, "spec"));
            json_array_foreach (orgs, i, org) {
                json_t *detail = json_pack("{s:s}", "reason", reason);
                event_append_named(req->svc->store, "purser", json_string_value(org),
                                   "sign_in_refused", o->provider, "put", NULL, detail, &ignored);
                json_decref(detail);
            }
            json_decref(orgs);
        }
        json_decref(p);
    }
    return rc;
}

/* The events of a finished sign-in: one in each organization the user is a member of through
 * the provider now. Takes o->orgs. */
static void signed_in(struct request *req, struct oidc_outcome *o)
{
    json_t *org, *detail = json_pack("{s:s}", "provider", o->provider ? o->provider : "");
    struct purser_error ignored;
    size_t i;
    json_array_foreach (o->orgs, i, org)
        event_append_named(req->svc->store, o->user, json_string_value(org), "sign_in", o->user,
                           "put", NULL, detail, &ignored);
    json_decref(detail);
    json_decref(o->orgs);
    o->orgs = NULL;
}

/* A refused start or callback as a browser sees it (the error's JSON for Accept: application/json):
 * a small page in the admin pages' look naming what failed, with the way back to the sign-in. */
static int refused_page(struct request *req, int rc)
{
    struct buf page = BUF_INIT;
    int status = http_status_for((enum purser_err)rc);
    if (request_wants_json(req))
        return rc;
    rc = buf_adds(&page, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                         "<title>Sign-in refused - purser</title><link rel=\"stylesheet\" "
                         "href=\"/admin/app.css\"></head>\n<body><main><form class=\"signin\">"
                         "<h1>Sign-in refused</h1><div class=\"error\" role=\"alert\">");
    if (!rc)
        rc = html_escape(&page, req->err.message);
    if (!rc)
        rc = buf_adds(&page, "</div><p>Nobody was signed in. <a href=\"/admin/#/signin\">Back to "
                             "the sign-in</a></p></form></main></body></html>\n");
    if (!rc)
        rc = respond_text(req, status, "text/html; charset=utf-8", buf_cstr(&page), page.len,
                          "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
                          "Content-Security-Policy: default-src 'none'; style-src 'self'; "
                          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n");
    buf_release(&page);
    return rc;
}

/* GET /auth/sso/{provider}/start[?return_to=http://127.0.0.1:PORT/...]: to the provider. */
int oidc_sign_in_start(struct request *req)
{
    struct oidc_outcome o = {0};
    const char *url = NULL;
    int rc = 0;
    /* begun under another name than the configured one, the sign-in's cookie and the callback
     * would be of two origins: refused, naming where to begin */
    if (strcasecmp(external_url(req), request_base_url(req)) != 0) {
        o.reason = "redirect";
        rc = purser_error_set(&req->err, PURSER_EINVAL,
                              "sign-in refused: begin it at %.200s (http.external_url), not at "
                              "%.200s",
                              external_url(req), request_base_url(req));
        return refused_page(req, refused(req, rc, &o));
    }
    rc = oidc_login_start(req->svc->store, req->arena, req->svc->keyring,
                          request_param(req, "provider"), callback_url(req),
                          request_query(req, "return_to"), request_query(req, "handoff_challenge"),
                          &url, &o, &req->err);
    if (rc)
        return refused_page(req, refused(req, rc, &o));
    return respond_text(req, 302, "text/plain", "", 0,
                        arena_concat(req->arena, "Location: ", url,
                                     "\r\nCache-Control: no-store\r\nSet-Cookie: " OIDC_STATE_COOKIE
                                     "=",
                                     o.state, ".", o.cookie_secret,
                                     "; Path=/; Max-Age=600; Secure; HttpOnly; SameSite=Lax\r\n",
                                     (const char *)NULL));
}

/* The value of cookie name in the request's Cookie header (arena), or NULL. */
static const char *cookie_value(struct request *req, const char *name)
{
    const char *at = request_header(req, "Cookie");
    size_t len = strlen(name);
    while (at && *at) {
        const char *end;
        while (*at == ' ' || *at == ';')
            at++;
        end = strchr(at, ';');
        if (!end)
            end = at + strlen(at);
        if ((size_t)(end - at) > len && !strncmp(at, name, len) && at[len] == '=')
            return arena_strndup(req->arena, at + len + 1, (size_t)(end - at) - len - 1);
        at = end;
    }
    return NULL;
}

/* The sign-in cookie's half (STATE.SECRET: 0 the state, 1 the secret), or NULL. */
static const char *cookie_half(struct request *req, int second)
{
    const char *held = cookie_value(req, OIDC_STATE_COOKIE);
    const char *dot = held ? strchr(held, '.') : NULL;
    if (!dot)
        return NULL;
    return second ? dot + 1 : arena_strndup(req->arena, held, (size_t)(dot - held));
}

/* 0 when the browser holds the sign-in's state in its cookie (constant time); else the
 * refusal, naming the state. */
static int state_bound(struct request *req, const char *state, struct oidc_outcome *o)
{
    const char *held = cookie_half(req, 0);
    size_t n = state ? strlen(state) : 0;
    if (state && held && n && strlen(held) == n && crypto_equal(held, state, n))
        return 0;
    o->reason = "state";
    return purser_error_set(&req->err, PURSER_EINVAL,
                            "'state' is not a sign-in this browser began (its sign-in cookie is "
                            "missing or another sign-in's): begin the sign-in again here");
}

/* GET /auth/sso/callback?state&code (or &error): the provider sends the browser back here. */
int oidc_sign_in_callback(struct request *req)
{
    struct oidc_outcome o = {0};
    const char *error = request_query(req, "error");
    const char *location;
    int rc;
    if (error) { /* its words only when they are an error code of OAuth's (a link may carry any) */
        static const char *const known[] = {"access_denied",
                                            "invalid_request",
                                            "unauthorized_client",
                                            "invalid_scope",
                                            "server_error",
                                            "temporarily_unavailable",
                                            "login_required",
                                            "interaction_required",
                                            "consent_required",
                                            "account_selection_required",
                                            "unsupported_response_type",
                                            "invalid_request_uri",
                                            "invalid_request_object",
                                            "request_not_supported",
                                            "request_uri_not_supported",
                                            "registration_not_supported"};
        const char *said = "an error that is not one of OAuth's codes";
        for (size_t i = 0; i < sizeof known / sizeof *known; i++)
            if (!strcmp(error, known[i]))
                said = known[i];
        o.reason = "code";
        rc = purser_error_set(&req->err, PURSER_EUNAUTH,
                              "sign-in refused: the identity provider answered '%s'", said);
        return refused_page(req, refused(req, rc, &o));
    }
    rc = state_bound(req, request_query(req, "state"), &o);
    if (rc)
        return refused_page(req, refused(req, rc, &o));
    rc = oidc_login_finish(req->svc->store, req->arena, req->svc->keyring,
                           request_query(req, "state"), request_query(req, "code"),
                           request_query(req, "iss"), callback_url(req), &o, &req->err);
    if (rc) {
        json_decref(o.orgs);
        return refused_page(req, refused(req, rc, &o));
    }
    signed_in(req, &o);
    /* the code goes to the page's fragment (never sent to a server) or purserctl's listener;
     * the pages' sign-in cookie stays: the trade of the code asks it back */
    if (o.return_to && *o.return_to)
        return respond_text(
            req, 302, "text/plain", "", 0,
            arena_concat(req->arena, "Location: ", o.return_to, "?code=", o.handoff,
                         "\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
                         "Set-Cookie: " OIDC_STATE_COOKIE "=; Path=/; Max-Age=0; Secure; "
                         "HttpOnly; SameSite=Lax\r\n",
                         (const char *)NULL));
    location = arena_concat(req->arena, "/admin/#/sso?code=", o.handoff, (const char *)NULL);
    return respond_text(req, 302, "text/plain", "", 0,
                        arena_concat(req->arena, "Location: ", location,
                                     "\r\nCache-Control: no-store\r\nReferrer-Policy: "
                                     "no-referrer\r\n",
                                     (const char *)NULL));
}

/* POST /auth/sso/{provider}/device: a device sign-in (RFC 8628) begins; the client secret
 * stays here. */
int oidc_device_begin(struct request *req)
{
    struct oidc_outcome o = {0};
    json_t *out = NULL;
    int rc = oidc_device_start(req->svc->store, req->arena, req->svc->keyring,
                               request_param(req, "provider"), &out, &o, &req->err);
    if (rc)
        return refused(req, rc, &o);
    return respond_owned(req, rc, 201, out);
}

/* POST /auth/sso/device/token {device_id}: one poll; 200 {status: authorization_pending}
 * until the person has signed in at the provider, then 201 with the session. */
int oidc_device_token(struct request *req)
{
    struct oidc_outcome o = {0};
    json_t *body = NULL, *out = NULL;
    int pending = 0;
    int rc = request_json(req, &body);
    if (!rc && !json_is_string(json_object_get(body, "device_id")))
        rc =
            purser_error_set(&req->err, PURSER_EINVAL, "device_id must be the sign-in's device_id");
    if (rc)
        return rc;
    rc = oidc_device_poll(req->svc->store, req->arena, req->svc->keyring,
                          json_string_value(json_object_get(body, "device_id")), &out, &pending, &o,
                          &req->err);
    if (rc) {
        json_decref(o.orgs);
        return refused(req, rc, &o);
    }
    if (pending)
        return respond_owned(req, rc, 200, out);
    signed_in(req, &o);
    metrics_add(METRIC_SIGN_IN, 1);
    return respond_owned(req, rc, 201, out);
}

/* POST /auth/sso/session {code, verifier?}: the handoff code traded for the session token, by
 * whoever began the sign-in: purserctl with its verifier, the pages' browser with its sign-in
 * cookie (cleared here). */
int oidc_sign_in_session(struct request *req)
{
    struct oidc_outcome o = {0};
    json_t *body = NULL, *out = NULL;
    const char *verifier;
    int rc = request_json(req, &body);
    if (!rc && !json_is_string(json_object_get(body, "code")))
        rc = purser_error_set(&req->err, PURSER_EINVAL, "code must be the sign-in's code");
    if (!rc && json_object_get(body, "verifier") &&
        !json_is_string(json_object_get(body, "verifier")))
        rc = purser_error_set(&req->err, PURSER_EINVAL, "verifier must be a string");
    verifier = json_string_value(json_object_get(body, "verifier"));
    /* the pages' proof is their cookie's, never a body's */
    if (!rc && verifier && !strncmp(verifier, OIDC_COOKIE_PROOF, strlen(OIDC_COOKIE_PROOF)))
        rc = purser_error_set(&req->err, PURSER_EINVAL,
                              "verifier: not a purserctl verifier (a sign-in the pages began is "
                              "finished by the browser that began it)");
    if (rc)
        return rc;
    if (!verifier && cookie_half(req, 1))
        verifier =
            arena_concat(req->arena, OIDC_COOKIE_PROOF, cookie_half(req, 1), (const char *)NULL);
    rc = oidc_handoff_redeem(req->svc->store, req->arena,
                             json_string_value(json_object_get(body, "code")), verifier, &out, &o,
                             &req->err);
    if (rc)
        return refused(req, rc, &o);
    metrics_add(METRIC_SIGN_IN, 1);
    rc = respond_json(req, 201, out,
                      "Cache-Control: no-store\r\nSet-Cookie: " OIDC_STATE_COOKIE
                      "=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax\r\n");
    json_decref(out);
    return rc;
}

/* POST /auth/sso/sign-out: the session of the presented token ends on the server. A token
 * that is not a sign-in's session (one pasted into the page) is left alone. */
int oidc_sign_out(struct request *req)
{
    const char *authorization = request_header(req, "Authorization");
    int rc = 0;
    if (authorization && !strncasecmp(authorization, "Bearer ", 7))
        rc = oidc_session_end(req->svc->store, authorization + 7, &req->err);
    if (rc)
        return rc;
    return respond_text(req, 204, "application/json", "", 0, NULL);
}
