/* auth.h: who is asking (authentication) and whether they may (RBAC), before any handler. */
#ifndef PURSER_AUTH_H
#define PURSER_AUTH_H

#include "../lib/rbac.h"
#include "request.h"

/* Reads X-Ops-Server-API-Version into req->api_version: PURSER_ENOTACCEPT (406, with Chef's
 * body already sent) when it is not a version purser speaks. */
int auth_api_version(struct request *req);

/* Establishes req->who from a bearer token, a Chef signed request, or (development mode, from
 * loopback) as a server admin. PURSER_EUNAUTH / PURSER_EINVAL with Chef's messages. */
int auth_authenticate(struct request *req, int development_mode);

/* Checks the route's action for req->who in the organization of the URL; logs a denial. */
int auth_authorize(struct request *req, const struct rbac_policy *policy);

#endif
