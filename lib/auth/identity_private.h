/* identity_private.h: internals shared by the identity files (identity*.c), not an API. */
#ifndef PURSER_IDENTITY_PRIVATE_H
#define PURSER_IDENTITY_PRIVATE_H

#include "auth/identity.h"

#include <jansson.h>

/* A user or client to insert (identity_principal_insert). */
struct new_principal {
    const char *actor; /* who writes (its events'; identity_principal_insert writes none) */
    const char *org;   /* NULL for users */
    const char *name;
    const char *display_name, *first_name, *last_name, *email;
    int validator;
    const char *public_key; /* the key to register, or NULL for none */
    const char *role;       /* a membership to add in org, or NULL */
    const char *limit;      /* its policy group patterns ("dev*,staging"), or NULL: none */
    const char *labels;     /* compact JSON, or NULL */
    const char *sub_kind;   /* or NULL */
    char expires[20];       /* a DATETIME parameter, "" for none */
    long long id;           /* out */
};

/* A principal's roles in an organization, as SQL's GROUP_CONCAT of "role=patterns" joined by
 * ";" gives them (NULL: none), as {role: [patterns]} (a new reference), or NULL when none is
 * limited. */
json_t *identity_limited_roles(const char *text);

/* Chef's "Field 'X' missing" / "Field 'X' invalid" as PURSER_EINVAL in err. */
int identity_missing(struct purser_error *err, const char *field);
int identity_invalid(struct purser_error *err, const char *field);

/* A string field of body (borrowed): *out is NULL when absent or null; PURSER_EINVAL when it is
 * not a string. */
int identity_field_string(const json_t *body, const char *field, const char **out,
                          struct purser_error *err);

/* PURSER_EINVAL "invalid JSON" unless body is an object. */
int identity_require_object(const json_t *body, struct purser_error *err);

/* The body's "labels" (Kubernetes' label rules) as compact JSON in *text (malloc'd; NULL when
 * absent), or PURSER_EINVAL naming the label. */
int identity_labels(const json_t *body, char **text, struct purser_error *err);

/* A stored labels column as an object (a new reference; {} when NULL or undecodable). */
json_t *identity_labels_value(const char *text);

/* "infinity" for NULL, else the DATETIME cell as ISO 8601 UTC: a new reference. */
json_t *identity_expiration_json(const char *cell);

/* {name, public_key, expiration_date} of a key from its columns (expires_at NULL: infinity). */
json_t *identity_key_json(const char *name, const char *public_key, const char *expires_at);

/* Parses Chef's expiration_date ("infinity", NULL or ISO 8601 UTC) into a DATETIME parameter in
 * out (*infinite set when there is no expiry); PURSER_EINVAL naming expiration_date. */
int identity_expiration_param(const char *text, char out[20], int *infinite,
                              struct purser_error *err);

/* Fills out from row r of a PRINCIPAL_BY_NAME-shaped result (id, kind, org id, name, server
 * admin); out->name borrows from rows. */
void identity_principal_from_row(struct principal *out, const struct store_rows *rows, size_t r);

/* Teleport's sub_kind and expires in a user's or client's body: each given or not (null
 * clears it); expires must be in the future. PURSER_EINVAL naming the field. */
struct principal_extras {
    int sub_kind_given, expires_given;
    const char *sub_kind; /* borrowed from the body; NULL: none */
    char expires[20];     /* a DATETIME parameter; "": none */
};
int identity_principal_extras(const json_t *body, struct principal_extras *x,
                              struct purser_error *err);

/* What GET shows of the user (org NULL) or client, with labels and active for a client too
 * when full (what a merge patch applies to); *revision (may be NULL) its revision. */
int identity_principal_shape(struct store *store, struct arena *arena, const char *org,
                             const char *name, int full, json_t **out, const char **revision,
                             struct purser_error *err);

/* Inserts np (and its key and membership) inside the caller's transaction; np->id is set. */
/* Inserts an API token of principal_id for token (its SHA-256 is kept), expiring after
 * expires_in seconds (0: never); id_out gets its id. */
int identity_token_insert(struct store *store, long long principal_id, const char *token,
                          const char *description, long long expires_in, char id_out[17],
                          struct purser_error *err);

int identity_principal_insert(struct store *store, struct new_principal *np,
                              struct purser_error *err);

/* The row whose revision a write checks (If-Match) and changes (identity_resource.c). */
enum identity_row_table { IDENTITY_ROW_PRINCIPAL, IDENTITY_ROW_TOKEN, IDENTITY_ROW_ORG };
struct identity_row {
    enum identity_row_table table;
    struct store_value key[2]; /* its id; a token's: its id and its principal's */
    const char *kind, *name;   /* what a 412 names: "User", "alice" */
    const char *if_match;      /* NULL: no condition (Chef's tools send none) */
    char revision[17];         /* out: its revision, after the write when it changed it */
};

/* Inside a write's transaction: locks the row and reads its revision into row->revision, then
 * checks row->if_match against it (412 naming kind and name). A row that is not there is no
 * failure here (the write finds it missing: its own 404). */
int identity_revision_check(struct store *store, struct arena *arena, struct identity_row *row,
                            struct purser_error *err);

/* Inside a write's transaction: gives the row a new revision (row->revision gets it). */
int identity_revision_bump(struct store *store, struct identity_row *row, struct purser_error *err);

/* The organizations a principal's events go to (a client's own, a user's memberships), and an
 * event appended in each (detail may be NULL). */
int identity_principal_orgs(struct store *store, struct arena *arena, long long principal_id,
                            struct store_rows *rows, struct purser_error *err);
int identity_append_each(struct store *store, const char *actor, const struct store_rows *orgs,
                         const char *kind, const char *name, const char *op, const json_t *detail,
                         struct purser_error *err);

/* An identity write and its event in one transaction (identity_events.c): up to
 * IDENTITY_BATCH_MAX statements, then, when they changed a row, the event
 * {kind, name, op} in the organization `org` (by name, may be NULL) and in every organization
 * of principal_id (0: none) as it was before the statements ran. With qualify, the event's
 * name is "<principal>/<name>" (a key). Parameters are copied; their strings are borrowed. */
#define IDENTITY_BATCH_MAX 8
#define IDENTITY_BATCH_PARAMS 4
struct identity_batch {
    const char *actor; /* who writes (the events' actor) */
    const char *org;
    long long principal_id;
    const char *kind, *name, *op;
    int qualify;
    size_t count;
    struct {
        const char *sql;
        struct store_value p[IDENTITY_BATCH_PARAMS];
        size_t n;
    } stmt[IDENTITY_BATCH_MAX];
    unsigned long long affected; /* out: rows the statements changed */
    struct identity_row *row;    /* NULL, or the row checked first and, when the statements
                                    changed it (not a delete), given a new revision */
};
void identity_batch_add(struct identity_batch *b, const char *sql, const struct store_value *p,
                        size_t n);
int identity_batch_run(struct store *store, struct identity_batch *b, struct purser_error *err);

/* Inside the caller's transaction: the event in every organization of principal_id. */
int identity_principal_events(struct store *store, const char *actor, long long principal_id,
                              const char *kind, const char *name, const char *op,
                              struct purser_error *err);

#endif
