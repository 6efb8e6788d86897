/* kinds.h: the kinds purserctl's get, describe, create, replace, patch and delete work on (their
 * table is kinds.c's), and finding one from a command line. Private to kinds.c and resources.c. */
#ifndef PURSER_CTL_KINDS_H
#define PURSER_CTL_KINDS_H

#include "ctl.h"

enum kind_verbs {
    K_LIST = 1,
    K_GET = 2,
    K_CREATE = 4,
    K_REPLACE = 8,
    K_PATCH = 16,
    K_DELETE = 32,
    K_DELETE_ALL = 64,
    K_CONDITIONAL = 128 /* not a verb: its PUT and PATCH need the revision they were read at */
};
enum paging { PAGE_NONE, PAGE_TOKEN, PAGE_SINCE };

/* A kind. Its paths are /docs' templates; a request fills {org} from the context, then the
 * parents' option values in order, then the names given on the command line. */
struct kind {
    const char *name;    /* singular, as typed: "cluster" */
    const char *plural;  /* "clusters" */
    const char *parents; /* the options it needs, in template order: "user" (--user NAME) */
    int args;            /* the names that pick one: 1, or 2 ("policy-revision NAME REV") */
    const char *list, *item, *create;
    unsigned verbs;
    enum paging paging;
    const char *name_field; /* create NAME: where NAME goes in the body */
    const struct ctl_view *view;
    const char *related;  /* describe also lists these kinds, with this one's name as parent */
    const char *selector; /* the list's query parameter for -l (NULL: it takes no selector) */
    const char *options;  /* the other list options it takes: "filter sort page-size" */
};

/* A kind's list of every organization's (get KIND --all-organizations; server admins): its
 * path, which takes the kind's list options and organization=, and its table. */
struct kind_all {
    const char *plural; /* the kind's */
    const char *list;   /* "/clusters" */
    const struct ctl_view *view;
};

/* k's list of every organization's, or NULL when it has none. */
const struct kind_all *kind_all_organizations(const struct kind *k);

/* The table of k's pages when its list answers Chef's shape until a page is asked for
 * (--page-size or --sort: then pages of envelopes, followed by page_token), or NULL. */
const struct ctl_view *kind_page_view(const struct kind *k);

struct target {
    const struct kind *kind;
    const char *values[8]; /* the parents' values, then the names */
    size_t count;
};

/* The options that name a parent, in this order in struct verb_options' given[]: "user",
 * "client", "policy-group", "policy", "revision", "cluster"; NULL-terminated. */
extern const char *const kind_parent_options[];
#define KIND_PARENT_REVISION 4

/* The row of the typed kind ("cluster" or "clusters") that has verb and uses the most of the
 * parents given (given[i] for kind_parent_options[i]); a row of that name otherwise (so that
 * the message says what is missing), or NULL for no such kind. */
const struct kind *kind_find(const char *typed, const char *const *given, unsigned verb);

/* How many names the command line gives for verb (a document's schema and name: two). */
int kind_names_wanted(const struct kind *k, unsigned verb);

/* "listed", "shown", "created"...: for messages. */
const char *kind_verb_name(unsigned verb);

/* 1 when the kind's PUT and PATCH need the revision they were read at (If-Match or
 * metadata.revision: the resource convention's kinds, K_CONDITIONAL in the table). */
int kind_is_conditional(const struct kind *k);

/* 1 when the kind is the document API's (YAML written, JSON or YAML read). */
int kind_is_document_api(const struct kind *k);

/* Fills t (its kind set) with the parents' values (given, or their defaults: the newest
 * revision, the context's user) and the names of args. CTL_OK or the failure (printed). */
int kind_target_fill(struct ctl *ctl, struct target *t, const char *const *given, char **args,
                     int nargs);

#endif
