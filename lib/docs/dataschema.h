/* dataschema.h: the JSON schemas a document's data is checked against (SPEC §5): the built-in
 * schemas of Deckhand's own kinds, and the DataSchema documents of a revision, whose
 * metadata.name names the document schema they check ("example/Doc/v1"; a shorter name,
 * "example/Doc", checks every schema under it, the longest name winning).
 *
 * Deckhand's kinds keep their built-in schema: a DataSchema named for one of them
 * (deckhand/Passphrase/v1) is accepted, as Deckhand accepts it (its own suite writes them), and
 * never used. Every other DataSchema name under deckhand/ or metadata/ is reserved (the seed:
 * those namespaces are Deckhand's own) and refused when written (document.c).
 */
#ifndef PURSER_DATASCHEMA_H
#define PURSER_DATASCHEMA_H

#include "base/err.h"
#include "codec/jsonschema.h"

#include <jansson.h>

/* 1 when schema (a document's: "deckhand/Passphrase/v1") is of a Deckhand kind with a built-in
 * schema. */
int dataschema_builtin(const char *schema);

/* 1 when a DataSchema may not be named name: under metadata/, or under deckhand/ without
 * naming a kind of dataschema_builtin. */
int dataschema_reserved(const char *name);

/* The schemas of one revision: the built-in ones and the DataSchemas added. */
struct dataschema_set;

/* A new set with the built-in schemas only; NULL when out of memory. */
struct dataschema_set *dataschema_set_new(void);

/* Frees set and every schema it compiled (NULL is fine). */
void dataschema_set_free(struct dataschema_set *set);

/* Adds the DataSchema named name (copied) whose data is schema (borrowed: it must outlive the
 * set; NULL when only the name is known, for dataschema_set_applies). A later DataSchema of the
 * same name replaces an earlier one. -1 when out of memory. */
int dataschema_set_add(struct dataschema_set *set, const char *name, const json_t *schema);

/* 1 when documents of schema are checked: a built-in kind's, or a DataSchema's. */
int dataschema_set_applies(const struct dataschema_set *set, const char *schema);

/* The schema that checks documents of one schema. */
struct dataschema_match {
    struct jsonschema *compiled; /* NULL: none applies; the set's, until it is freed */
    const json_t *source;        /* the schema as written */
    const char *dataschema;      /* the DataSchema's metadata.name; NULL for a built-in one */
};

/* Finds the schema for documents of schema into *m, compiled the first time it is asked for.
 * PURSER_EINVAL (naming the DataSchema and where the schema is not valid draft 4) when it does
 * not compile, each time it is asked for; m->dataschema then names it. */
int dataschema_set_find(struct dataschema_set *set, const char *schema, struct dataschema_match *m,
                        struct purser_error *err);

#endif
