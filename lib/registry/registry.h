/* registry.h: the one list of the kinds purser serves (docs/developer.md, "Adding a kind").
 *
 * Each kind is one row of registry.c: its names, where it lives in the API, its RBAC actions,
 * its events and how the admin pages link them, its place in an export, and its descriptor
 * when it follows the resource convention (lib/resource). Everything else walks this table
 * instead of keeping a list of its own: the route table adds the generic routes of a kind
 * whose descriptor they serve (fcgi/router.c), the event log registers its events, export and
 * import walk the rows by export_rank and take each one's transfer hooks (the kind's own lib
 * file has them) or its descriptor's export and import, /docs publishes the table (x-purser-kinds)
 * for the admin pages' navigation, event links and API reference, and purserctl makes its rows of
 * the convention's kinds (get, describe, apply, diff) from it. t/0013-one-registry.t fails when a
 * list elsewhere names a kind.
 */
#ifndef PURSER_REGISTRY_H
#define PURSER_REGISTRY_H

#include <jansson.h>
#include <stddef.h>

struct resource_kind;
struct transfer_hooks;

/* Where a kind's objects are: the server's, an organization's, or a user's (its tokens). */
enum registry_scope { REGISTRY_SERVER, REGISTRY_ORGANIZATION, REGISTRY_USER };

/* How an event of one kind links in the admin pages (pages/events.js). Templates: {0} and {1}
 * are the event name's parts (split at '/'), {name} the whole; page and list are under the
 * organization's pages (#/o/ORG/...). */
enum registry_event_flags {
    REGISTRY_EVENT_OWN = 1,  /* the object's own event: its delete means the object is gone */
    REGISTRY_EVENT_MINE = 2, /* opens only for the signed-in user's own (a token) */
    REGISTRY_EVENT_SELF = 4, /* opens for a server admin and the object itself (a user) */
    REGISTRY_EVENT_ALL = 8,  /* the name '*' means every object of it: the list only */
};
struct registry_event {
    const char *kind;        /* the events' kind field: "facts" */
    const char *key;         /* the object its events share: "cluster:{0}" (NULL: none) */
    const char *page;        /* the object's page: "clusters/{0}" (NULL: none) */
    const char *list;        /* where its delete leaves the reader: "clusters" (NULL: none) */
    const char *parent;      /* the key whose delete takes it along: "policy:{0}" (NULL: none) */
    const char *action;      /* what opens the page (NULL: the kind's read; "": no check) */
    const char *description; /* the event log's (lib/store/events.h): "a node was created, ..."
                                (NULL: the kind's descriptor registers it, resource.h) */
    unsigned flags;
};

/* A column of a list of a kind, as purserctl's tables show it: a title, the dotted path in an
 * item, and how its value reads. */
enum registry_column_type { REGISTRY_TEXT, REGISTRY_TIME, REGISTRY_COUNT, REGISTRY_LIST };
struct registry_column {
    const char *title; /* "UPDATED" */
    const char *path;  /* "metadata.updated_at" */
    enum registry_column_type type;
};

struct registry_kind {
    const char *name;     /* singular, as purserctl takes it: "cluster" */
    const char *plural;   /* "clusters" */
    const char *envelope; /* its envelope's and export's kind: "Cluster" (NULL: none) */
    const char *title;    /* "Clusters": the admin pages' and the reference's heading */
    enum registry_scope scope;
    const char *list; /* the collection's path: "/organizations/{org}/clusters" */
    const char *item; /* one object's path: "/organizations/{org}/clusters/{id}" (NULL: none) */
    const char *read, *write, *remove; /* its RBAC actions (policies/default.yaml declares them) */
    const char *areas; /* with a title, the API reference's area of that title: the first path
                          segments (after /organizations/{org}; "." the organization itself) of
                          the routes it gathers, space-separated */
    const char *nav;   /* the admin pages' section (#/o/ORG/<nav>) and its title, "clusters
                          Clusters" (NULL: none) */
    const char *page;  /* the admin pages' module that serves its pages: "inventory"
                          (nginx/admin/pages/inventory.js, whose `pages` lists them) */
    const struct registry_event *events; /* ended by {NULL}; NULL: none */
    /* The resource convention: the descriptor (lib/resource/resource.h; NULL: none), and 1 when
     * the generic handlers (fcgi/resources.c) serve its list, show, replace, merge-patch and
     * delete at list and item, which must be list/{id} (the route table adds those routes,
     * fcgi/router.c; the handlers read the organization from {org}, so such a kind is an
     * organization's); the identity kinds keep Chef's routes and handlers of their own. */
    const struct resource_kind *resource;
    int generic;
    /* Of a generic kind, for its clients (purserctl's get, apply): the columns its lists show
     * after NAME and LABELS (ended by {NULL}; NULL: none more), the path of the list of every
     * organization's (server admins; NULL: none), and the secret its creation answers once
     * (a dotted path) and what that is (NULL: none). */
    const struct registry_column *columns;
    const char *all_organizations;
    const char *shown_once, *shown_what;
    /* Its place in an organization's export and import (lib/transfer): export_rank orders the
     * kinds an export writes, lowest first (the organization's is the lowest: its document
     * comes first; a kind's documents refer only to kinds of a lower rank; the resource
     * convention's after the core's); 0: not in an export. Its hooks are transfer's
     * (lib/resource/transfer_hooks.h: the envelopes it writes, each one's check and import, and
     * its export; the revision row's write DocumentBucket, RevisionTag and Validation), or,
     * when NULL, its descriptor's export_doc and import_doc (resource.h). */
    int export_rank;
    const struct transfer_hooks *transfer;
};

extern const struct registry_kind registry_kinds[];
extern const size_t registry_kind_count;

/* The row named name (singular or plural), or NULL. */
const struct registry_kind *registry_find(const char *name);

/* Registers the events the rows describe with the event log (event_kinds_register), in table
 * order, once per process before it writes (then the resource kinds', resource_kinds_register).
 * 0, or PURSER_EINTERNAL when they are too many. */
int registry_events_register(void);

/* The row whose envelope is envelope ("Cluster"), or NULL. */
const struct registry_kind *registry_find_envelope(const char *envelope);

/* The descriptors of the resource convention's kinds, each once, in table order: at most max
 * into out; returns how many. */
size_t registry_resources(const struct resource_kind **out, size_t max);

/* The rows an export writes (export_rank > 0, with transfer hooks or a descriptor with
 * export_doc and import_doc), by export_rank: at most max into out; returns how many. */
size_t registry_exports(const struct registry_kind **out, size_t max);

/* The table as JSON, a new reference: [{name, plural, envelope, title, scope, list, item, read,
 * write, delete, page, areas, nav: {path, title}, events: [{kind, key, page, list, parent, action,
 * own, mine, self, all}]}] (absent members: none). /docs serves it as x-purser-kinds. */
json_t *registry_json(void);

#endif
