/* links.h: links to API objects in lib/'s answers (Chef's "uri" and "url" fields), without lib/
 * knowing the API's paths.
 *
 * The paths are the web layer's (the route table, fcgi/routes.c): it supplies a builder that
 * fills the route serving a link target with the target's parameters. lib/ names the target
 * and its parameters only. A caller that needs no links (an export) passes NULL, and each link
 * is JSON null. */
#ifndef PURSER_LINKS_H
#define PURSER_LINKS_H

#include <jansson.h>
#include <stddef.h>

/* What a link points at; the comment gives the parameters, in order. */
enum link_target {
    LINK_ORGANIZATION,              /* org */
    LINK_USER,                      /* user name */
    LINK_CLIENT,                    /* org, client name */
    LINK_USER_KEY,                  /* user name, key name */
    LINK_CLIENT_KEY,                /* org, client name, key name */
    LINK_POLICY,                    /* org, policy name */
    LINK_POLICY_REVISION,           /* org, policy name, revision id */
    LINK_POLICY_GROUP,              /* org, group */
    LINK_NODE,                      /* org, node name */
    LINK_SANDBOX,                   /* org, sandbox id */
    LINK_FILE,                      /* org, checksum */
    LINK_COOKBOOK_ARTIFACT,         /* org, cookbook name */
    LINK_COOKBOOK_ARTIFACT_VERSION, /* org, cookbook name, identifier */
    LINK_TARGETS
};

struct links {
    /* A new JSON string: the absolute URL of target with its count parameters; NULL when it
     * cannot be made (out of memory, or no route serves the target). */
    json_t *(*url)(void *ctx, enum link_target target, const char *const *params, size_t count);
    void *ctx;
};

/* The link to target with its parameters in order (first, second, third: NULL after the last
 * the target takes), as a new JSON value: links' URL, or null when links is NULL or makes
 * none. */
json_t *link_url(const struct links *links, enum link_target target, const char *first,
                 const char *second, const char *third);

#endif
