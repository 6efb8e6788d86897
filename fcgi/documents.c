/* documents.c: the Deckhand-compatible document API (SPEC §5): buckets, documents,
 * revisions, diffs, tags, rollback and validations, YAML in and out. */
#include "handlers.h"

#include "auth.h"
#include "codec/yaml_codec.h"
#include "docs/docstore.h"
#include "docs/document.h"
#include "router.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define YAML_TYPE "application/x-yaml"

/* Everything a document handler hands to lib/docstore for this request. */
static int doc_context(struct request *req, struct docstore_ctx *ctx)
{
    const char *org = request_org(req);
    const char *param_org = request_param(req, "org");
    memset(ctx, 0, sizeof(*ctx));
    ctx->store = req->svc->store;
    ctx->arena = req->arena;
    ctx->keyring = req->svc->keyring;
    ctx->principal = req->principal;
    ctx->read_encrypted = auth_allows(req, "read_encrypted_document");
    /* the one decision of the right to write encrypted documents: the store reads it, never
     * asks again */
    ctx->write_encrypted = auth_allows(req, "write_encrypted_document");
    ctx->render_limits = req->svc->render_limits;
    ctx->base_url = param_org ? arena_sprintf(req->arena, "%s/organizations/%s/api/v1.0",
                                              request_base_url(req), param_org)
                              : arena_sprintf(req->arena, "%s/api/v1.0", request_base_url(req));
    if (!org || !org[0])
        return purser_error_set(&req->err, PURSER_ENOTFOUND,
                                "no organization: set documents.default_organization");
    return identity_org_id(ctx->store, req->arena, org, &ctx->org_id, &req->err);
}

/* A revision id path parameter: a non-negative integer. */
static int revision_param(struct request *req, const char *name, long long *out)
{
    const char *text = request_param(req, name);
    char *end;
    long long id = text ? strtoll(text, &end, 10) : -1;
    if (!text || !*text || *end || id < 0)
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "revision id must be a non-negative integer, not '%s'",
                                text ? text : "");
    *out = id;
    return 0;
}

/* The context and the {id} revision of a revision route. */
static int revision_context(struct request *req, struct docstore_ctx *ctx, long long *id)
{
    int rc = doc_context(req, ctx);
    if (!rc)
        rc = revision_param(req, "id", id);
    return rc;
}

/* Reads, checks and writes a payload of documents into bucket, the body parsed as it is
 * written (docstore_write_stream). */
static int write_documents(struct request *req, const char *bucket, enum docstore_mode mode)
{
    struct docstore_ctx ctx;
    struct docstore_stream s;
    struct buf out = BUF_INIT;
    struct purser_error err;
    int rc = doc_context(req, &ctx);

    if (!rc)
        rc = request_yaml_type(req);
    if (rc)
        return rc;
    rc = docstore_write_stream(&ctx, bucket, mode, req->body ? req->body : "", req->body_len,
                               req->svc->document_yaml, &out, &s, &err);
    req->error_details = s.messages;
    if (rc && s.parse_failed)
        rc = request_yaml_failed(req, &err);
    else if (rc && s.needs_write_encrypted) /* (refused by ctx.write_encrypted, decided once) */
        rc = auth_refused(req, "write_encrypted_document");
    else if (rc)
        req->err = err;
    else
        rc = respond_yaml_text(req, 200, buf_cstr(&out), out.len);
    buf_release(&out);
    return rc;
}

int doc_bucket_put(struct request *req)
{
    return write_documents(req, request_param(req, "bucket"), DOCSTORE_PUT_BUCKET);
}

int doc_post(struct request *req)
{
    const char *bucket = request_query(req, "bucket");
    return write_documents(req, bucket ? bucket : "default", DOCSTORE_POST);
}

int doc_delete(struct request *req)
{
    struct docstore_ctx ctx;
    struct buf out = BUF_INIT;
    const char *schema = arena_sprintf(req->arena, "%s/%s/%s", request_param(req, "namespace"),
                                       request_param(req, "kind"), request_param(req, "version"));
    int rc = doc_context(req, &ctx);
    if (!rc)
        rc = docstore_delete_document(&ctx, schema, request_param(req, "name"), &out, &req->err);
    if (!rc)
        rc = respond_yaml_text(req, 200, buf_cstr(&out), out.len);
    buf_release(&out);
    return rc;
}

/* "true" / "false" query values; -1 when absent, -2 when neither. */
static int bool_query(const char *text)
{
    if (!text)
        return -1;
    if (strcasecmp(text, "true") == 0)
        return 1;
    if (strcasecmp(text, "false") == 0)
        return 0;
    return -2;
}

