/* jsondiff.c: deepdiff-shaped differences between JSON values. */
#include "codec/jsondiff.h"

#include "base/buf.h"

#include <string.h>

static const char *python_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "<class 'dict'>";
    case JSON_ARRAY: return "<class 'list'>";
    case JSON_STRING: return "<class 'str'>";
    case JSON_INTEGER: return "<class 'int'>";
    case JSON_REAL: return "<class 'float'>";
    case JSON_TRUE:
    case JSON_FALSE: return "<class 'bool'>";
    default: return "<class 'NoneType'>";
    }
}

/* The group object of a kind ("values_changed"), created on first use. */
static json_t *group(json_t *out, const char *kind, int as_list)
{
    json_t *g = json_object_get(out, kind);
    if (!g) {
        g = as_list ? json_array() : json_object();
        json_object_set_new(out, kind, g);
    }
    return g;
}

/* path + "['key']" (Python's repr of a str key) or path + "[i]". */
static void child_path(struct buf *path, size_t keep, const char *key, size_t index)
{
    int double_quoted;
    path->len = keep;
    path->data[keep] = '\0';
    if (!key) {
        buf_printf(path, "[%zu]", index);
        return;
    }
    double_quoted = strchr(key, '\'') && !strchr(key, '"');
    buf_adds(path, double_quoted ? "[\"" : "['");
    for (const char *c = key; *c; c++) {
        if (*c == '\\' || (!double_quoted && *c == '\''))
            buf_addc(path, '\\');
        buf_addc(path, *c);
    }
    buf_adds(path, double_quoted ? "\"]" : "']");
}

static void diff(json_t *out, struct buf *path, const json_t *a, const json_t *b);

static void diff_objects(json_t *out, struct buf *path, const json_t *a, const json_t *b)
{
    size_t keep = path->len;
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *)b, key, v) {
        child_path(path, keep, key, 0);
        if (!json_object_get(a, key))
            json_array_append_new(group(out, "dictionary_item_added", 1),
                                  json_string(buf_cstr(path)));
    }
    json_object_foreach ((json_t *)a, key, v) {
        const json_t *other = json_object_get(b, key);
        child_path(path, keep, key, 0);
        if (!other)
            json_array_append_new(group(out, "dictionary_item_removed", 1),
                                  json_string(buf_cstr(path)));
        else
            diff(out, path, v, other);
    }
    path->len = keep;
    path->data[keep] = '\0';
}

static void diff_arrays(json_t *out, struct buf *path, const json_t *a, const json_t *b)
{
    size_t keep = path->len, na = json_array_size(a), nb = json_array_size(b);
    for (size_t i = 0; i < na || i < nb; i++) {
        child_path(path, keep, NULL, i);
        if (i >= na)
            json_object_set(group(out, "iterable_item_added", 0), buf_cstr(path),
                            json_array_get(b, i));
        else if (i >= nb)
            json_object_set(group(out, "iterable_item_removed", 0), buf_cstr(path),
                            json_array_get(a, i));
        else
            diff(out, path, json_array_get(a, i), json_array_get(b, i));
    }
    path->len = keep;
    path->data[keep] = '\0';
}

static void diff(json_t *out, struct buf *path, const json_t *a, const json_t *b)
{
    if (strcmp(python_type(a), python_type(b)) != 0) {
        json_object_set_new(group(out, "type_changes", 0), buf_cstr(path),
                            json_pack("{s:s, s:s, s:O, s:O}", "old_type", python_type(a),
                                      "new_type", python_type(b), "old_value", a, "new_value", b));
    } else if (json_is_object(a)) {
        diff_objects(out, path, a, b);
    } else if (json_is_array(a)) {
        diff_arrays(out, path, a, b);
    } else if (!json_equal(a, b)) {
        json_object_set_new(group(out, "values_changed", 0), buf_cstr(path),
                            json_pack("{s:O, s:O}", "new_value", b, "old_value", a));
    }
}

json_t *jsondiff_deep(const json_t *old_value, const json_t *new_value)
{
    json_t *out = json_object();
    struct buf path = BUF_INIT;
    if (!out || buf_adds(&path, "root")) {
        json_decref(out);
        return NULL;
    }
    diff(out, &path, old_value ? old_value : json_null(), new_value ? new_value : json_null());
    buf_release(&path);
    return out;
}
