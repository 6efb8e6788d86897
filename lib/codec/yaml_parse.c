/* yaml_parse.c: libyaml events to jansson values, with an explicit stack and hard limits. */
#include "codec/yaml_codec.h"
#include "codec/yaml_scalar.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

const struct yaml_limits yaml_limits_default = {
    .max_bytes = 64u << 20,
    .max_depth = 200,
    .max_nodes = 4000000,
};

const struct yaml_limits yaml_limits_documents = {
    .max_bytes = 64u << 20,
    .max_depth = 200,
    .max_nodes = 4000000,
    .equal_duplicates = 1,
};

#define TAG_PREFIX "tag:yaml.org,2002:"

struct frame {
    json_t *container; /* owned until handed to the parent */
    json_t *key;       /* mappings: the key waiting for its value, or NULL */
    int key_is_merge;  /* the waiting key is "<<" */
    json_t *merged;    /* mappings: keys that came from a merge (may be overridden) */
    char *anchor;      /* owned */
    size_t first_node; /* node count when this container started */
    unsigned height;   /* deepest child below this container */
    yaml_mark_t mark;
};

struct anchor {
    char *name;
    json_t *value;
    size_t nodes;
    unsigned height;
};

struct parse {
    const struct yaml_limits *limits;
    struct purser_error *err;
    json_t *docs;
    json_t *root; /* the document being built */
    struct frame *stack;
    unsigned depth, stack_cap;
    struct anchor *anchors;
    size_t anchor_count, anchor_cap;
    size_t nodes;
    size_t alias_nodes;                                /* of nodes, those that aliases added */
    int (*each)(void *ctx, json_t *doc, size_t index); /* yaml_codec_parse_each's */
    void *each_ctx;
    size_t handed; /* documents handed to each */
};

/* A PURSER_EINVAL at mark: "message" or "message 'subject'". */
static int fail_at(struct parse *ps, const yaml_mark_t *mark, const char *message,
                   const char *subject)
{
    return purser_error_set_at(ps->err, PURSER_EINVAL, (int)mark->line + 1, (int)mark->column + 1,
                               subject ? "%s '%s'" : "%s%s", message, subject ? subject : "");
}

static void anchors_clear(struct parse *ps)
{
    for (size_t i = 0; i < ps->anchor_count; i++) {
        free(ps->anchors[i].name);
        json_decref(ps->anchors[i].value);
    }
    ps->anchor_count = 0;
}

static void frame_release(struct frame *f)
{
    json_decref(f->container);
    json_decref(f->key);
    json_decref(f->merged);
    free(f->anchor);
}

static int anchor_add(struct parse *ps, char *name, json_t *value, size_t nodes, unsigned height)
{
    struct anchor *a = NULL;
    for (size_t i = 0; i < ps->anchor_count; i++)
        if (strcmp(ps->anchors[i].name, name) == 0)
            a = &ps->anchors[i]; /* a redefined anchor replaces the earlier one */
    if (a) {
        free(a->name);
        json_decref(a->value);
    } else {
        if (ps->anchor_count == ps->anchor_cap) {
            size_t cap = ps->anchor_cap ? ps->anchor_cap * 2 : 8;
            struct anchor *grown = realloc(ps->anchors, cap * sizeof(*grown));
            if (!grown) {
                free(name);
                return PURSER_EINTERNAL;
            }
            ps->anchors = grown;
            ps->anchor_cap = cap;
        }
        a = &ps->anchors[ps->anchor_count++];
    }
    a->name = name;
    a->value = json_incref(value);
    a->nodes = nodes;
    a->height = height;
    return 0;
}

static int count_nodes(struct parse *ps, size_t n, const yaml_mark_t *mark)
{
    const char *key = ps->limits->nodes_key;
    if (n > ps->limits->max_nodes || ps->nodes > ps->limits->max_nodes - n)
        return purser_error_set_at(
            ps->err, PURSER_ETOOLARGE, (int)mark->line + 1, (int)mark->column + 1,
            "document too large: more than %zu nodes after expanding "
            "aliases%s%s%s",
            ps->limits->max_nodes, key ? " (" : "", key ? key : "", key ? ")" : "");
    ps->nodes += n;
    return 0;
}