/* The order query parameter: asc (the default) or desc. */
static int order_param(struct request *req, int *descending)
{
    const char *order = request_query(req, "order");
    if (order && strcmp(order, "asc") && strcmp(order, "desc"))
        return purser_error_set(&req->err, PURSER_EINVAL, "order must be asc or desc, not '%s'",
                                order);
    *descending = order && strcmp(order, "desc") == 0;
    return 0;
}

/* The filters of GET revisions/{id}/documents from the query string. */
static int read_filter(struct request *req, struct docstore_filter *f)
{
    const char *limit = request_query(req, "limit");
    const char *abstract = request_query(req, "metadata.layeringDefinition.abstract");
    int secrets = bool_query(request_query(req, "cleartext-secrets"));

    memset(f, 0, sizeof(*f));
    f->schema_count = request_query_all(req, "schema", &f->schemas);
    f->name_count = request_query_all(req, "metadata.name", &f->names);
    f->layer_count = request_query_all(req, "metadata.layeringDefinition.layer", &f->layers);
    f->label_count = request_query_all(req, "metadata.label", &f->labels);
    f->bucket_count = request_query_all(req, "status.bucket", &f->buckets);
    f->sort_count = request_query_all(req, "sort", &f->sort);
    for (size_t i = 0; i < f->label_count; i++)
        if (!strchr(f->labels[i], '=') || f->labels[i][0] == '=')
            return purser_error_set(&req->err, PURSER_EINVAL,
                                    "metadata.label must be key=value, not '%s'", f->labels[i]);
    f->abstract = bool_query(abstract);
    if (f->abstract == -2)
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "metadata.layeringDefinition.abstract must be true or false");
    if (order_param(req, &f->descending))
        return req->err.code;
    if ((f->limit = request_query_count(req, "limit", -1)) < 0 && limit)
        return req->err.code;
    if (secrets == -2)
        return purser_error_set(&req->err, PURSER_EINVAL,
                                "cleartext-secrets must be true or false");
    f->redact = secrets == 0;
    return 0;
}

/* page_size, page_token or filter=: one page of the documents (page NULL otherwise). */
static int read_page(struct request *req, struct docstore_filter *f, struct docstore_page *page)
{
    const char *size = request_query(req, "page_size"), *token = request_query(req, "page_token");
    const char *filter = request_query(req, "filter");
    int rc;
    if (!size && !token && !filter)
        return 0;
    if (f->limit >= 0)
        return purser_error_set(&req->err, PURSER_EINVAL, "page_size: one of limit or page_size");
    rc = docstore_page_parse(req->arena, size, token, filter, docstore_document_fields, page,
                             &req->err);
    f->page = rc ? NULL : page;
    return rc;
}

/* A page's headers: its total and, when one follows, the next page's token. */
static const char *page_headers(struct request *req, const struct docstore_page *page)
{
    if (!page)
        return NULL;
    return page->next >= 0
               ? arena_sprintf(req->arena, "X-Total-Count: %lld\r\nX-Next-Page-Token: %ld\r\n",
                               page->total, page->next)
               : arena_sprintf(req->arena, "X-Total-Count: %lld\r\n", page->total);
}

/* A revision's documents as posted, or rendered: the same filters, a YAML stream. */
static int documents_answer(struct request *req, int rendered)
{
    struct docstore_ctx ctx;
    struct docstore_filter filter;
    struct docstore_page page;
    struct buf out = BUF_INIT;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    ctx.render_cache = req->svc->render_cache;
    if (!rc)
        rc = read_filter(req, &filter);
    if (!rc)
        rc = read_page(req, &filter, &page);
    if (!rc && !rendered && request_wants_json(req)) { /* the documents as JSON, read as such */
        json_t *docs = NULL;
        rc = docstore_documents(&ctx, id, &filter, &docs, &req->err);
        if (!rc)
            rc = respond_json(req, 200, docs, page_headers(req, filter.page));
        json_decref(docs);
        return rc;
    }
    if (!rc)
        rc = rendered
                 ? docstore_rendered_yaml(&ctx, id, &filter, &out, &req->error_details, &req->err)
                 : docstore_documents_yaml(&ctx, id, &filter, &out, &req->err);
    if (!rc)
        rc = respond_yaml_text_with(req, 200, buf_cstr(&out), out.len,
                                    page_headers(req, filter.page));
    buf_release(&out);
    return rc;
}

int rev_documents(struct request *req)
{
    return documents_answer(req, 0);
}

int rev_rendered(struct request *req)
{
    return documents_answer(req, 1);
}

