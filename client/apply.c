/* apply.c: purserctl apply (a file made so on the server), and what diff.c shares (apply.h). */
#include "apply.h"

#include "codec/yaml_codec.h"
#include "registry/registry.h"
#include "resource/resource.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

const char *apply_text(const json_t *value, const char *path)
{
    const json_t *v = ctl_dig(value, path);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int text_is(const json_t *value, const char *path, const char *want)
{
    const char *text = apply_text(value, path);
    return text && !strcmp(text, want);
}

const char *apply_short_revision(struct ctl *ctl, const char *revision)
{
    return ctl_printf(ctl, "%.10s", revision ? revision : "-");
}

int apply_text_output(const struct ctl *ctl)
{
    return ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE;
}

/* A copy of value with every mapping's keys sorted, as the document API answers them. */
json_t *apply_sorted(const json_t *value)
{
    char *text = value ? json_dumps(value, JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_t *copy = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    free(text);
    return copy ? copy : json_null();
}

/* Sends request with body (JSON; NULL: none) and parses a 2xx answer into *out (when not NULL;
 * left alone otherwise). STATUS_EXPECTED, silently, for the status expected; else as ctl_call. */
int apply_exchange(struct ctl *ctl, struct ctl_request request, const json_t *body, long expected,
                   json_t **out)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct ctl_answer answer;
    json_error_t error;
    int rc;
    request.content_type = text ? "application/json" : NULL;
    request.body = text;
    request.body_len = text ? strlen(text) : 0;
    rc = ctl_send(ctl, &request, &answer);
    if (!rc && answer.status == expected)
        rc = STATUS_EXPECTED;
    else if (!rc && (answer.status < 200 || answer.status >= 300))
        rc = ctl_fail(&answer);
    else if (!rc && out &&
             !(*out = json_loadb(answer.body.data, answer.body.len, JSON_DECODE_ANY, &error)))
        rc = ctl_error(CTL_FAILED, "%s %s answered what is not JSON: %s", request.method,
                       request.template, error.text);
    ctl_answer_release(&answer);
    free(text);
    return rc;
}

/* Records what apply did to one thing and says so: detail, or "KIND NAME: ACTION". */
static json_t *report(struct ctl *ctl, json_t *results, const char *kind, const char *name,
                      const char *action, json_t *revision, const char *detail)
{
    json_t *row = json_pack("{s:s, s:s, s:s, s:o*}", "kind", kind, "name", name, "action", action,
                            "revision", revision);
    json_array_append_new(results, row);
    if (apply_text_output(ctl) && !(ctl->quiet && !strcmp(action, "unchanged")))
        printf("%s\n", detail ? detail : ctl_printf(ctl, "%s %s: %s", kind, name, action));
    return row;
}

/* ---- Deckhand documents and their bucket ----------------------------------------------------- */

/* The newest document revision's id (0: none yet) and the documents of bucket in it. */
int apply_bucket_newest(struct ctl *ctl, const char *bucket, long long *id, json_t **out)
{
    struct ctl_request request = REQUEST("GET", ctl_registry_path("revision", REG_LIST), NULL);
    struct buf query = BUF_INIT;
    json_t *answer = NULL;
    int rc;
    request.query = "sort=id&order=desc&limit=1";
    rc = apply_exchange(ctl, request, NULL, 0, &answer);
    *id = json_integer_value(ctl_dig(json_array_get(ctl_dig(answer, "results"), 0), "id"));
    *out = *id ? NULL : json_array();
    request = REQUEST("GET", DOCS "/revisions/{id}/documents", ctl_printf(ctl, "%lld", *id));
    ctl_query_add(&query, "status.bucket", bucket);
    request.query = query.data;
    if (!rc && *id)
        rc = apply_exchange(ctl, request, NULL, 0, out);
    json_decref(answer);
    buf_release(&query);
    return rc;
}

/* A document as the server compares it: schema, metadata and data (keys sorted), without status
 * and the defaults it writes in: replacement, storagePolicy cleartext, layering abstract. */
static json_t *document_plain(const json_t *doc)
{
    json_t *metadata = apply_sorted(json_object_get(doc, "metadata"));
    json_t *layering = json_object_get(metadata, "layeringDefinition");
    if (json_is_false(json_object_get(metadata, "replacement")))
        json_object_del(metadata, "replacement");
    if (text_is(metadata, "storagePolicy", "cleartext"))
        json_object_del(metadata, "storagePolicy");
    if (json_is_false(json_object_get(layering, "abstract")))
        json_object_del(layering, "abstract");
    if (json_is_object(layering) && !json_object_size(layering))
        json_object_del(metadata, "layeringDefinition");
    return json_pack("{s:O*, s:o, s:o}", "schema", json_object_get(doc, "schema"), "metadata",
                     metadata, "data", apply_sorted(json_object_get(doc, "data")));
}

/* {"schema name": plain document} of docs. */
json_t *apply_document_index(struct ctl *ctl, const json_t *docs)
{
    json_t *index = json_object(), *doc;
    size_t i;
    json_array_foreach (docs, i, doc)
        json_object_set_new(
            index,
            ctl_printf(ctl, "%s %s", apply_text(doc, "schema"), apply_text(doc, "metadata.name")),
            document_plain(doc));
    return index;
}

/* What writing docs does to a bucket that held before: counts of created, modified, deleted. */
static void bucket_changes(struct ctl *ctl, const json_t *before, const json_t *docs, int append,
                           long long counts[3])
{
    json_t *old = apply_document_index(ctl, before), *now = apply_document_index(ctl, docs), *doc,
           *was;
    const char *key;
    json_object_foreach (now, key, doc)
        if (!(was = json_object_get(old, key)) || !json_equal(was, doc))
            counts[was ? 1 : 0]++;
    json_object_foreach (old, key, doc)
        counts[2] += !append && !json_object_get(now, key);
    json_decref(old);
    json_decref(now);
}

/* PUTs docs as the bucket's whole content, or (append) POSTs them into it. */
static int bucket_write(struct ctl *ctl, const char *bucket, const json_t *docs, int append,
                        json_t **out)
{
    struct ctl_request request = append
                                     ? REQUEST("POST", DOCS "/documents", NULL)
                                     : REQUEST("PUT", DOCS "/buckets/{bucket}/documents", bucket);
    struct buf body = BUF_INIT, query = BUF_INIT;
    int rc = ctl_request_yaml(&request, &body, docs);
    ctl_query_add(&query, "bucket", bucket);
    request.query = append ? query.data : NULL;
    if (!rc)
        rc = ctl_call_json(ctl, &request, out);
    buf_release(&body);
    buf_release(&query);
    return rc;
}

/* Writes docs into bucket. The server makes no revision when nothing changes but answers the
 * newest (each document's status.revision): the newest before the write tells which it did. */
static int bucket_apply(struct ctl *ctl, const char *bucket, const json_t *docs, int append,
                        json_t *results)
{
    long long was = 0, now = 0, n[3] = {0, 0, 0};
    json_t *before = NULL, *answer = NULL;
    int rc = apply_bucket_newest(ctl, bucket, &was, &before);
    if (!rc && !(rc = bucket_write(ctl, bucket, docs, append, &answer)))
        now = json_integer_value(ctl_dig(json_array_get(answer, 0), "status.revision"));
    if (!rc && now > was)
        bucket_changes(ctl, before, docs, append, n);
    if (!rc && now <= was)
        report(ctl, results, "bucket", bucket, "unchanged", json_integer(was),
               ctl_printf(ctl, "bucket %s: unchanged (revision %lld)", bucket, was));
    else if (!rc)
        report(ctl, results, "bucket", bucket, json_array_size(before) ? "configured" : "created",
               json_integer(now),
               ctl_printf(ctl,
                          "bucket %s: revision %lld (%lld created, %lld modified, %lld deleted)",
                          bucket, now, n[0], n[1], n[2]));
    json_decref(before);
    json_decref(answer);
    return rc;
}

/* ---- Policyfile locks, resources ------------------------------------------------------------ */

/* Points group at lock (as chef push does) unless it points at that revision already. */
static int lock_push(struct ctl *ctl, const json_t *lock, const char *group, json_t *results)
{
    const char *name = apply_text(lock, "name"), *rev = apply_text(lock, "revision_id"),
               *was = NULL;
    const char *what = ctl_printf(ctl, "policy %s in group %s", name, group);
    struct ctl_request request =
        REQUEST("GET", ORG "/policy_groups/{group}/policies/{name}", group, name);
    json_t *current = NULL, *row = NULL;
    int rc = apply_exchange(ctl, request, NULL, 404, &current);
    if (!rc && (was = apply_text(current, "revision_id")) && !strcmp(was, rev))
        row = report(ctl, results, "policy", name, "unchanged", json_string(rev),
                     ctl_printf(ctl, "%s: unchanged (%s)", what, apply_short_revision(ctl, rev)));
    else if ((!rc || rc == STATUS_EXPECTED) &&
             !(rc = apply_exchange(ctl, REQUEST("PUT", request.template, group, name), lock, 0,
                                   NULL)))
        row = report(ctl, results, "policy", name, was ? "configured" : "created", json_string(rev),
                     ctl_printf(ctl, "%s: %s (%s%s)", what, apply_short_revision(ctl, rev),
                                was ? "was " : "new", was ? apply_short_revision(ctl, was) : ""));
    if (row)
        json_object_set_new(row, "group", json_string(group));
    json_decref(current);
    return rc;
}

/* Uploads lock as a revision of its policy; 409 says that revision is there already. */
static int lock_upload(struct ctl *ctl, const json_t *lock, json_t *results)
{
    const char *name = apply_text(lock, "name"), *rev = apply_text(lock, "revision_id");
    int rc = apply_exchange(ctl, REQUEST("POST", ORG "/policies/{name}/revisions", name), lock, 409,
                            NULL);
    if (rc == STATUS_EXPECTED || !rc)
        report(ctl, results, "policy", name, rc ? "unchanged" : "created", json_string(rev),
               ctl_printf(ctl, "policy %s: revision %s %s", name, apply_short_revision(ctl, rev),
                          rc ? "unchanged (uploaded before)" : "uploaded"));
    return rc == STATUS_EXPECTED ? CTL_OK : rc;
}

const char *apply_resource_id(struct ctl *ctl, const struct apply_kind *k, const json_t *doc)
{
    const char *name = apply_text(doc, "metadata.name");
    if (!k->prefix || !strncmp(name, k->prefix, strlen(k->prefix)))
        return name;
    return ctl_printf(ctl, "%s%s", k->prefix, name);
}

/* POSTs (current NULL) or PUTs body (If-Match: the revision read); a secret shown once: stderr. */
static int resource_write(struct ctl *ctl, const struct apply_kind *k, const char *id,
                          const json_t *current, const json_t *body, json_t *results)
{
    struct ctl_request request =
        current ? REQUEST("PUT", k->item, id) : REQUEST("POST", k->create, NULL);
    const char *revision = apply_text(current, "metadata.revision"), *secret;
    json_t *answer = NULL;
    int rc;
    request.if_match = revision ? ctl_printf(ctl, "\"%s\"", revision) : NULL;
    rc = apply_exchange(ctl, request, body, 0, &answer);
    secret = !rc && !current && k->shown_once ? apply_text(answer, k->shown_once) : NULL;
    if (!rc)
        report(ctl, results, k->noun, id, current ? "configured" : "created",
               json_string(apply_text(answer, "metadata.revision")), NULL);
    if (secret) /* a key (PEM) from a line of its own */
        ctl_error(CTL_OK, "note: %s %s: %s, shown this once:%s%s", k->noun, id, k->shown_what,
                  strchr(secret, '\n') ? "\n" : " ", secret);
    json_decref(answer);
    return rc;
}

int apply_resource_current(struct ctl *ctl, const struct apply_kind *k, const char *id,
                           json_t **current, json_t **shaped)
{
    int rc;
    *current = *shaped = NULL;
    rc = apply_exchange(ctl, REQUEST("GET", k->item, id), NULL, 404, current);
    if (!rc)
        *shaped = k->shape ? k->shape(*current, NULL, id) : json_deep_copy(*current);
    return rc;
}

/* Creates the resource, or replaces what the file sets when that differs from the server's. */
static int resource_apply(struct ctl *ctl, const struct apply_kind *k, const json_t *doc,
                          json_t *results)
{
    const char *id = apply_resource_id(ctl, k, doc);
    json_t *current, *shaped, *wanted = NULL;
    int rc = apply_resource_current(ctl, k, id, &current, &shaped);
    if (!rc || rc == STATUS_EXPECTED)
        wanted = k->wanted(doc, shaped, id);
    if (!rc && json_equal(shaped, wanted))
        report(ctl, results, k->noun, id, "unchanged",
               json_string(apply_text(current, "metadata.revision")), NULL);
    else if (!rc || rc == STATUS_EXPECTED)
        rc = resource_write(ctl, k, id, current, wanted, results);
    json_decref(current);
    json_decref(shaped);
    json_decref(wanted);
    return rc;
}

/* ---- the kinds: their shapes, and a member's own apply --------------------------------------- */

static int text_order(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether value is a list of strings (empty_ok: possibly none). */
static int is_text_list(const json_t *value, int empty_ok)
{
    json_t *item;
    size_t i;
    if (!json_is_array(value) || (!empty_ok && !json_array_size(value)))
        return 0;
    json_array_foreach (value, i, item)
        if (!json_is_string(item))
            return 0;
    return 1;
}

/* A list of strings in order, as the server keeps a set ([] for NULL; another value copied). */
static json_t *sorted_texts(const json_t *list)
{
    size_t n = json_array_size(list), i;
    const char **texts = is_text_list(list, 1) ? calloc(n + 1, sizeof(*texts)) : NULL;
    json_t *out, *item;
    if (!texts)
        return list ? json_deep_copy(list) : json_array();
    json_array_foreach (list, i, item)
        texts[i] = json_string_value(item);
    qsort(texts, n, sizeof(*texts), text_order);
    out = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(out, json_string(texts[i]));
    free(texts);
    return out;
}

static int text_in(const json_t *list, const char *text)
{
    json_t *item;
    size_t i;
    json_array_foreach (list, i, item)
        if (json_is_string(item) && !strcmp(json_string_value(item), text))
            return 1;
    return 0;
}

/* The writable part of a kind of the resource convention (a cluster), with the values the
 * server keeps for what is left out. */
static json_t *envelope_plain(const json_t *doc, const json_t *base, const char *id)
{
    const json_t *metadata = json_object_get(doc, "metadata");
    json_t *labels = json_object_get(metadata, "labels"), *spec = json_object_get(doc, "spec");
    json_t *annotations = json_object_get(metadata, "annotations");
    json_t *description = json_object_get(metadata, "description");
    (void)base; /* a PUT replaces labels, annotations, description and spec whole */
    return json_pack("{s:s?, s:s, s:{s:s, s:o, s:o, s:o}, s:o}", "kind", apply_text(doc, "kind"),
                     "version", "v1", "metadata", "name", id, "labels",
                     labels ? apply_sorted(labels) : json_object(), "annotations",
                     annotations ? apply_sorted(annotations) : json_object(), "description",
                     description ? json_incref(description) : json_string(""), "spec",
                     spec ? apply_sorted(spec) : json_object());
}

/* The node with the file's fields over the server's: what it leaves out (automatic) stays. */
static json_t *node_wanted(const json_t *doc, const json_t *base, const char *id)
{
    json_t *node = base ? json_deep_copy(base) : json_object();
    json_t *spec = json_object_get(doc, "spec");
    if (json_is_object(spec))
        json_object_update(node, spec);
    json_object_set_new(node, "name", json_string(id));
    return node;
}

/* An organization as apply compares it: what PUT /organizations/{name} writes. */
static json_t *organization_plain(const json_t *answer, const json_t *base, const char *id)
{
    json_t *labels = json_object_get(answer, "labels");
    (void)base;
    return json_pack("{s:s, s:O*, s:o, s:o}", "name", id, "full_name",
                     json_object_get(answer, "full_name"), "labels",
                     labels ? apply_sorted(labels) : json_object(), "external_ids",
                     sorted_texts(json_object_get(answer, "external_ids")));
}

/* The organization with what the file sets over the server's (a PUT keeps what it leaves out);
 * a new one's full name is its name, as the server's. */
static json_t *organization_wanted(const json_t *doc, const json_t *base, const char *id)
{
    json_t *org = base ? json_deep_copy(base)
                       : json_pack("{s:s, s:s, s:{}, s:[]}", "name", id, "full_name", id, "labels",
                                   "external_ids");
    json_t *full_name = ctl_dig(doc, "spec.full_name"), *labels = ctl_dig(doc, "metadata.labels");
    json_t *external_ids = ctl_dig(doc, "spec.external_ids");
    if (full_name)
        json_object_set(org, "full_name", full_name);
    if (labels)
        json_object_set_new(org, "labels", apply_sorted(labels));
    if (external_ids)
        json_object_set_new(org, "external_ids", sorted_texts(external_ids));
    return org;
}

static const char *organization_lacks(const json_t *doc)
{
    const json_t *external_ids = ctl_dig(doc, "spec.external_ids");
    return external_ids && !is_text_list(external_ids, 1) ? "spec.external_ids: a list of strings"
                                                          : NULL;
}

/* A Member document's roles, and its limits only of those roles. */
static const char *member_lacks(const json_t *doc)
{
    const json_t *roles = ctl_dig(doc, "spec.roles"), *limits = ctl_dig(doc, "spec.policy_groups");
    const char *role;
    json_t *patterns;
    if (roles && !is_text_list(roles, 0))
        return "spec.roles: a list of role names";
    if (limits && !json_is_null(limits) && !json_is_object(limits))
        return "spec.policy_groups: a mapping of role to policy group names or patterns";
    json_object_foreach ((json_t *)limits, role, patterns)
        if (!json_is_null(patterns) && !is_text_list(patterns, 0))
            return "spec.policy_groups: a role's limit is a list of policy group names or patterns";
    return NULL;
}

/* The policy groups role is limited to in limits ({role: [patterns]}), in order; null: none. */
static json_t *limit_of(const json_t *limits, const char *role)
{
    const json_t *patterns = json_object_get(limits, role);
    return patterns && !json_is_null(patterns) ? sorted_texts(patterns) : json_null();
}

/* The POST a Member document makes: its roles (none named: reader, the server's default), each
 * with its limit or null (a limit the member had is lifted). */
static json_t *member_body(const json_t *doc)
{
    const json_t *roles = ctl_dig(doc, "spec.roles"), *limits = ctl_dig(doc, "spec.policy_groups");
    json_t *body =
        json_pack("{s:s, s:o, s:{}}", "username", apply_text(doc, "metadata.name"), "roles",
                  roles ? sorted_texts(roles) : json_pack("[s]", "reader"), "policy_groups");
    json_t *role;
    size_t i;
    json_array_foreach (json_object_get(body, "roles"), i, role)
        json_object_set_new(json_object_get(body, "policy_groups"), json_string_value(role),
                            limit_of(limits, json_string_value(role)));
    return body;
}

/* The member named user in GET /organizations/{org}/users's list ({username, roles, ...}). */
static const json_t *member_find(const json_t *members, const char *user)
{
    json_t *entry;
    size_t i;
    json_array_foreach (members, i, entry)
        if (text_is(entry, "user.username", user))
            return json_object_get(entry, "user");
    return NULL;
}

/* Whether the member holds every role of body, each with the limit body gives it. */
static int member_holds(const json_t *held, const json_t *body)
{
    json_t *role, *limit;
    size_t i;
    int holds = 1;
    json_array_foreach (json_object_get(body, "roles"), i, role) {
        const char *name = json_string_value(role);
        limit = limit_of(json_object_get(held, "policy_groups"), name);
        holds &= text_in(json_object_get(held, "roles"), name) &&
                 json_equal(limit, json_object_get(json_object_get(body, "policy_groups"), name));
        json_decref(limit);
    }
    return holds;
}

/* Says which roles the member holds that the file does not grant: apply cannot take them. */
static void member_note_extra(const char *user, const json_t *held, const json_t *body)
{
    struct buf extra = BUF_INIT;
    json_t *role;
    size_t i;
    json_array_foreach (json_object_get(held, "roles"), i, role)
        if (!text_in(json_object_get(body, "roles"), json_string_value(role)))
            buf_printf(&extra, "%s%s", extra.len ? ", " : "", json_string_value(role));
    if (extra.len)
        ctl_error(CTL_OK,
                  "note: member %s: also holds %s, which the file does not grant (apply adds "
                  "roles, never takes one away: delete member %s, then apply)",
                  user, buf_cstr(&extra), user);
    buf_release(&extra);
}

/* Grants the file's roles and limits unless the member holds them already. The server's POST
 * adds to an existing member's roles (a role given again takes the limit given) and keeps the
 * others: it never removes a role. */
static int member_apply(struct ctl *ctl, const struct apply_kind *k, const json_t *doc,
                        json_t *results)
{
    const char *user = apply_text(doc, "metadata.name");
    json_t *members = NULL, *body = member_body(doc);
    const json_t *held = NULL;
    int rc = apply_exchange(ctl, REQUEST("GET", k->item, NULL), NULL, 0, &members);
    if (!rc)
        held = member_find(members, user);
    if (!rc && held && member_holds(held, body))
        report(ctl, results, k->noun, user, "unchanged", NULL, NULL);
    else if (!rc && !(rc = apply_exchange(ctl, REQUEST("POST", k->create, NULL), body, 0, NULL)))
        report(ctl, results, k->noun, user, held ? "configured" : "created", NULL, NULL);
    if (!rc && held)
        member_note_extra(user, held, body);
    json_decref(members);
    json_decref(body);
    return rc;
}

/* In the order of an export: an organization's, then its members, then what is in it; the
 * {.kind = NULL} row is where the registry's generic kinds go (kinds_bind). */
static const struct apply_kind kinds_written[] = {
    {.kind = "Organization",
     .noun = "organization",
     .item = "/organizations/{name}",
     .create = REG_LIST,
     .shape = organization_plain,
     .wanted = organization_wanted,
     .shown_once = "private_key",
     .shown_what = "its validator client's key",
     .lacks = organization_lacks},
    {.kind = "Member",
     .noun = "member",
     .item = REG_LIST,
     .create = REG_LIST,
     .apply = member_apply,
     .lacks = member_lacks},
    {.kind = NULL}, /* the registry's kinds of the resource convention (clusters, ...) */
    {.kind = "Node",
     .noun = "node",
     .item = REG_ITEM,
     .create = REG_LIST,
     .wanted = node_wanted,
     .diffable = 1},
};
#define KINDS_WRITTEN (sizeof(kinds_written) / sizeof(kinds_written[0]))

static struct apply_kind kinds[32];
static size_t kind_count;

/* The registry's kinds of the resource convention (lib/registry), applied alike: a GET of the
 * item, then a POST to the list or a PUT of the item with the revision it read. */
static struct apply_kind generic_apply(const struct registry_kind *r)
{
    return (struct apply_kind){.kind = r->envelope,
                               .noun = r->name,
                               .item = r->item,
                               .create = r->list,
                               .prefix = r->resource ? r->resource->id_prefix : NULL,
                               .shape = envelope_plain,
                               .wanted = envelope_plain,
                               .shown_once = r->shown_once,
                               .shown_what = r->shown_what,
                               .diffable = 1};
}

/* kinds: the rows written, the registry's generic kinds in place of the {NULL} row; once. */
static void kinds_bind(void)
{
    const size_t max = sizeof(kinds) / sizeof(kinds[0]);
    if (kind_count)
        return;
    for (size_t i = 0; i < KINDS_WRITTEN && kind_count < max; i++) {
        if (kinds_written[i].kind) {
            struct apply_kind k = kinds_written[i];
            k.item = ctl_registry_path(k.noun, k.item);
            k.create = ctl_registry_path(k.noun, k.create);
            kinds[kind_count++] = k;
        }
        for (size_t j = 0; !kinds_written[i].kind && j < registry_kind_count && kind_count < max;
             j++)
            if (registry_kinds[j].generic && registry_kinds[j].envelope)
                kinds[kind_count++] = generic_apply(&registry_kinds[j]);
    }
}
#define KIND_COUNT (kinds_bind(), kind_count)

/* The documents of FILE: a YAML stream, or one JSON value (an array: its elements). */
static int read_documents(json_t **out, const char *path)
{
    struct buf text = BUF_INIT;
    struct purser_error err;
    json_t *value = NULL;
    int rc = ctl_read_file(&text, path);
    if (!rc && (value = json_loadb(text.data, text.len, 0, NULL)))
        *out = json_is_array(value) ? json_incref(value) : json_pack("[O]", value);
    else if (!rc && (rc = yaml_codec_parse(out, text.data, text.len, &yaml_limits_documents, &err)))
        rc = ctl_error(CTL_INVALID, "%s:%d:%d: %s", path, err.line, err.column, err.message);
    json_decref(value);
    buf_release(&text);
    return rc;
}

/* CTL_INVALID for a document of a kind apply does not know, naming those it knows. */
static int unknown_kind(const json_t *doc, size_t index)
{
    const char *kind = apply_text(doc, "kind");
    struct buf known = BUF_INIT;
    for (size_t i = 0; i < KIND_COUNT; i++)
        buf_printf(&known, "%s%s", i ? ", " : "", kinds[i].kind);
    ctl_error(CTL_INVALID,
              "document %zu: kind %s is not one apply knows (%s); an export's others go in whole "
              "with purserctl import, into an empty organization",
              index, kind ? kind : "(not a string)", buf_cstr(&known));
    buf_release(&known);
    return CTL_INVALID;
}

/* CTL_INVALID unless a resource document of a kind apply knows has what it needs: the error
 * names the document (its kind and name), what is missing and what to write, as kubectl does
 * for apiVersion. */
static int resource_check(const json_t *doc, const struct apply_kind *kind, size_t index)
{
    const char *name = apply_text(doc, "metadata.name"), *lacks = NULL;
    char which[160];
    snprintf(which, sizeof(which), "document %zu (%s%s%s)", index, kind->kind, name ? " " : "",
             name ? name : "");
    if (!json_object_get(doc, "version"))
        return ctl_error(CTL_INVALID, "%s: no \"version\"; add \"version: v1\"", which);
    if (!text_is(doc, "version", "v1"))
        return ctl_error(CTL_INVALID, "%s: \"version\" is not v1; write \"version: v1\"", which);
    if (!name)
        return ctl_error(CTL_INVALID, "%s: no \"metadata.name\"; add \"name: NAME\" under metadata",
                         which);
    lacks = kind->lacks ? kind->lacks(doc) : NULL;
    return lacks ? ctl_error(CTL_INVALID, "%s: %s", which, lacks) : CTL_OK;
}

int apply_classify(const json_t *doc, size_t index, enum doc_class *class,
                   const struct apply_kind **kind)
{
    const char *schema = apply_text(doc, "schema"), *slash = schema ? strchr(schema, '/') : NULL;
    const char *meta = apply_text(doc, "metadata.schema"), *lacks = NULL;
    *class = json_is_null(doc)                ? DOC_EMPTY
             : json_object_get(doc, "schema") ? DOC_DECKHAND
             : json_object_get(doc, "kind")   ? DOC_RESOURCE
                                              : DOC_LOCK;
    *kind = NULL;
    for (size_t i = 0; i < KIND_COUNT; i++)
        *kind = text_is(doc, "kind", kinds[i].kind) ? &kinds[i] : *kind;
    if (*class == DOC_RESOURCE && !*kind && json_is_object(doc))
        return unknown_kind(doc, index);
    if (*class != DOC_EMPTY && !json_is_object(doc))
        lacks = "not a mapping";
    else if (*class == DOC_DECKHAND)
        lacks =
            !slash || !strchr(slash + 1, '/') ? "no schema namespace/Kind/version"
            : !meta || (strcmp(meta, "metadata/Document/v1") && strcmp(meta, "metadata/Control/v1"))
                ? "no metadata.schema metadata/Document/v1 or metadata/Control/v1"
            : !apply_text(doc, "metadata.name") ? "no metadata.name"
                                                : NULL;
    else if (*class == DOC_RESOURCE)
        return resource_check(doc, *kind, index);
    else if (*class == DOC_LOCK && (!apply_text(doc, "revision_id") || !apply_text(doc, "name") ||
                                    !json_is_object(json_object_get(doc, "cookbook_locks"))))
        lacks = "no schema (a Deckhand document), kind (a resource) or revision_id, name and "
                "cookbook_locks (a Policyfile lock)";
    return lacks ? ctl_error(CTL_INVALID, "document %zu: %s", index, lacks) : CTL_OK;
}

/* Reads and checks the whole file before anything is sent; its Deckhand documents to *deckhand. */
int apply_plan_read(json_t **docs, json_t **deckhand, const struct apply_options *o)
{
    enum doc_class class;
    const struct apply_kind *kind = NULL;
    json_t *doc;
    size_t i;
    int rc = read_documents(docs, o->file);
    *deckhand = json_array();
    json_array_foreach (*docs, i, doc) {
        if (!rc)
            rc = apply_classify(doc, i + 1, &class, &kind);
        if (rc)
            break;
        if (class == DOC_DECKHAND)
            json_array_append(*deckhand, doc);
    }
    if (!rc && json_array_size(*deckhand) && !o->bucket)
        rc = ctl_error(CTL_USAGE, "%s holds Deckhand documents: which bucket? (--bucket NAME)",
                       o->file);
    return rc;
}

/* ---- apply: the file checked whole, then each document ---------------------------------- */

int apply_options_parse(const struct ctl_command *self, int argc, char **argv,
                        struct apply_options *o, int *first)
{
    const struct option options[] = {
        {"filename", required_argument, NULL, 'f'}, {"bucket", required_argument, NULL, 'b'},
        {"append", no_argument, &o->append, 1},     {"policy-group", required_argument, NULL, 'g'},
        {"policy", required_argument, NULL, 'p'},   {"deep", no_argument, &o->deep, 1},
        {"groups", no_argument, &o->groups, 1},     {NULL, 0, NULL, 0}};
    int opt;
    memset(o, 0, sizeof(*o));
    while ((opt = getopt_long(argc, argv, "f:", options, NULL)) != -1)
        switch (opt) {
        case 'f': o->file = optarg; break;
        case 'b': o->bucket = optarg; break;
        case 0: break;
        case 'g': o->group = optarg; break;
        case 'p': o->policy = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    *first = optind;
    return CTL_OK;
}

/* Applies document i (the Deckhand ones all at the first of them). */
static int apply_one(struct ctl *ctl, const struct apply_options *o, const json_t *doc, size_t i,
                     const json_t *deckhand, json_t *results)
{
    enum doc_class class;
    const struct apply_kind *kind = NULL;
    apply_classify(doc, i + 1, &class, &kind); /* checked before: it says no more */
    if (class == DOC_DECKHAND && doc == json_array_get(deckhand, 0))
        return bucket_apply(ctl, o->bucket, deckhand, o->append, results);
    if (class == DOC_LOCK)
        return o->group ? lock_push(ctl, doc, o->group, results) : lock_upload(ctl, doc, results);
    if (class == DOC_RESOURCE && kind->apply)
        return kind->apply(ctl, kind, doc, results);
    return class == DOC_RESOURCE ? resource_apply(ctl, kind, doc, results) : CTL_OK;
}

int cmd_apply(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("apply");
    struct apply_options o;
    json_t *docs = NULL, *deckhand = NULL, *results = json_array();
    int first, rc = apply_options_parse(self, argc, argv, &o, &first);
    if (!rc && (first != argc || !o.file || o.deep || o.groups || o.policy))
        rc = ctl_usage(self, o.file ? "apply takes no arguments (nor diff's options)"
                                    : "-f FILE: what to apply");
    if (!rc)
        rc = apply_plan_read(&docs, &deckhand, &o);
    for (size_t i = 0; !rc && i < json_array_size(docs); i++)
        if ((rc = apply_one(ctl, &o, json_array_get(docs, i), i, deckhand, results)))
            ctl_error(rc, "stopped at document %zu; those before it are applied", i + 1);
    if (ctl->output == OUT_JSON || ctl->output == OUT_YAML)
        ctl_print(ctl, results, NULL, NULL);
    json_decref(results);
    json_decref(docs);
    json_decref(deckhand);
    return rc;
}
