/* render_subst.c: Deckhand's substitution: source values by path and pattern, written into
 * destinations by path, pattern and list, with PCRE2. */
#include "docs/render_private.h"

#include "base/json_text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- substitution ---- */

static pcre2_code *regex(struct render *r, const char *pattern)
{
    struct slot *s = render_slot_for(r->arena, r->regexes, 64, pattern, strlen(pattern), 1);
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re;
    if (!s)
        return NULL;
    if (s->count)
        return (pcre2_code *)s->items[0];
    re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &offset, NULL);
    if (!re) {
        purser_error_set(r->err, PURSER_EINVAL, "pattern '%s' is not a valid regular expression",
                         pattern);
        return NULL;
    }
    render_slot_add(r->arena, s, (struct rdoc *)re);
    return re;
}

void render_free_regexes(struct render *r)
{
    for (size_t i = 0; i < 64; i++)
        for (struct slot *s = r->regexes[i]; s; s = s->next)
            if (s->count)
                pcre2_code_free((pcre2_code *)s->items[0]);
}

/* The limits every match of this render runs under: a pattern that backtracks without end
 * stops there and the render fails, naming it (never read as "no match"). */
static pcre2_match_context *match_context(struct render *r)
{
    if (!r->match && (r->match = pcre2_match_context_create(NULL))) {
        pcre2_set_match_limit(r->match, (uint32_t)r->limits->match_steps);
        pcre2_set_depth_limit(r->match, (uint32_t)r->limits->match_steps);
    }
    return r->match;
}

/* Why a pattern failed, for a message (in the arena). */
static const char *pattern_failure(struct render *r, int rc)
{
    char text[160];
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT)
        return arena_sprintf(r->arena,
                             "hit the limit of %lu matching steps "
                             "(render.max_pattern_steps)",
                             r->limits->match_steps);
    if (rc == PCRE2_ERROR_NOMEMORY)
        return arena_sprintf(r->arena,
                             "would make a value over %zu bytes (render.max_string_bytes)",
                             r->limits->max_string);
    pcre2_get_error_message(rc, (PCRE2_UCHAR *)text, sizeof(text));
    return arena_strdup(r->arena, text);
}

/* The value substitution s copies: its source's data at src.path (the whole data when it is
 * not a mapping or list), narrowed by src.pattern and match_group. A new reference. */
static json_t *source_value(struct render *r, const struct rdoc *d, const struct rsub *s)
{
    const char *text = s->path, *pattern = s->pattern;
    const struct rdoc *from = s->from;
    const struct jsonpath *path = jsonpath_cached(r->paths, text, r->err);
    json_t *v;
    if (!path)
        return NULL;
    v = json_is_object(from->data) || json_is_array(from->data) ? jsonpath_get(path, from->data)
                                                                : from->data;
    if (!v || json_is_null(v)) {
        purser_error_set(r->err, PURSER_EINVAL,
                         "Required substitution source secret was not found at path %s in "
                         "source document [%s, %s] %s which is referenced by destination "
                         "document [%s, %s] %s under its `metadata.substitutions`.",
                         text, from->schema, from->layer, from->name, d->schema, d->layer, d->name);
        return NULL;
    }
    if (!pattern)
        return json_incref(v);
    if (!json_is_string(v)) {
        purser_error_set(r->err, PURSER_EINVAL,
                         "src.pattern of a substitution into [%s, %s] %s needs a string source",
                         d->schema, d->layer, d->name);
        return NULL;
    }
    {
        pcre2_code *re = regex(r, pattern);
        pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
        json_int_t group = s->group;
        int rc = md ? pcre2_match(re, (PCRE2_SPTR)json_string_value(v), json_string_length(v), 0, 0,
                                  md, match_context(r))
                    : -1;
        json_t *out = json_incref(v); /* no match: the whole value, as Deckhand does */
        if (md && rc < 0 && rc != PCRE2_ERROR_NOMATCH) { /* a limit is an error, not "no match" */
            purser_error_set(r->err, PURSER_EINVAL,
                             "substitution into [%s, %s] %s from [%s, %s] %s: src.pattern '%s' %s",
                             d->schema, d->layer, d->name, from->schema, from->layer, from->name,
                             pattern, pattern_failure(r, rc));
            pcre2_match_data_free(md);
            json_decref(out);
            return NULL;
        }
        if (rc > 0 && group >= 0 && group < rc) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            json_decref(out);
            out = json_stringn(json_string_value(v) + ov[2 * group],
                               ov[2 * group + 1] - ov[2 * group]);
        }
        pcre2_match_data_free(md);
        return re ? out : (json_decref(out), NULL);
    }
}

