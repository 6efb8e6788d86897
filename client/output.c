/* output.c: what purserctl prints: aligned tables with relative times, the API's JSON, YAML,
 * names; the progress bar; reading the files it is given. */
#include "ctl.h"

#include "codec/yaml_codec.h"
#include "config/config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

char *ctl_printf(struct ctl *ctl, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    if (!text)
        return "";
    arena_add_cleanup(ctl->arena, free, text);
    return text;
}

json_t *ctl_dig(const json_t *value, const char *path)
{
    char part[128];
    while (value && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof(part))
            return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        value = json_object_get(value, part);
        path += n + (path[n] == '.');
    }
    return (json_t *)value;
}

const char *ctl_relative_time(struct ctl *ctl, const char *iso)
{
    struct tm tm = {0};
    time_t at, now = time(NULL);
    long long diff;
    const char *unit = "s";
    if (!iso || !*iso)
        return "-";
    if (!strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
        return iso;
    at = timegm(&tm);
    diff = (long long)(now - at);
    long long size = diff < 0 ? -diff : diff;
    if (size >= 2 * 86400)
        size /= 86400, unit = "d";
    else if (size >= 2 * 3600)
        size /= 3600, unit = "h";
    else if (size >= 120)
        size /= 60, unit = "m";
    return diff < 0 ? ctl_printf(ctl, "in %lld%s", size, unit)
                    : ctl_printf(ctl, "%lld%s ago", size, unit);
}

/* A cell's text: strings as they are, numbers, true/false, lists joined by ',', objects as
 * k=v pairs, null "-". */
static const char *cell_text(struct ctl *ctl, const json_t *v, enum ctl_column_kind kind)
{
    struct buf text = BUF_INIT;
    const char *key;
    json_t *item;
    size_t i;
    char *out;

    if (kind == COL_TIME)
        return ctl_relative_time(ctl, json_string_value(v));
    if (kind == COL_COUNT)
        return ctl_printf(ctl, "%zu", json_is_object(v) ? json_object_size(v) : json_array_size(v));
    switch (json_typeof(v ? v : json_null())) {
    case JSON_STRING: return *json_string_value(v) ? json_string_value(v) : "-";
    case JSON_INTEGER: return ctl_printf(ctl, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL: return ctl_printf(ctl, "%g", json_real_value(v));
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_ARRAY:
        json_array_foreach (v, i, item)
            buf_printf(&text, "%s%s", i ? "," : "", cell_text(ctl, item, COL_TEXT));
        break;
    case JSON_OBJECT:
        json_object_foreach ((json_t *)v, key, item)
            buf_printf(&text, "%s%s=%s", text.len ? "," : "", key, cell_text(ctl, item, COL_TEXT));
        break;
    default: return "-";
    }
    out = ctl_printf(ctl, "%s", text.len ? text.data : "-");
    buf_release(&text);
    return out;
}

/* The rows of a list answer as an array of objects (a new reference); a row of a keyed object
 * is {"@key": key, "": value}. */
static json_t *rows_of(const json_t *answer, const struct ctl_view *view)
{
    json_t *rows, *value;
    const char *key;
    if (view->rows_are_keys && json_is_object(answer)) {
        rows = json_array();
        json_object_foreach ((json_t *)answer, key, value) {
            json_t *row = json_is_object(value) ? json_deep_copy(value) : json_object();
            json_object_set_new(row, "@key", json_string(key));
            json_object_set(row, "@value", value);
            json_array_append_new(rows, row);
        }
        return rows;
    }
    rows = view->rows ? json_object_get(answer, view->rows) : (json_t *)answer;
    if (json_is_array(rows))
        return json_incref(rows);
    rows = json_array();
    json_array_append(rows, (json_t *)answer);
    return rows;
}

static const json_t *column_value(const json_t *row, const struct ctl_column *column)
{
    return *column->path ? ctl_dig(row, column->path) : row;
}

/* The columns a text takes on a terminal: its UTF-8 characters (continuation bytes not counted). */
static size_t display_width(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += ((unsigned char)*text & 0xC0) != 0x80;
    return n;
}

static void print_table(struct ctl *ctl, const json_t *rows, const struct ctl_column *columns)
{
    size_t ncol = 0, width[32] = {0}, i, c;
    const char ***cells;
    json_t *row;

    while (columns[ncol].header && ncol < 32)
        ncol++;
    cells = arena_calloc(ctl->arena, json_array_size(rows) + 1, sizeof(*cells));
    for (i = 0; i <= json_array_size(rows); i++) {
        cells[i] = arena_calloc(ctl->arena, ncol, sizeof(char *));
        for (c = 0; c < ncol; c++) {
            row = json_array_get(rows, i ? i - 1 : 0);
            cells[i][c] = i ? cell_text(ctl, column_value(row, &columns[c]), columns[c].kind)
                            : columns[c].header;
            if (display_width(cells[i][c]) > width[c])
                width[c] = display_width(cells[i][c]);
        }
    }
    for (i = 0; i <= json_array_size(rows); i++)
        for (c = 0; c < ncol; c++)
            if (c + 1 < ncol)
                printf("%s%*s", cells[i][c], (int)(width[c] - display_width(cells[i][c]) + 3), "");
            else
                printf("%s\n", cells[i][c]);
}

int ctl_print_yaml(FILE *out, const json_t *value)
{
    struct buf text = BUF_INIT;
    int rc = ctl_yaml_text(&text, value);
    if (!rc)
        fwrite(text.data, 1, text.len, out);
    buf_release(&text);
    return rc;
}

static const struct ctl_column default_columns[] = {{"NAME", "@key", COL_TEXT}, {NULL, NULL, 0}};

int ctl_print(struct ctl *ctl, const json_t *answer, const struct ctl_view *view, const char *raw)
{
    static const struct ctl_view plain = {"object", NULL, 0, "name", NULL};
    json_t *rows;
    size_t i;

    if (!view)
        view = &plain;
    switch (ctl->output) {
    case OUT_JSON:
        if (raw) {
            fputs(raw, stdout);
            if (*raw && raw[strlen(raw) - 1] != '\n')
                putchar('\n');
        } else {
            json_dumpf(answer, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY);
            putchar('\n');
        }
        return CTL_OK;
    case OUT_YAML: return ctl_print_yaml(stdout, answer);
    case OUT_NAME:
        rows = rows_of(answer, view);
        for (i = 0; i < json_array_size(rows); i++) {
            const json_t *row = json_array_get(rows, i);
            const char *name = json_string_value(json_object_get(row, "@key"));
            json_t *named = view->name ? ctl_dig(row, view->name) : NULL;
            printf("%s/%s\n", view->kind, name ? name : cell_text(ctl, named, COL_TEXT));
        }
        json_decref(rows);
        return CTL_OK;
    default:
        if (!view->columns && !view->rows_are_keys)
            return ctl_print_yaml(stdout, answer);
        rows = rows_of(answer, view);
        print_table(ctl, rows, view->columns ? view->columns : default_columns);
        json_decref(rows);
        return CTL_OK;
    }
}

/* ---- progress ------------------------------------------------------------------------------ */

static const char *size_text(char *out, size_t n, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (bytes >= 1024 && u < 3)
        bytes /= 1024, u++;
    snprintf(out, n, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return out;
}

void ctl_progress(struct ctl *ctl, const char *what, double done, double total)
{
    char a[32], b[32];
    if (ctl->quiet || !isatty(STDERR_FILENO))
        return;
    ctl->progress_shown = 1;
    if (total > 0) {
        int filled = (int)(30 * done / total);
        fprintf(stderr, "\r%s [%-30.*s] %3.0f%% %s of %s", what, filled,
                "##############################", 100 * done / total, size_text(a, sizeof(a), done),
                size_text(b, sizeof(b), total));
    } else
        fprintf(stderr, "\r%s %s", what, size_text(a, sizeof(a), done));
    fflush(stderr);
}

void ctl_progress_end(struct ctl *ctl)
{
    if (ctl->progress_shown)
        fputc('\n', stderr);
    ctl->progress_shown = 0;
}

/* ---- files --------------------------------------------------------------------------------- */

int ctl_read_file(struct buf *out, const char *path)
{
    struct purser_error err;
    char *text = NULL, chunk[65536];
    size_t len = 0, n;

    if (strcmp(path, "-") == 0) {
        while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
            buf_add(out, chunk, n);
        buf_addc(out, '\0');
        out->len--;
        return CTL_OK;
    }
    if (file_read_all(&text, &len, path, (size_t)1 << 31, &err))
        return ctl_error(CTL_INVALID, "%s", err.message);
    buf_add(out, text, len);
    buf_addc(out, '\0');
    out->len--;
    free(text);
    return CTL_OK;
}

int ctl_read_value(json_t **out, const char *path)
{
    struct buf text = BUF_INIT;
    struct purser_error err;
    json_t *docs = NULL;
    int rc = ctl_read_file(&text, path);

    *out = NULL;
    if (!rc && !(*out = json_loadb(text.data, text.len, 0, NULL))) {
        if (yaml_codec_parse(&docs, text.data, text.len, NULL, &err))
            rc = ctl_error(CTL_INVALID, "%s:%d:%d: %s", path, err.line, err.column, err.message);
        else if (json_array_size(docs) != 1)
            rc = ctl_error(CTL_INVALID, "%s: one document expected, found %zu", path,
                           json_array_size(docs));
        else
            *out = json_incref(json_array_get(docs, 0));
    }
    json_decref(docs);
    buf_release(&text);
    return rc;
}

static int yaml_stream(struct buf *out, const json_t *docs)
{
    struct purser_error err;
    int rc = docs ? yaml_codec_emit(out, docs, &err) : PURSER_EINTERNAL;
    return rc ? ctl_error(CTL_INVALID, "cannot write YAML: %s", docs ? err.message : "no memory")
              : CTL_OK;
}

int ctl_yaml_text(struct buf *out, const json_t *value)
{
    json_t *docs = json_pack("[O]", value);
    int rc = yaml_stream(out, docs);
    json_decref(docs);
    return rc;
}

int ctl_request_yaml(struct ctl_request *request, struct buf *text, const json_t *docs)
{
    int rc = json_is_array(docs) ? yaml_stream(text, docs) : ctl_yaml_text(text, docs);
    request->content_type = "application/x-yaml";
    request->body = text->data;
    request->body_len = text->len;
    return rc;
}

const char *ctl_text(const json_t *value, const char *path)
{
    const char *text = json_string_value(path ? ctl_dig(value, path) : value);
    return text ? text : "";
}
