/* policy_diff.c: run list, cookbook and attribute differences between two locks. */
#include "policy/policy_diff.h"

#include <stdlib.h>
#include <string.h>

static int array_has(const json_t *array, const json_t *value)
{
    size_t i;
    json_t *item;
    json_array_foreach (array, i, item) {
        if (json_equal(item, value))
            return 1;
    }
    return 0;
}

/* The items of a that are not in b, in a's order. */
static json_t *array_minus(const json_t *a, const json_t *b)
{
    json_t *out = json_array();
    size_t i;
    json_t *item;
    json_array_foreach (a, i, item) {
        if (!array_has(b, item))
            json_array_append(out, item);
    }
    return out;
}

static json_t *run_list_diff(const json_t *from, const json_t *to)
{
    const json_t *a = json_object_get(from, "run_list"), *b = json_object_get(to, "run_list");
    json_t *empty = json_array();
    json_t *out;
    if (!json_is_array(a))
        a = empty;
    if (!json_is_array(b))
        b = empty;
    out = json_pack("{s:O, s:O, s:o, s:o}", "from", a, "to", b, "added", array_minus(b, a),
                    "removed", array_minus(a, b));
    json_decref(empty);
    return out;
}

static json_t *version_of(const json_t *lock)
{
    const json_t *v = json_object_get(lock, "version");
    return json_is_string(v) ? json_incref((json_t *)v) : json_null();
}

static json_t *cookbook_diff(const json_t *from, const json_t *to)
{
    const json_t *a = json_object_get(from, "cookbook_locks"),
                 *b = json_object_get(to, "cookbook_locks");
    json_t *added = json_object(), *removed = json_object(), *changed = json_object();
    const char *name;
    json_t *lock;
    json_object_foreach ((json_t *)b, name, lock) {
        const json_t *old = json_object_get(a, name);
        if (!old) {
            json_object_set_new(added, name, version_of(lock));
        } else if (!json_equal(json_object_get(old, "version"), json_object_get(lock, "version")) ||
                   !json_equal(json_object_get(old, "identifier"),
                               json_object_get(lock, "identifier"))) {
            json_object_set_new(changed, name,
                                json_pack("{s:o, s:o, s:O?, s:O?}", "from", version_of(old), "to",
                                          version_of(lock), "from_identifier",
                                          json_object_get(old, "identifier"), "to_identifier",
                                          json_object_get(lock, "identifier")));
        }
    }
    json_object_foreach ((json_t *)a, name, lock) {
        if (!json_object_get(b, name))
            json_object_set_new(removed, name, version_of(lock));
    }
    return json_pack("{s:o, s:o, s:o}", "added", added, "removed", removed, "changed", changed);
}

/* Appends to the three lists the paths below prefix where a and b differ. */
static void attribute_paths(const char *prefix, const json_t *a, const json_t *b, json_t *added,
                            json_t *removed, json_t *changed)
{
    const char *key;
    json_t *value;
    if (!json_is_object(a) || !json_is_object(b)) {
        if (!json_equal(a, b))
            json_array_append_new(changed, json_string(prefix));
        return;
    }
    json_object_foreach ((json_t *)b, key, value) {
        char *path = malloc(strlen(prefix) + strlen(key) + 2);
        sprintf(path, "%s.%s", prefix, key);
        if (!json_object_get(a, key))
            json_array_append_new(added, json_string(path));
        else
            attribute_paths(path, json_object_get(a, key), value, added, removed, changed);
        free(path);
    }
    json_object_foreach ((json_t *)a, key, value) {
        if (!json_object_get(b, key)) {
            char *path = malloc(strlen(prefix) + strlen(key) + 2);
            sprintf(path, "%s.%s", prefix, key);
            json_array_append_new(removed, json_string(path));
            free(path);
        }
    }
}

static int compare_strings(const void *x, const void *y)
{
    return strcmp(json_string_value(*(json_t *const *)x), json_string_value(*(json_t *const *)y));
}

/* Sorts an array of strings in place. */
static void sort_strings(json_t *array)
{
    size_t n = json_array_size(array);
    json_t **items = malloc((n ? n : 1) * sizeof(*items));
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(array, i));
    qsort(items, n, sizeof(*items), compare_strings);
    json_array_clear(array);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(array, items[i]);
    free(items);
}

static json_t *attributes_diff(const json_t *from, const json_t *to)
{
    static const char *const sets[] = {"default_attributes", "override_attributes"};
    json_t *added = json_array(), *removed = json_array(), *changed = json_array();
    json_t *empty = json_object();
    for (size_t i = 0; i < 2; i++) {
        const json_t *a = json_object_get(from, sets[i]), *b = json_object_get(to, sets[i]);
        attribute_paths(sets[i], a ? a : empty, b ? b : empty, added, removed, changed);
    }
    json_decref(empty);
    sort_strings(added);
    sort_strings(removed);
    sort_strings(changed);
    return json_pack("{s:o, s:o, s:o}", "added", added, "removed", removed, "changed", changed);
}

json_t *policy_diff(const json_t *from, const json_t *to)
{
    return json_pack("{s:o, s:o, s:o}", "run_list", run_list_diff(from, to), "cookbooks",
                     cookbook_diff(from, to), "attributes", attributes_diff(from, to));
}