/* s with every match of re replaced by with (literally) into *out (a new string); 0, or
 * PCRE2's error (a limit, or PCRE2_ERROR_NOMEMORY for a result over the max_string limit). */
static int replace_all(struct render *r, pcre2_code *re, const char *s, size_t len,
                       const char *with, json_t **out)
{
    PCRE2_SIZE size = len + strlen(with) * 4 + 64;
    *out = NULL;
    for (int attempt = 0; attempt < 8; attempt++) {
        PCRE2_UCHAR *buf;
        PCRE2_SIZE out_len = size;
        int rc;
        if (size > r->limits->max_string || !(buf = malloc(size)))
            return PCRE2_ERROR_NOMEMORY;
        rc = pcre2_substitute(
            re, (PCRE2_SPTR)s, len, 0,
            PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_LITERAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH,
            NULL, match_context(r), (PCRE2_SPTR)with, PCRE2_ZERO_TERMINATED, buf, &out_len);
        if (rc >= 0) {
            r->replaced += (size_t)rc;
            *out = json_stringn((char *)buf, out_len);
            free(buf);
            return *out ? 0 : PCRE2_ERROR_NOMEMORY;
        }
        free(buf);
        if (rc != PCRE2_ERROR_NOMEMORY)
            return rc;
        size = out_len + 1;
    }
    return PCRE2_ERROR_NOMEMORY;
}

/* Replaces matches in every string under v, down to depth levels (-1: all); 0 or the first
 * PCRE2 error. */
static int replace_within(struct render *r, pcre2_code *re, json_t *v, const char *with, long depth)
{
    size_t i;
    const char *key;
    json_t *item, *s;
    int rc = 0;
    if (depth == 0)
        return 0;
    json_array_foreach (v, i, item) { /* (v is an array, or an object, or neither) */
        if (!json_is_string(item))
            rc = replace_within(r, re, item, with, depth - 1);
        else if (!(rc = replace_all(r, re, json_string_value(item), json_string_length(item), with,
                                    &s)))
            json_array_set_new(v, i, s);
        if (rc)
            break;
    }
    json_object_foreach (v, key, item) {
        if (!json_is_string(item))
            rc = replace_within(r, re, item, with, depth - 1);
        else if (!(rc = replace_all(r, re, json_string_value(item), json_string_length(item), with,
                                    &s)))
            json_object_set_new(v, key, s);
        if (rc)
            break;
    }
    return rc;
}

/* Where the substituted value's marks go (source: the mask of the value substituted, borrowed,
 * or NULL): a value put in place whole brings its own marks and clears the destination's; one
 * written into a string or into every string under the destination (dest.pattern, once it
 * matched) marks the whole destination when it is marked at all, and leaves its marks
 * otherwise. */
static int mark_destination(struct render *r, struct rdoc *d, const struct jsonpath *path,
                            const char *pattern, const json_t *source)
{
    json_t *sub;
    if ((pattern && !source) || (!source && !d->mask)) /* (the marks stay as they are) */
        return 0;
    sub = !source ? NULL : pattern ? json_true() : json_deep_copy(source);
    if ((source && !sub) || jsonmask_set(&d->mask, path, sub, d->data))
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    return 0;
}

