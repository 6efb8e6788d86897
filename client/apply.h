/* apply.h: private to client/apply.c and client/diff.c, not one of purserctl's shared parts
 * (ctl.h): what `apply` and `diff` both need. The file's documents and what each is (a Deckhand
 * document, a Policyfile lock, a resource of a kind apply knows), the options both parse, a
 * request that expects a status of its own, a bucket's newest documents, and a resource as the
 * server has it and as the file wants it. Everything here is defined in apply.c.
 *
 * Memory: as ctl.h says; a json_t returned through out is the caller's to decref.
 */
#ifndef PURSER_CTL_APPLY_H
#define PURSER_CTL_APPLY_H

#include "ctl.h"

/* A request of method on template with its values ({org} is the context's, not one of them). */
#define REQUEST(method_, template_, ...)                                                           \
    ((struct ctl_request){.method = (method_),                                                     \
                          .template = (template_),                                                 \
                          .values = (const char *const[]){__VA_ARGS__, NULL}})

/* apply_exchange()'s answer when the status is the one its caller handles itself. */
#define STATUS_EXPECTED (-1)

enum doc_class { DOC_EMPTY, DOC_DECKHAND, DOC_LOCK, DOC_RESOURCE };

/* A resource kind apply knows, in the export's shape ({kind, version: v1, metadata, spec}): the
 * body a document wants (from the server's, base), and the server's answer as such a body. */
struct apply_kind {
    const char *kind, *noun;   /* "Cluster", "cluster" */
    const char *item, *create; /* its GET and PUT template, its POST template */
    const char *prefix;        /* what the server puts before a name lacking it ("c-"), or NULL */
    json_t *(*shape)(const json_t *answer, const json_t *base, const char *id); /* NULL: as is */
    json_t *(*wanted)(const json_t *doc, const json_t *base, const char *id);   /* base NULL: new */
    const char *shown_once, *shown_what; /* a secret the creation answers once, and its name */
    int diffable; /* diff -f compares it (its GET is among diff's operations) */
    /* its own apply, when not a GET then a POST or PUT of item (NULL: that) */
    int (*apply)(struct ctl *ctl, const struct apply_kind *kind, const json_t *doc,
                 json_t *results);
    /* what its document lacks beyond a name and version: v1, or NULL (NULL: nothing more) */
    const char *(*lacks)(const json_t *doc);
};

/* The options of apply and diff; each refuses the other's. */
struct apply_options {
    const char *file, *bucket, *group, *policy;
    int append, deep, groups;
};

/* The string at a dotted path of value, or NULL. */
const char *apply_text(const json_t *value, const char *path);

/* A revision id's first ten characters ("-" for NULL), in the ctl's arena. */
const char *apply_short_revision(struct ctl *ctl, const char *revision);

/* Whether the output asked is text (the default or -o table), not -o json, yaml or name. */
int apply_text_output(const struct ctl *ctl);

/* A copy of value with every mapping's keys sorted, as the document API answers them (null for
 * NULL). */
json_t *apply_sorted(const json_t *value);

/* Sends request with body (JSON; NULL: none) and parses a 2xx answer into *out (when not NULL;
 * left alone otherwise). STATUS_EXPECTED, silently, for the status expected (0: none); else as
 * ctl_call. */
int apply_exchange(struct ctl *ctl, struct ctl_request request, const json_t *body, long expected,
                   json_t **out);

/* The newest document revision's id (0: none yet) into *id, and the documents of bucket in it
 * into *out. */
int apply_bucket_newest(struct ctl *ctl, const char *bucket, long long *id, json_t **out);

/* {"schema name": document} of docs, each as the server compares it (keys sorted, no status,
 * without the defaults the server writes in). */
json_t *apply_document_index(struct ctl *ctl, const json_t *docs);

/* The name the server gives the resource of doc (its metadata.name, with the kind's prefix). */
const char *apply_resource_id(struct ctl *ctl, const struct apply_kind *kind, const json_t *doc);

/* GETs the resource: its answer into *current and that answer as apply compares it into
 * *shaped (both NULL when it does not exist: STATUS_EXPECTED), or a failure. */
int apply_resource_current(struct ctl *ctl, const struct apply_kind *kind, const char *id,
                           json_t **current, json_t **shaped);

/* Parses apply's and diff's options; *first is the first argument after them. */
int apply_options_parse(const struct ctl_command *self, int argc, char **argv,
                        struct apply_options *o, int *first);

/* What document number index (from 1) is and its kind (resources), or CTL_INVALID saying what
 * it lacks. */
int apply_classify(const json_t *doc, size_t index, enum doc_class *class,
                   const struct apply_kind **kind);

/* Reads o->file and checks every document before anything is sent: its documents into *docs,
 * the Deckhand ones also into *deckhand (which then need o->bucket). */
int apply_plan_read(json_t **docs, json_t **deckhand, const struct apply_options *o);

#endif
