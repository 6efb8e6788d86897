/* resource.h: the one convention every inventory kind follows (docs/inventory.md).
 *
 * A resource is {kind, version, metadata: {name, labels, annotations, description, revision,
 * created_at, updated_at}, spec, status}. Clients write metadata (but revision and the times)
 * and spec; the server writes status and never spec. metadata.revision is opaque, changes on
 * every write and is the ETag. Writes that replace or patch need the current revision (412
 * when it is missing or stale); a delete checks it when given. Lists are keyset pages in a
 * stable order, narrowed by label selectors and by `filter` on the fields each kind names.
 * Validation is strict on write (an unknown field is 400 naming it) and absent on read: a row
 * that no longer decodes is logged and skipped, never fails a page.
 */
#ifndef PURSER_RESOURCE_H
#define PURSER_RESOURCE_H

#include "base/arena.h"
#include "base/buf.h"
#include "base/err.h"
#include "store/store.h"

#include <jansson.h>

/* A field `filter=` may name, and where it is: the JSON path in spec it reads, or, for a kind
 * with a table (below), the SQL condition that holds when the field equals the value, with one
 * `?` for the value ("r.display_name = ?"; `!=` is the condition negated). */
struct resource_field {
    const char *name; /* "display_name" */
    const char *path; /* "$.display_name" */
};

/* Where a kind lives that is not a row of the resources table (organizations, users, clients,
 * their members and tokens: lib/auth/identity_resource.c), for resource_list. select is
 * "SELECT <columns> FROM <table> r ... WHERE <scope>", the columns in this order: id, name,
 * revision, labels (JSON object text), annotations (JSON), description, spec (JSON), status
 * (JSON or NULL), created_at and updated_at (DATETIME columns as they are), the title (or ''),
 * sub_kind (or NULL), the expiry (a DATETIME, or NULL); its scope's `?` are bound from
 * resource_query.scope. The list appends its conditions with AND. The other members are the
 * expressions of the row's name, title, labels (JSON text, may be NULL), sub_kind and expiry (NULL:
 * the kind has none). */
struct resource_table {
    const char *select;
    const char *name, *title, *labels, *sub_kind, *expires;
};

struct resource_scope;
struct resource_import;
struct event_kind;

/* A kind of the resource convention: everything about it in one place (its lib file), with
 * its routes one RESOURCE() row of fcgi/routes.c. */
struct resource_kind {
    const char *kind;    /* "Cluster": the kind field and messages ("Cluster 'c-a' ...") */
    const char *version; /* "v1" */
    const char *stored;  /* the kind column: "cluster" */
    const struct resource_field *filters;
    size_t filter_count;
    const char *map_filter; /* a prefix such as "facts." whose rest names a key of spec.facts
                               (its path in spec "$.facts"), or NULL */
    const char *map_path;
    const char *title; /* the spec member `sort` may also name (kept in the title column),
                          or NULL */
    /* Strict validation of spec on write: 0, or PURSER_EINVAL naming the field. */
    int (*check_spec)(const json_t *spec, struct purser_error *err);
    /* Runs in a delete's transaction before the row goes, with its id and the scope (may be
     * NULL): what the resource owns outside its own rows goes with it (a cluster's client). */
    int (*on_delete)(struct store *store, long long id, const struct resource_scope *s,
                     struct purser_error *err);
    /* Runs in a replace's or patch's transaction after the row is written (may be NULL): what
     * the resource owns follows it (a cluster's client takes the cluster's expiry). */
    int (*on_write)(struct store *store, long long id, struct purser_error *err);
    /* The kinds of the events its writes append, ended by {NULL}: its stored name first, then
     * those of its status writes (registered by resource_kinds_register). */
    const struct event_kind *events;
    /* Its place in an export: the documents' kind ("Cluster"), the document of one stored
     * resource (a new reference), and the import of one document (*out: what the write
     * answered, freed by the caller). */
    const char *export_kind;
    json_t *(*export_doc)(const json_t *resource);
    int (*import_doc)(const struct resource_scope *s, const json_t *doc,
                      const struct resource_import *in, json_t **out, struct purser_error *err);
    /* NULL: a row of the resources table; else where it lives (lists only: such a kind's
     * writes are its own module's, checked with resource_precondition). */
    const struct resource_table *table;
    /* A prefix such as "dynamic_facts." whose rest names a path of the kind's indexed values
     * (resource_values.h, which the kind writes), where filter= also compares versions
     * (<, <=, >, >=), or NULL. */
    const char *values_filter;
    /* What the kind's ids begin with, added at creation when a name lacks it ("c-"), so that
     * a body's metadata.name without it names the same resource on replace; or NULL. */
    const char *id_prefix;
};

