/* render_private.h: the renderer's working state, shared by render.c, render_layer.c and
 * render_subst.c. */
#ifndef PURSER_RENDER_PRIVATE_H
#define PURSER_RENDER_PRIVATE_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include "docs/render.h"

#include "base/arena.h"
#include "codec/jsonmask.h"
#include "codec/jsonpath.h"
#include "docs/document.h"

#include <jansson.h>
#include <pcre2.h>
#include <stdint.h>

/* What the render reads of a document is read once, in the order the documents lie in memory,
 * and kept in its arena (render.c's read_document): */

/* a layering action (method and path as given: checked when it is applied), */
struct raction {
    const char *method, *path;
};

/* a substitution's destination, */
struct rdest {
    const char *path;
    const char *pattern;   /* or NULL */
    const json_t *recurse; /* or NULL */
};

/* and a substitution: its source (found once the sources are indexed) and what to take of it. */
struct rsub {
    const char *source; /* "schema\0name", as the source index keys documents */
    size_t source_len;
    struct rdoc *from;
    const char *path;    /* src.path */
    const char *pattern; /* src.pattern, or NULL */
    json_int_t group;    /* src.match_group */
    struct rdest *dests; /* one, or dest's list */
    size_t ndests;
};

struct rdoc {
    const json_t *doc;
    const char *schema, *name, *layer;
    int layer_index; /* -1: not layered */
    int abstract, control, replacement, encrypted, done;
    int owned; /* data was made by layering or substitution (render.max_output_bytes counts
                  it); its values may still be shared with others' */
    const json_t *labels, *selector, *original;
    struct raction *acts;
    size_t nacts;
    char **label_keys; /* "schema\0key\0value" of each label, for the label index */
    size_t *label_lens, nlabels;
    json_t *data; /* rendered so far (owned) */
    struct rdoc *parent, *replaced_by;
    struct rsub *subst; /* metadata.substitutions */
    size_t nsubst;
    struct rdoc **users; /* the documents that wait for this one */
    size_t nusers, users_cap, waiting, rank;
    json_t *mask; /* which parts of data came from an encrypted document (codec/jsonmask.h):
                     its own whole, a parent's or a substitution source's marked parts */
};

/* A string-keyed table of document lists (labels, sources), in arena memory. */
struct slot {
    struct slot *next;
    char *key;
    size_t key_len;
    uint64_t hash; /* the key's, compared before the key */
    struct rdoc **items;
    size_t count, cap;
};

struct render {
    struct arena *arena;
    struct rdoc *docs;
    size_t count;
    const json_t *order;       /* layerOrder */
    const struct rdoc *policy; /* the LayeringPolicy among the documents, if any */
    /* the label and source indexes: buckets, a power of two at least twice the documents, so
     * that a chain stays short however big the set */
    struct slot **labels, **sources;
    size_t buckets;
    struct jsonpath_cache *paths;
    struct slot *regexes[64];
    struct purser_error *err;
    const struct render_limits *limits;
    pcre2_match_context *match; /* the limits, for PCRE2 (created on first use) */
    size_t made;                /* bytes of data layering and substitution made so far */
    size_t replaced;            /* matches a dest.pattern substitution replaced */
};

/* ---- render_doc.c: what the passes share about the documents (it calls none of them) ---- */

/* The slot for key (n bytes, may hold NULs) in table (buckets: a power of two), created when
 * create is set (arena memory). */
struct slot *render_slot_for(struct arena *arena, struct slot **table, size_t buckets,
                             const char *key, size_t n, int create);

/* Adds d to the slot's list: -1 when out of memory. */
int render_slot_add(struct arena *arena, struct slot *s, struct rdoc *d);

/* A JSON string's value, or NULL for anything else. */
const char *render_str(const json_t *v);

/* The document d layers onto: its parent, or the parent's replacement (unless d is it). */
struct rdoc *render_ancestor(const struct rdoc *d);

/* Marks d's data as made by the render before substitutions write into it (each write makes
 * its own what it changes: jsonpath_unshare). */
int render_own_data(struct render *r, struct rdoc *d);

/* d's data before the render: its own, shared. */
json_t *render_starting_data(const struct rdoc *d);

/* ---- the passes (render.c calls render_order.c, which calls layering and substitution) ---- */

/* Applies d's layering actions, in order, to its ancestor's rendered data, which becomes d's
 * (render_layer.c). */
int render_layer(struct render *r, struct rdoc *d);

/* Renders every document after what it depends on (render_order.c): depth first, or in
 * identity order (canonical) so that the first error met is the one reported. */
int render_in_order(struct render *r, int canonical);

/* Undoes a render that stopped at an error, so that it can run again in canonical order. */
void render_reset(struct render *r);

/* Frees the patterns compiled during the render. */
void render_free_regexes(struct render *r);

/* Applies d's substitutions (its sources are rendered already) into its data. */
int render_substitute(struct render *r, struct rdoc *d);

#endif
