/* selector.h: Kubernetes label selectors ("env=prod,tier!=db,zone in (a,b),!legacy") and the
 * rules for label keys and values. */
#ifndef PURSER_SELECTOR_H
#define PURSER_SELECTOR_H

#include "base/arena.h"
#include "base/err.h"

#include <jansson.h>
#include <stddef.h>

enum selector_op {
    SELECTOR_EQ,         /* key=value, key==value */
    SELECTOR_NE,         /* key!=value (also true when the key is absent) */
    SELECTOR_IN,         /* key in (a,b) */
    SELECTOR_NOTIN,      /* key notin (a,b) (also true when the key is absent) */
    SELECTOR_EXISTS,     /* key */
    SELECTOR_NOT_EXISTS, /* !key */
};

struct selector_requirement {
    enum selector_op op;
    const char *key;
    const char **values; /* one for EQ and NE, one or more for IN and NOTIN, none otherwise */
    size_t count;
};

/* Requirements that must all hold. */
struct selector {
    struct selector_requirement *items;
    size_t count;
};

#define SELECTOR_MAX_REQUIREMENTS 20

/* Parses text into *out (arena memory). PURSER_EINVAL names the parameter "labels" and says
 * what is wrong and where (a key or value that breaks the label rules, an unclosed set, more
 * than SELECTOR_MAX_REQUIREMENTS requirements). An empty text selects everything. */
int selector_parse(struct arena *arena, const char *text, struct selector *out,
                   struct purser_error *err);

/* 1 when labels (an object of strings) satisfies every requirement. */
int selector_matches(const struct selector *s, const json_t *labels);

/* Kubernetes' label rules. A key is an optional DNS subdomain prefix (at most 253 characters)
 * and '/', then a name of 1 to 63 characters, alphanumerics with '-', '_', '.' inside. A value
 * is empty or such a name. 0 when ok, else PURSER_EINVAL naming where ("metadata.labels",
 * "labels") and the key. */
int selector_label_check(const char *where, const char *key, const char *value,
                         struct purser_error *err);

#endif