static int substitute_into(struct render *r, struct rdoc *d, const struct rdest *dest,
                           json_t *value, const json_t *source_mask)
{
    const char *text = dest->path, *pattern = dest->pattern;
    const json_t *recurse = dest->recurse;
    const struct jsonpath *path = jsonpath_cached(r->paths, text, r->err);
    json_t *target;
    pcre2_code *re;
    char *with;
    int rc = 0;

    if (!path)
        return r->err->code;
    if (!pattern && mark_destination(r, d, path, NULL, source_mask))
        return r->err->code;
    if (jsonpath_unshare(path, &d->data, 0))
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    if (!pattern) /* (shared: written into later only through a copy of its own) */
        return jsonpath_set(path, &d->data, json_incref(value), r->err);
    target = jsonpath_get(path, d->data);
    r->replaced = 0;
    if (!(re = regex(r, pattern)))
        return r->err->code;
    if (!target || (!json_is_string(target) && !recurse))
        return purser_error_set(r->err, PURSER_EINVAL,
                                "The destination document's `data` section is missing the "
                                "pattern %s specified under `substitutions.dest.pattern` at path "
                                "%s, specified under `substitutions.dest.path`.",
                                pattern, text);
    with = json_is_string(value) ? strdup(json_string_value(value))
                                 : json_text(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!with)
        return purser_error_set(r->err, PURSER_EINTERNAL, "out of memory");
    if (json_is_string(target)) {
        json_t *s = NULL;
        int prc =
            replace_all(r, re, json_string_value(target), json_string_length(target), with, &s);
        rc = prc ? prc : jsonpath_set(path, &d->data, s, r->err);
        if (prc)
            rc = purser_error_set(
                r->err, PURSER_EINVAL, "substitution into [%s, %s] %s at %s: dest.pattern '%s' %s",
                d->schema, d->layer, d->name, text, pattern, pattern_failure(r, prc));
    } else {
        json_t *depth = json_object_get(recurse, "depth");
        int prc;
        /* every string under target may change: all of it this document's own */
        if (jsonpath_set(path, &d->data, json_deep_copy(target), r->err)) {
            free(with);
            return r->err->code;
        }
        target = jsonpath_get(path, d->data);
        prc = replace_within(r, re, target, with,
                             json_is_integer(depth) ? (long)json_integer_value(depth) : -1);
        if (prc)
            rc = purser_error_set(
                r->err, PURSER_EINVAL, "substitution into [%s, %s] %s at %s: dest.pattern '%s' %s",
                d->schema, d->layer, d->name, text, pattern, pattern_failure(r, prc));
    }
    free(with);
    if (!rc && r->replaced && mark_destination(r, d, path, pattern, source_mask))
        rc = r->err->code;
    return rc;
}

/* The mask of the value substitution s takes from its source (borrowed; true for a part of
 * a marked string that src.pattern cut out), or NULL when nothing of it is marked. */
static const json_t *source_mask(struct render *r, const struct rsub *s)
{
    const struct rdoc *from = s->from;
    const json_t *mask;
    if (!from->mask)
        return NULL;
    if (!json_is_object(from->data) && !json_is_array(from->data))
        mask = from->mask; /* (the whole data, whatever the path) */
    else
        mask = jsonmask_get(from->mask, jsonpath_cached(r->paths, s->path, r->err));
    return mask && s->pattern ? json_true() : mask;
}

int render_substitute(struct render *r, struct rdoc *d)
{
    if (d->nsubst && render_own_data(r, d))
        return r->err->code;
    int rc = 0;
    for (size_t i = 0; !rc && i < d->nsubst; i++) {
        const struct rsub *s = &d->subst[i];
        json_t *value = source_value(r, d, s);
        if (!value)
            rc = r->err->code; /* (source_value returns NULL and fills r->err) */
        for (size_t j = 0; !rc && j < s->ndests; j++)
            rc = substitute_into(r, d, &s->dests[j], value, source_mask(r, s));
        json_decref(value);
    }
    return rc;
}