int rev_list(struct request *req)
{
    struct docstore_ctx ctx;
    struct docstore_page page;
    struct docstore_revision_query q = {.sort = request_query(req, "sort"),
                                        .page_token = request_query(req, "page_token"),
                                        .conds = &page};
    const char *page_size = request_query(req, "page_size");
    json_t *out = NULL;
    long long limit = request_query_count(req, "limit", 0);
    int rc = limit < 0 ? req->err.code : doc_context(req, &ctx);
    q.tag_count = request_query_all(req, "tag", &q.tags);
    if (!rc && limit > 1000)
        rc = purser_error_set(&req->err, PURSER_EINVAL, "limit: at most 1000 (got %lld)", limit);
    if (!rc && page_size && limit)
        rc = purser_error_set(&req->err, PURSER_EINVAL, "page_size: one of limit or page_size");
    if (!rc)
        rc = order_param(req, &q.descending);
    /* (page_token is the keyset token docstore_revisions reads: only page_size here) */
    if (!rc)
        rc = docstore_page_parse(req->arena, page_size, NULL, request_query(req, "filter"),
                                 docstore_revision_fields, &page, &req->err);
    q.limit = page_size ? page.size : (long)limit;
    if (!rc && !q.limit && page.cond_count)
        q.limit = page.size; /* a filter: pages */
    q.with_total = page_size || page.cond_count;
    if (!rc)
        rc = docstore_revisions(&ctx, &q, &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int rev_get(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = docstore_revision(&ctx, id, &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int rev_purge(struct request *req)
{
    struct docstore_ctx ctx;
    int rc = doc_context(req, &ctx);
    if (!rc)
        rc = docstore_purge(&ctx, &req->err);
    if (!rc)
        rc = respond_text(req, 204, YAML_TYPE, "", 0, NULL);
    return rc;
}

int rev_diff(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long a = 0, b = 0;
    int rc = revision_context(req, &ctx, &a);
    if (!rc)
        rc = revision_param(req, "other", &b);
    if (!rc)
        rc = docstore_diff(&ctx, a, b, &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int rev_deepdiff(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long a = 0, b = 0;
    int rc = revision_context(req, &ctx, &a);
    ctx.render_cache = req->svc->render_cache;
    if (!rc)
        rc = revision_param(req, "other", &b);
    if (!rc)
        rc = docstore_deepdiff(&ctx, a, b, &out, &req->error_details, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int rev_rollback(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = docstore_rollback(&ctx, id, &out, &req->err);
    return respond_yaml_owned(req, rc, 201, out);
}

/* The first document of a YAML body, or NULL for an empty body (a new reference). */
static int read_one(struct request *req, json_t **out)
{
    json_t *stream = NULL;
    int rc = request_yaml(req, &stream);
    *out = NULL;
    if (!rc && json_array_size(stream) > 1)
        rc = purser_error_set(&req->err, PURSER_EINVAL, "the body must be one YAML document");
    if (!rc && json_array_size(stream) == 1)
        *out = json_incref(json_array_get(stream, 0));
    json_decref(stream);
    return rc;
}

int tag_create(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *body = NULL, *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = read_one(req, &body);
    if (!rc)
        rc = docstore_tag_create(&ctx, id, request_param(req, "tag"), body, &out, &req->err);
    json_decref(body);
    return respond_yaml_owned(req, rc, 201, out);
}

int tag_get(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = docstore_tag_get(&ctx, id, request_param(req, "tag"), &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int tag_list(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = docstore_tag_list(&ctx, id, &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int tag_delete(struct request *req)
{
    struct docstore_ctx ctx;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = docstore_tag_delete(&ctx, id, request_param(req, "tag"), &req->err);
    if (!rc)
        rc = respond_text(req, 204, YAML_TYPE, "", 0, NULL);
    return rc;
}

int validation_create(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *body = NULL, *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = read_one(req, &body);
    if (!rc)
        rc =
            docstore_validation_create(&ctx, id, request_param(req, "name"), body, &out, &req->err);
    json_decref(body);
    return respond_yaml_owned(req, rc, 201, out);
}

static int validation_list_as(struct request *req, int detail)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = docstore_validation_list(&ctx, id, detail, &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int validation_list(struct request *req)
{
    return validation_list_as(req, 0);
}

int validation_detail(struct request *req)
{
    return validation_list_as(req, 1);
}

int validation_entries(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long id = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = docstore_validation_entries(&ctx, id, request_param(req, "name"), &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int validation_entry(struct request *req)
{
    struct docstore_ctx ctx;
    json_t *out = NULL;
    long long id = 0, entry = 0;
    int rc = revision_context(req, &ctx, &id);
    if (!rc)
        rc = revision_param(req, "entry", &entry);
    if (!rc)
        rc =
            docstore_validation_entry(&ctx, id, request_param(req, "name"), entry, &out, &req->err);
    return respond_yaml_owned(req, rc, 200, out);
}

int doc_health(struct request *req)
{
    return respond_text(req, 204, YAML_TYPE, "", 0, NULL);
}

int doc_versions(struct request *req)
{
    json_t *out = json_pack("{s:{s:s, s:s}}", "v1.0", "path", "/api/v1.0", "status", "stable");
    return respond_yaml_owned(req, out ? 0 : PURSER_EINTERNAL, 200, out);
}