/* An alias about to add n nodes: refused past max_alias_nodes, before anything is copied. */
static int count_alias_nodes(struct parse *ps, size_t n, const yaml_mark_t *mark)
{
    const char *key = ps->limits->alias_key;
    size_t max = ps->limits->max_alias_nodes;
    if (max && (n > max || ps->alias_nodes > max - n))
        return purser_error_set_at(ps->err, PURSER_ETOOLARGE, (int)mark->line + 1,
                                   (int)mark->column + 1,
                                   "aliases expand to more than %zu nodes%s%s%s", max,
                                   key ? " (" : "", key ? key : "", key ? ")" : "");
    ps->alias_nodes += n;
    return count_nodes(ps, n, mark);
}

/* Merges the mapping `source` into the mapping being built in f: keys already there stay. */
static int merge_mapping(struct parse *ps, struct frame *f, json_t *source, const yaml_mark_t *mark)
{
    const char *k;
    json_t *v;
    if (!json_is_object(source))
        return fail_at(ps, mark, "a merge key (<<) needs a mapping or a sequence of mappings",
                       NULL);
    if (!f->merged && !(f->merged = json_object()))
        return PURSER_EINTERNAL;
    json_object_foreach (source, k, v) {
        if (json_object_get(f->container, k))
            continue;
        if (json_object_set(f->container, k, v) || json_object_set(f->merged, k, json_true()))
            return PURSER_EINTERNAL;
    }
    return 0;
}

static int merge_value(struct parse *ps, struct frame *f, json_t *value, const yaml_mark_t *mark)
{
    size_t i;
    json_t *item;
    int rc = 0;
    if (!json_is_array(value))
        return merge_mapping(ps, f, value, mark);
    /* In a sequence of mappings, earlier mappings win: the merge keeps keys already there. */
    json_array_foreach (value, i, item) {
        rc = merge_mapping(ps, f, item, mark);
        if (rc)
            break;
    }
    return rc;
}

static int set_key(struct parse *ps, struct frame *f, json_t *value, const yaml_mark_t *mark)
{
    const char *key = json_string_value(f->key);
    if (json_object_get(f->container, key)) {
        if (f->merged && json_object_get(f->merged, key))
            json_object_del(f->merged, key); /* an explicit key overrides a merged one */
        else if (ps->limits->equal_duplicates &&
                 json_equal(json_object_get(f->container, key), value))
            return 0; /* the same again: nothing changes */
        else
            return purser_error_set_at(ps->err, PURSER_EINVAL, (int)mark->line + 1,
                                       (int)mark->column + 1,
                                       "duplicate key '%s' in document %zu (keys of a mapping "
                                       "are unique)",
                                       key, json_array_size(ps->docs) + ps->handed + 1);
    }
    return json_object_set(f->container, key, value) ? PURSER_EINTERNAL : 0;
}

/* Hands value (a new reference, consumed) to the container on top of the stack, or makes it
 * the document root. is_merge_key marks a plain "<<" scalar. */
static int add_value(struct parse *ps, json_t *value, int is_merge_key, const yaml_mark_t *mark)
{
    struct frame *f;
    int rc = 0;

    if (ps->depth == 0) {
        ps->root = value;
        return 0;
    }
    f = &ps->stack[ps->depth - 1];
    if (json_is_array(f->container)) {
        rc = json_array_append_new(f->container, value) ? PURSER_EINTERNAL : 0;
        return rc;
    }
    if (!f->key) {
        char *text;
        if (json_is_object(value) || json_is_array(value)) {
            json_decref(value);
            return fail_at(ps, mark, "a mapping or sequence cannot be a mapping key", NULL);
        }
        text = yaml_codec_key_text(value);
        json_decref(value);
        if (!text || !(f->key = json_string(text))) {
            free(text);
            return PURSER_EINTERNAL;
        }
        free(text);
        f->key_is_merge = is_merge_key;
        return 0;
    }
    if (f->key_is_merge)
        rc = merge_value(ps, f, value, mark);
    else
        rc = set_key(ps, f, value, mark);
    json_decref(value);
    json_decref(f->key);
    f->key = NULL;
    f->key_is_merge = 0;
    return rc;
}

static void note_height(struct parse *ps, unsigned height)
{
    if (ps->depth && ps->stack[ps->depth - 1].height < height + 1)
        ps->stack[ps->depth - 1].height = height + 1;
}

