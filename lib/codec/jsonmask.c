/* jsonmask.c: marks on the parts of a JSON value (a mask), followed through changes by path
 * and applied as redaction. */
#include "codec/jsonmask.h"

#include <stdio.h>
#include <stdlib.h>

/* The mask member's name for step i of path: the key, or the index in decimal (into buf). */
static const char *step_name(const struct jsonpath *path, size_t i, char buf[24])
{
    size_t index;
    const char *key = jsonpath_step(path, i, &index);
    if (key)
        return key;
    snprintf(buf, 24, "%zu", index);
    return buf;
}

/* The part of value at step i of path, or NULL. */
static const json_t *step_value(const json_t *value, const struct jsonpath *path, size_t i)
{
    size_t index;
    const char *key = jsonpath_step(path, i, &index);
    if (key)
        return json_is_object(value) ? json_object_get(value, key) : NULL;
    return json_is_array(value) ? json_array_get(value, index) : NULL;
}

/* An object mask that marks nothing is NULL. */
static void tidy(json_t **mask)
{
    if (json_is_object(*mask) && json_object_size(*mask) == 0) {
        json_decref(*mask);
        *mask = NULL;
    }
}

const json_t *jsonmask_get(const json_t *mask, const struct jsonpath *path)
{
    char buf[24];
    for (size_t i = 0; i < jsonpath_length(path) && json_is_object(mask); i++)
        mask = json_object_get(mask, step_name(path, i, buf));
    return json_is_object(mask) || json_is_true(mask) ? mask : NULL;
}

int jsonmask_split(json_t **mask, const json_t *value)
{
    json_t *parts, *item;
    const char *key;
    size_t i;
    if (!json_is_true(*mask))
        return 0;
    if (!(parts = json_object()))
        return -1;
    json_object_foreach ((json_t *)value, key, item)
        if (json_object_set_new(parts, key, json_true()))
            goto fail;
    json_array_foreach (value, i, item) {
        char buf[24];
        snprintf(buf, sizeof(buf), "%zu", i);
        if (json_object_set_new(parts, buf, json_true()))
            goto fail;
    }
    json_decref(*mask);
    *mask = parts;
    return 0;
fail:
    json_decref(parts);
    return -1;
}

/* jsonmask_set from step i on, *mask and value being the mask and the value at step i. */
static int set_from(json_t **mask, const struct jsonpath *path, size_t i, json_t *sub,
                    const json_t *value)
{
    char buf[24];
    const char *name;
    json_t *child;
    int rc = 0;
    if (i == jsonpath_length(path)) {
        json_decref(*mask);
        *mask = sub;
        return 0;
    }
    if (json_is_true(*mask) && json_is_true(sub))
        return 0; /* (marked already) */
    if (!*mask && !sub)
        return 0;
    if (jsonmask_split(mask, value) || (!*mask && !(*mask = json_object()))) {
        json_decref(sub);
        return -1;
    }
    name = step_name(path, i, buf);
    child = json_incref(json_object_get(*mask, name)); /* (ours alone once it is out) */
    json_object_del(*mask, name);
    rc = set_from(&child, path, i + 1, sub, step_value(value, path, i));
    if (child && json_object_set_new(*mask, name, child))
        rc = -1;
    tidy(mask);
    return rc;
}

int jsonmask_set(json_t **mask, const struct jsonpath *path, json_t *sub, const json_t *value)
{
    if (json_is_object(sub) && json_object_size(sub) == 0) {
        json_decref(sub);
        sub = NULL;
    }
    return set_from(mask, path, 0, sub, value);
}

/* The marks of a list's items after index move up one place (the item at index is gone). */
static int shift_items(json_t **mask, size_t index)
{
    json_t *moved = json_object(), *m;
    const char *key;
    if (!moved)
        return -1;
    json_object_foreach (*mask, key, m) {
        char *end, buf[24];
        unsigned long long at = strtoull(key, &end, 10);
        if (*end || at == index)
            continue;
        snprintf(buf, sizeof(buf), "%llu", at > index ? at - 1 : at);
        if (json_object_set(moved, buf, m)) {
            json_decref(moved);
            return -1;
        }
    }
    json_decref(*mask);
    *mask = moved;
    return 0;
}

/* jsonmask_remove from step i on. */
static int remove_from(json_t **mask, const struct jsonpath *path, size_t i, const json_t *value)
{
    char buf[24];
    const char *name;
    size_t index;
    json_t *child;
    int rc;
    if (!json_is_object(*mask)) /* nothing marked, or all that stays is still marked */
        return 0;
    name = step_name(path, i, buf);
    if (i + 1 == jsonpath_length(path)) {
        rc = 0;
        if (!jsonpath_step(path, i, &index) && json_is_array(value))
            rc = shift_items(mask, index);
        else
            json_object_del(*mask, name);
        tidy(mask);
        return rc;
    }
    child = json_incref(json_object_get(*mask, name));
    json_object_del(*mask, name);
    rc = remove_from(&child, path, i + 1, step_value(value, path, i));
    if (child && json_object_set_new(*mask, name, child))
        rc = -1;
    tidy(mask);
    return rc;
}

int jsonmask_remove(json_t **mask, const struct jsonpath *path, const json_t *value)
{
    if (jsonpath_length(path) == 0) { /* (the whole value emptied) */
        json_decref(*mask);
        *mask = NULL;
        return 0;
    }
    return remove_from(mask, path, 0, value);
}

int jsonmask_any(const json_t *mask)
{
    const char *key;
    const json_t *m;
    if (json_is_true(mask))
        return 1;
    json_object_foreach ((json_t *)mask, key, m)
        if (jsonmask_any(m))
            return 1;
    return 0;
}

json_t *jsonmask_apply(const json_t *value, const json_t *mask, const char *with)
{
    json_t *out, *m;
    const char *key;
    if (json_is_true(mask))
        return json_string(with);
    if (!json_is_object(mask) || !(json_is_object(value) || json_is_array(value)))
        return json_incref((json_t *)value);
    if (!(out = json_copy((json_t *)value)))
        return NULL;
    json_object_foreach ((json_t *)mask, key, m) {
        json_t *part, *redacted;
        char *end;
        unsigned long long at = strtoull(key, &end, 10);
        part = json_is_object(value) ? json_object_get(value, key)
               : *end || !*key       ? NULL
                                     : json_array_get(value, (size_t)at);
        if (!part || !jsonmask_any(m))
            continue;
        if (!(redacted = jsonmask_apply(part, m, with)) ||
            (json_is_object(out) ? json_object_set_new(out, key, redacted)
                                 : json_array_set_new(out, (size_t)at, redacted))) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}
