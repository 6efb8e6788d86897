/* transfer_export.c: export of an organization (transfer.h): its resources as a stream of
 * envelopes, row by row of the registry, in export_rank order. */
#include "transfer/transfer_private.h"

#include <string.h>

/* The resources of kind k by the convention's own pages, by name. */
static int export_resources(const struct transfer_ctx *c, long long oid,
                            const struct resource_kind *k, json_t *out, struct purser_error *err)
{
    struct resource_scope s = {c->store, c->arena, oid, c->actor};
    struct resource_query q = {.page_size = "1000"};
    struct buf text = BUF_INIT;
    int rc;
    do {
        json_t *page, *item;
        size_t i;
        buf_reset(&text);
        if ((rc = resource_list(k, &s, &q, &text, err)))
            break;
        if (!(page = json_loadb(text.data, text.len, 0, NULL))) {
            rc = purser_error_set(err, PURSER_EINTERNAL, "a page of %ss did not decode", k->stored);
            break;
        }
        json_array_foreach (json_object_get(page, "items"), i, item)
            transfer_append(c, out, k->export_doc(item));
        q.page_token = arena_strdup(
            c->arena, json_string_value(json_object_get(page, "next_page_token")) ?: "");
        json_decref(page);
    } while (q.page_token && *q.page_token);
    buf_release(&text);
    return rc;
}

int transfer_export(const struct transfer_ctx *c, json_t **out, struct purser_error *err)
{
    const struct registry_kind *rows[TRANSFER_ROWS_MAX];
    size_t count = registry_exports(rows, TRANSFER_ROWS_MAX);
    long long oid;
    int rc = transfer_org_id(c, &oid, err);
    *out = json_array();
    for (size_t i = 0; !rc && i < count; i++)
        rc = rows[i]->transfer ? rows[i]->transfer->export(c, oid, *out, err)
                               : export_resources(c, oid, rows[i]->resource, *out, err);
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}