static int on_start(struct parse *ps, yaml_event_t *ev, int is_map)
{
    struct frame *f;
    const char *tag =
        (const char *)(is_map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
    const char *anchor =
        (const char *)(is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor);
    const char *want = is_map ? TAG_PREFIX "map" : TAG_PREFIX "seq";
    int rc;

    if (tag && strcmp(tag, want) != 0 && strcmp(tag, "!") != 0)
        return fail_at(ps, &ev->start_mark, "unsupported tag", tag);
    if (ps->depth >= ps->limits->max_depth)
        return purser_error_set_at(ps->err, PURSER_EINVAL, (int)ev->start_mark.line + 1,
                                   (int)ev->start_mark.column + 1, "nesting deeper than %u levels",
                                   ps->limits->max_depth);
    rc = count_nodes(ps, 1, &ev->start_mark);
    if (!rc && ps->depth == ps->stack_cap) {
        unsigned cap = ps->stack_cap ? ps->stack_cap * 2 : 16;
        struct frame *grown = realloc(ps->stack, cap * sizeof(*grown));
        if (!grown) {
            rc = PURSER_EINTERNAL;
        } else {
            ps->stack = grown;
            ps->stack_cap = cap;
        }
    }
    if (!rc) {
        f = &ps->stack[ps->depth];
        memset(f, 0, sizeof(*f));
        f->container = is_map ? json_object() : json_array();
        f->anchor = anchor ? strdup(anchor) : NULL;
        f->first_node = ps->nodes - 1;
        f->mark = ev->start_mark;
        ps->depth++;
        if (!f->container || (anchor && !f->anchor))
            rc = PURSER_EINTERNAL;
    }
    return rc;
}

static int on_end(struct parse *ps, yaml_event_t *ev)
{
    struct frame f = ps->stack[--ps->depth];
    int rc = 0;
    (void)ev;
    if (f.anchor) {
        rc = anchor_add(ps, f.anchor, f.container, ps->nodes - f.first_node, f.height);
        f.anchor = NULL;
    }
    note_height(ps, f.height);
    json_decref(f.key);
    json_decref(f.merged);
    if (rc) {
        json_decref(f.container);
        return rc;
    }
    return add_value(ps, f.container, 0, &f.mark);
}

static int scalar_kind_for_tag(struct parse *ps, yaml_event_t *ev, enum yaml_scalar_kind *kind)
{
    static const struct {
        const char *name;
        enum yaml_scalar_kind kind;
    } tags[] = {
        {"str", YAML_SCALAR_STRING},          {"binary", YAML_SCALAR_BINARY},
        {"timestamp", YAML_SCALAR_TIMESTAMP}, {"null", YAML_SCALAR_NULL},
        {"bool", YAML_SCALAR_BOOL},           {"int", YAML_SCALAR_INT},
        {"float", YAML_SCALAR_FLOAT},
    };
    const char *tag = (const char *)ev->data.scalar.tag;
    const char *value = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;

    if (!tag) {
        *kind = ev->data.scalar.plain_implicit && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                    ? yaml_scalar_kind(value, len)
                    : YAML_SCALAR_STRING;
        return 0;
    }
    if (strcmp(tag, "!") == 0) {
        *kind = YAML_SCALAR_STRING;
        return 0;
    }
    if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0)
        for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
            if (strcmp(tag + strlen(TAG_PREFIX), tags[i].name) == 0) {
                *kind = tags[i].kind;
                return 0;
            }
    return fail_at(ps, &ev->start_mark, "unsupported tag", tag);
}

static int on_scalar(struct parse *ps, yaml_event_t *ev)
{
    enum yaml_scalar_kind kind = YAML_SCALAR_STRING;
    json_t *value;
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    int is_merge, rc;

    rc = scalar_kind_for_tag(ps, ev, &kind);
    if (!rc)
        rc = count_nodes(ps, 1, &ev->start_mark);
    if (!rc) {
        rc = yaml_scalar_to_json(&value, kind, text, len, ps->err);
        if (rc && ps->err) {
            ps->err->line = (int)ev->start_mark.line + 1;
            ps->err->column = (int)ev->start_mark.column + 1;
        }
    }
    if (!rc && ev->data.scalar.anchor) {
        rc = anchor_add(ps, strdup((const char *)ev->data.scalar.anchor), value, 1, 0);
        if (rc)
            json_decref(value);
    }
    if (!rc) {
        is_merge = !ev->data.scalar.tag && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                   len == 2 && memcmp(text, "<<", 2) == 0;
        rc = add_value(ps, value, is_merge, &ev->start_mark);
    }
    return rc;
}