/* What an import gives a kind's import_doc. */
struct resource_import {
    const char *base_url; /* the API's URL (install URLs) */
    long token_ttl;       /* seconds a new bootstrap token lives */
};

/* Registers the kinds' events with the event log, once per process before it writes (the
 * route table lists the kinds: fcgi/router.h route_kinds). */
int resource_kinds_register(const struct resource_kind *const *kinds, size_t count);

/* An export's document of a resource: {kind: export_kind, version: v1, metadata: {name, labels,
 * annotations, description}, spec} (no revision, no times; status left to the kind). */
json_t *resource_export_doc(const struct resource_kind *k, const json_t *resource);

/* Where a call acts and who acts. */
struct resource_scope {
    struct store *store;
    struct arena *arena;
    long long org_id;
    const char *actor; /* the principal's name */
};

/* Runs inside the transaction of a write, after the row is written, with its id: a kind's own
 * rows (a cluster's bootstrap token) commit or roll back with it. */
typedef int (*resource_hook)(struct store *store, long long id, void *ctx,
                             struct purser_error *err);

/* Creates the resource body (the convention's shape; name already final) with the status the
 * server starts it with (NULL: none). 409 when the name exists. *out: the stored resource.
 * hook may be NULL. */
int resource_create(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                    const json_t *body, const json_t *status, resource_hook hook, void *hook_ctx,
                    json_t **out, struct purser_error *err);
/* The stored resource, or 404 "Cluster 'c-x' was not found". *id (may be NULL): its row id. */
int resource_get(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                 json_t **out, long long *id, struct purser_error *err);

/* Every kind's envelope may carry metadata.sub_kind (a variant of the kind, Teleport's:
 * 1 to 63 of [a-z0-9._-], starting and ending with a letter or digit) and metadata.expires (an
 * RFC 3339 time, kept to the second in UTC; written, it must be in the future). An expired
 * resource is gone: reads answer 404, lists leave it out, and the first read, list or write that
 * finds it deletes it with what it owns and appends its event {op: delete, reason: expired,
 * expires}, as actor "purser"; what no one reads goes in the background sweep
 * (fcgi/expiry.c, resource_expire_due). The reads compare the time themselves, so when the row
 * goes changes nothing a client sees. */

/* 0 when v (the value of `where`, "metadata.sub_kind") is a sub_kind; PURSER_EINVAL naming where
 * otherwise. */
int resource_sub_kind_check(const char *where, const json_t *v, struct purser_error *err);

/* Reads an RFC 3339 time ("2030-01-02T03:04:05Z", "...05.5+02:00") into out as a UTC DATETIME
 * parameter ("2030-01-02 01:04:05", the fraction dropped); PURSER_EINVAL naming where
 * otherwise. *when (may be NULL) gets it as seconds since the epoch. */
int resource_expires_parse(const char *where, const char *text, char out[20], long long *when,
                           struct purser_error *err);

/* Deletes the expired resources of k in s's organization (name: that one only; NULL: up to 100
 * of them, the longest expired first), each with what its on_delete removes and its event, in
 * one transaction. A cheap read first: nothing is written when none has expired. */
int resource_expire(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                    struct purser_error *err);

/* The background sweep's step (fcgi/expiry.c): deletes up to 100 expired resources of any
 * organization and any of kinds (count of them; the others' rows are left alone), the longest
 * expired first, as resource_expire does, in one transaction; *deleted gets how many. */
int resource_expire_due(const struct resource_kind *const *kinds, size_t count, struct store *store,
                        unsigned long long *deleted, struct purser_error *err);