static int on_alias(struct parse *ps, yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    for (size_t i = ps->anchor_count; i-- > 0;) {
        struct anchor *a = &ps->anchors[i];
        json_t *copy;
        int rc;
        if (strcmp(a->name, name) != 0)
            continue;
        if (ps->depth + a->height >= ps->limits->max_depth)
            return purser_error_set_at(ps->err, PURSER_EINVAL, (int)ev->start_mark.line + 1,
                                       (int)ev->start_mark.column + 1,
                                       "nesting deeper than %u levels", ps->limits->max_depth);
        rc = count_alias_nodes(ps, a->nodes, &ev->start_mark);
        if (!rc) {
            note_height(ps, a->height);
            copy = json_deep_copy(a->value);
            rc = copy ? add_value(ps, copy, 0, &ev->start_mark) : PURSER_EINTERNAL;
        }
        return rc;
    }
    return fail_at(ps, &ev->start_mark, "undefined alias", name);
}

static int on_event(struct parse *ps, yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        anchors_clear(ps);
        ps->root = NULL;
        return 0;
    case YAML_DOCUMENT_END_EVENT: {
        json_t *doc = ps->root ? ps->root : json_null();
        ps->root = NULL;
        if (ps->each)
            return ps->each(ps->each_ctx, doc, ps->handed++);
        return json_array_append_new(ps->docs, doc) ? PURSER_EINTERNAL : 0;
    }
    case YAML_SCALAR_EVENT: return on_scalar(ps, ev);
    case YAML_ALIAS_EVENT: return on_alias(ps, ev);
    case YAML_SEQUENCE_START_EVENT: return on_start(ps, ev, 0);
    case YAML_MAPPING_START_EVENT: return on_start(ps, ev, 1);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: return on_end(ps, ev);
    default: return 0;
    }
}

/* libyaml reports reader errors (bad UTF-8, control characters) by byte offset. */
static void offset_to_position(const char *text, size_t offset, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < offset; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            (*column)++;
        }
    }
}

static int syntax_error(struct parse *ps, yaml_parser_t *parser, const char *text)
{
    int line, column;
    const char *problem = parser->problem ? parser->problem : "malformed YAML";
    if (parser->error == YAML_MEMORY_ERROR)
        return purser_error_set(ps->err, PURSER_EINTERNAL, "out of memory parsing YAML");
    if (parser->error == YAML_READER_ERROR) {
        offset_to_position(text, parser->problem_offset, &line, &column);
        return purser_error_set_at(ps->err, PURSER_EINVAL, line, column, "%s", problem);
    }
    line = (int)parser->problem_mark.line + 1;
    column = (int)parser->problem_mark.column + 1;
    if (parser->context)
        return purser_error_set_at(ps->err, PURSER_EINVAL, line, column, "%s %s", problem,
                                   parser->context);
    return purser_error_set_at(ps->err, PURSER_EINVAL, line, column, "%s", problem);
}

int yaml_codec_parse(json_t **out, const char *text, size_t len, const struct yaml_limits *limits,
                     struct purser_error *err)
{
    return yaml_codec_parse_each(out, text, len, limits, NULL, NULL, err);
}

int yaml_codec_parse_each(json_t **out, const char *text, size_t len,
                          const struct yaml_limits *limits,
                          int (*each)(void *ctx, json_t *doc, size_t index), void *ctx,
                          struct purser_error *err)
{
    struct parse ps = {.limits = limits ? limits : &yaml_limits_default,
                       .err = err,
                       .each = each,
                       .each_ctx = ctx};
    yaml_parser_t parser;
    yaml_event_t event;
    int rc = 0, done = 0;

    *out = NULL;
    purser_error_clear(err);
    if (len > ps.limits->max_bytes)
        return purser_error_set(err, PURSER_ETOOLARGE, "YAML input larger than %zu bytes",
                                ps.limits->max_bytes);
    if (!yaml_parser_initialize(&parser))
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory parsing YAML");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!(ps.docs = json_array()))
        rc = PURSER_EINTERNAL;
    while (!rc && !done) {
        if (!yaml_parser_parse(&parser, &event)) {
            rc = syntax_error(&ps, &parser, text);
            break;
        }
        rc = on_event(&ps, &event);
        done = event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    if (rc == PURSER_EINTERNAL && err && !err->message[0])
        purser_error_set(err, PURSER_EINTERNAL, "out of memory parsing YAML");
    while (ps.depth)
        frame_release(&ps.stack[--ps.depth]);
    free(ps.stack);
    anchors_clear(&ps);
    free(ps.anchors);
    json_decref(ps.root);
    yaml_parser_delete(&parser);
    if (rc)
        json_decref(ps.docs);
    else
        *out = ps.docs;
    return rc;
}