/* The precondition of a write, the one rule of every kind: given (an If-Match value: "rev",
 * W/"rev", the bare revision, or * for any; NULL: none) against current. 0 when it matches, or
 * when none is given and required is 0; PURSER_ECOMPARE naming kind and name otherwise ("...
 * has changed since it was read (revision a, now b); re-read it and retry", or that the write
 * needs the revision it was read at). */
int resource_precondition(struct arena *arena, const char *kind, const char *name,
                          const char *given, const char *current, int required,
                          struct purser_error *err);

/* Replaces labels, annotations, description and spec with body's. if_match: the If-Match
 * header or NULL (then body's metadata.revision); missing or stale is 412. */
int resource_replace(const struct resource_kind *k, const struct resource_scope *s,
                     const char *name, const json_t *body, const char *if_match, json_t **out,
                     struct purser_error *err);

/* Applies an RFC 7396 merge patch to {metadata: {labels, annotations, description}, spec},
 * conditional as resource_replace (the patch's metadata.revision may carry the revision). */
int resource_patch(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                   const json_t *patch, const char *if_match, json_t **out,
                   struct purser_error *err);

/* Deletes it, and in the same transaction what the kind's on_delete removes; when if_match is
 * given it must be the current revision (412). */
int resource_delete(const struct resource_kind *k, const struct resource_scope *s, const char *name,
                    const char *if_match, struct purser_error *err);

/* 0 when owner is 0 or the principal that the resource's status.client_id names (a
 * credential that holds an action only on its own resource, RBAC `own`); PURSER_EDENIED
 * "missing ACTION permission on KIND NAME" otherwise. */
int resource_owner_check(const struct resource_kind *k, const json_t *resource, long long owner,
                         const char *action, struct purser_error *err);

/* Replaces the status members named in members (an object, borrowed) in its own write (a new
 * revision), with its event of kind event_kind (NULL: the resource's). hook as above. */
int resource_set_status(const struct resource_kind *k, const struct resource_scope *s,
                        const char *name, const json_t *members, const char *event_kind,
                        resource_hook hook, void *hook_ctx, json_t **out, struct purser_error *err);

/* The same inside the caller's transaction (s->store), for a write that changes a resource's
 * status along with rows of its own. */
int resource_set_status_in(const struct resource_kind *k, const struct resource_scope *s,
                           const char *name, const json_t *members, const char *event_kind,
                           struct purser_error *err);
/* A list request, from the query string (all may be NULL). */
struct resource_query {
    const char *page_size;  /* default 100, clamped to 1..1000 */
    const char *page_token; /* from the previous page's next_page_token */
    const char *labels;     /* a label selector */
    const char *filter;     /* field==value;field!=value;... */
    const char *sort;       /* name, created_at or the kind's title field; '-' before: descending */
    long long owner;        /* nonzero: only resources whose status.client_id is this principal
                               (a credential that holds the read under RBAC `own`) */
    const struct store_value *scope; /* a kind with a table: its select's parameters */
    size_t scope_count;
    int all_organizations;     /* every organization's resources (s->org_id not read; a kind of
                                  the resources table): each item's metadata.organization names
                                  its own, and a page ends ordered by name, then organization */
    const char *organizations; /* with it: only those of these organizations (names, commas
                                  between; at most 100), or NULL for all */
};

/* A page_size parameter (NULL: the default, 100) clamped to 1..1000, or PURSER_EINVAL when it
 * is not an integer: the one rule of every paged list. */
long resource_page_size(const char *text, struct purser_error *err);

/* One page appended to out as JSON text: {items: [...], next_page_token: "..."} ("" at the
 * end). Bad parameters are 400 naming the parameter. */
int resource_list(const struct resource_kind *k, const struct resource_scope *s,
                  const struct resource_query *q, struct buf *out, struct purser_error *err);

/* The names of every resource q's labels and filter select (its page parameters are not
 * read), in name order: *names an arena array of *count (a Chef-shaped list narrowed). */
int resource_list_names(const struct resource_kind *k, const struct resource_scope *s,
                        const struct resource_query *q, const char ***names, size_t *count,
                        struct purser_error *err);

#endif
