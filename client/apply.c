/* apply.c: purserctl apply (a file made so on the server) and diff (what differs, and how). */
#include "ctl.h"

#include "codec/yaml_codec.h"

#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ORG "/organizations/{org}"
#define DOCS "/api/v1.0"
#define REQUEST(method_, template_, ...)                                                           \
    ((struct ctl_request){.method = (method_),                                                     \
                          .template = (template_),                                                 \
                          .values = (const char *const[]){__VA_ARGS__, NULL}})

/* exchange()'s answer when the status is the one its caller handles itself. */
#define STATUS_EXPECTED (-1)

enum doc_class { DOC_EMPTY, DOC_DECKHAND, DOC_LOCK, DOC_RESOURCE };

/* A resource kind apply knows, in the export's shape ({kind, version: v1, metadata, spec}): the
 * body a document wants (from the server's, base), and the server's answer as such a body. */
struct kind {
    const char *kind, *noun;   /* "Cluster", "cluster" */
    const char *item, *create; /* its GET and PUT template, its POST template */
    const char *prefix;        /* what the server puts before a name lacking it ("c-"), or NULL */
    json_t *(*shape)(const json_t *answer, const json_t *base, const char *id); /* NULL: as is */
    json_t *(*wanted)(const json_t *doc, const json_t *base, const char *id);   /* base NULL: new */
    const char *shown_once, *shown_what; /* a secret the creation answers once, and its name */
    int diffable; /* diff -f compares it (its GET is among diff's operations) */
};

struct options {
    const char *file, *bucket, *group, *policy;
    int append, deep, groups;
};

static const char *text_at(const json_t *value, const char *path)
{
    const json_t *v = ctl_dig(value, path);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int text_is(const json_t *value, const char *path, const char *want)
{
    const char *text = text_at(value, path);
    return text && !strcmp(text, want);
}

static const char *short_rev(struct ctl *ctl, const char *revision)
{
    return ctl_printf(ctl, "%.10s", revision ? revision : "-");
}

static const char *value_text(struct ctl *ctl, const json_t *value)
{
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    const char *out = ctl_printf(ctl, "%s", text ? text : "null");
    free(text);
    return out;
}

static int text_output(const struct ctl *ctl)
{
    return ctl->output == OUT_DEFAULT || ctl->output == OUT_TABLE;
}

/* A copy of value with every mapping's keys sorted, as the document API answers them. */
static json_t *sorted(const json_t *value)
{
    char *text = value ? json_dumps(value, JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_t *copy = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    free(text);
    return copy ? copy : json_null();
}

/* Sends request with body (JSON; NULL: none) and parses a 2xx answer into *out (when not NULL;
 * left alone otherwise). STATUS_EXPECTED, silently, for the status expected; else as ctl_call. */
static int exchange(struct ctl *ctl, struct ctl_request request, const json_t *body, long expected,
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
    if (text_output(ctl) && !(ctl->quiet && !strcmp(action, "unchanged")))
        printf("%s\n", detail ? detail : ctl_printf(ctl, "%s %s: %s", kind, name, action));
    return row;
}

/* ---- Deckhand documents and their bucket ----------------------------------------------------- */

/* The newest document revision's id (0: none yet) and the documents of bucket in it. */
static int bucket_newest(struct ctl *ctl, const char *bucket, long long *id, json_t **out)
{
    struct ctl_request request = REQUEST("GET", DOCS "/revisions", NULL);
    struct buf query = BUF_INIT;
    json_t *answer = NULL;
    int rc;
    request.query = "sort=id&order=desc&limit=1";
    rc = exchange(ctl, request, NULL, 0, &answer);
    *id = json_integer_value(ctl_dig(json_array_get(ctl_dig(answer, "results"), 0), "id"));
    *out = *id ? NULL : json_array();
    request = REQUEST("GET", DOCS "/revisions/{id}/documents", ctl_printf(ctl, "%lld", *id));
    ctl_query_add(&query, "status.bucket", bucket);
    request.query = query.data;
    if (!rc && *id)
        rc = exchange(ctl, request, NULL, 0, out);
    json_decref(answer);
    buf_release(&query);
    return rc;
}

/* A document as the server compares it: schema, metadata and data (keys sorted), without status
 * and the defaults it writes in: replacement, storagePolicy cleartext, layering abstract. */
static json_t *document_plain(const json_t *doc)
{
    json_t *metadata = sorted(json_object_get(doc, "metadata"));
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
                     metadata, "data", sorted(json_object_get(doc, "data")));
}

/* {"schema name": plain document} of docs. */
static json_t *document_index(struct ctl *ctl, const json_t *docs)
{
    json_t *index = json_object(), *doc;
    size_t i;
    json_array_foreach (docs, i, doc)
        json_object_set_new(
            index, ctl_printf(ctl, "%s %s", text_at(doc, "schema"), text_at(doc, "metadata.name")),
            document_plain(doc));
    return index;
}

/* docs made plain and ordered by schema and name, as both sides of a diff are. */
static json_t *documents_sorted(struct ctl *ctl, const json_t *docs)
{
    json_t *index = document_index(ctl, docs), *order = sorted(index), *out = json_array(), *doc;
    const char *key;
    json_object_foreach (order, key, doc)
        json_array_append(out, json_object_get(index, key));
    json_decref(order);
    json_decref(index);
    return out;
}

/* What writing docs does to a bucket that held before: counts of created, modified, deleted. */
static void bucket_changes(struct ctl *ctl, const json_t *before, const json_t *docs, int append,
                           long long counts[3])
{
    json_t *old = document_index(ctl, before), *now = document_index(ctl, docs), *doc, *was;
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
    struct purser_error err;
    int rc = yaml_codec_emit(&body, docs, &err) ? ctl_error(CTL_FAILED, "%s", err.message) : 0;
    ctl_query_add(&query, "bucket", bucket);
    request.query = append ? query.data : NULL;
    request.content_type = "application/x-yaml";
    request.body = body.data;
    request.body_len = body.len;
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
    int rc = bucket_newest(ctl, bucket, &was, &before);
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
    const char *name = text_at(lock, "name"), *rev = text_at(lock, "revision_id"), *was = NULL;
    const char *what = ctl_printf(ctl, "policy %s in group %s", name, group);
    struct ctl_request request =
        REQUEST("GET", ORG "/policy_groups/{group}/policies/{name}", group, name);
    json_t *current = NULL, *row = NULL;
    int rc = exchange(ctl, request, NULL, 404, &current);
    if (!rc && (was = text_at(current, "revision_id")) && !strcmp(was, rev))
        row = report(ctl, results, "policy", name, "unchanged", json_string(rev),
                     ctl_printf(ctl, "%s: unchanged (%s)", what, short_rev(ctl, rev)));
    else if ((!rc || rc == STATUS_EXPECTED) &&
             !(rc = exchange(ctl, REQUEST("PUT", request.template, group, name), lock, 0, NULL)))
        row = report(ctl, results, "policy", name, was ? "configured" : "created", json_string(rev),
                     ctl_printf(ctl, "%s: %s (%s%s)", what, short_rev(ctl, rev),
                                was ? "was " : "new", was ? short_rev(ctl, was) : ""));
    if (row)
        json_object_set_new(row, "group", json_string(group));
    json_decref(current);
    return rc;
}

/* Uploads lock as a revision of its policy; 409 says that revision is there already. */
static int lock_upload(struct ctl *ctl, const json_t *lock, json_t *results)
{
    const char *name = text_at(lock, "name"), *rev = text_at(lock, "revision_id");
    int rc =
        exchange(ctl, REQUEST("POST", ORG "/policies/{name}/revisions", name), lock, 409, NULL);
    if (rc == STATUS_EXPECTED || !rc)
        report(ctl, results, "policy", name, rc ? "unchanged" : "created", json_string(rev),
               ctl_printf(ctl, "policy %s: revision %s %s", name, short_rev(ctl, rev),
                          rc ? "unchanged (uploaded before)" : "uploaded"));
    return rc == STATUS_EXPECTED ? CTL_OK : rc;
}

static const char *resource_id(struct ctl *ctl, const struct kind *k, const json_t *doc)
{
    const char *name = text_at(doc, "metadata.name");
    if (!k->prefix || !strncmp(name, k->prefix, strlen(k->prefix)))
        return name;
    return ctl_printf(ctl, "%s%s", k->prefix, name);
}

/* POSTs (current NULL) or PUTs body (If-Match: the revision read); a secret shown once: stderr. */
static int resource_write(struct ctl *ctl, const struct kind *k, const char *id,
                          const json_t *current, const json_t *body, json_t *results)
{
    struct ctl_request request =
        current ? REQUEST("PUT", k->item, id) : REQUEST("POST", k->create, NULL);
    const char *revision = text_at(current, "metadata.revision"), *secret;
    json_t *answer = NULL;
    int rc;
    request.if_match = revision ? ctl_printf(ctl, "\"%s\"", revision) : NULL;
    rc = exchange(ctl, request, body, 0, &answer);
    secret = !rc && !current && k->shown_once ? text_at(answer, k->shown_once) : NULL;
    if (!rc)
        report(ctl, results, k->noun, id, current ? "configured" : "created",
               json_string(text_at(answer, "metadata.revision")), NULL);
    if (secret)
        ctl_error(CTL_OK, "note: %s %s: %s, shown this once: %s", k->noun, id, k->shown_what,
                  secret);
    json_decref(answer);
    return rc;
}

/* Creates the resource, or replaces what the file sets when that differs from the server's. */
static int resource_apply(struct ctl *ctl, const struct kind *k, const json_t *doc, json_t *results)
{
    const char *id = resource_id(ctl, k, doc);
    json_t *current = NULL, *shaped = NULL, *wanted = NULL;
    int rc = exchange(ctl, REQUEST("GET", k->item, id), NULL, 404, &current);
    if (!rc)
        shaped = k->shape ? k->shape(current, NULL, id) : json_deep_copy(current);
    wanted = k->wanted(doc, shaped, id);
    if (!rc && json_equal(shaped, wanted))
        report(ctl, results, k->noun, id, "unchanged",
               json_string(text_at(current, "metadata.revision")), NULL);
    else if (!rc || rc == STATUS_EXPECTED)
        rc = resource_write(ctl, k, id, current, wanted, results);
    json_decref(current);
    json_decref(shaped);
    json_decref(wanted);
    return rc;
}

/* A cluster's writable part, with the values the server keeps for what is left out. */
static json_t *cluster_plain(const json_t *doc, const json_t *base, const char *id)
{
    const json_t *metadata = json_object_get(doc, "metadata");
    json_t *labels = json_object_get(metadata, "labels"), *spec = json_object_get(doc, "spec");
    json_t *annotations = json_object_get(metadata, "annotations");
    json_t *description = json_object_get(metadata, "description");
    (void)base; /* a PUT replaces labels, annotations, description and spec whole */
    return json_pack("{s:s, s:s, s:{s:s, s:o, s:o, s:o}, s:o}", "kind", "Cluster", "version", "v1",
                     "metadata", "name", id, "labels", labels ? sorted(labels) : json_object(),
                     "annotations", annotations ? sorted(annotations) : json_object(),
                     "description", description ? json_incref(description) : json_string(""),
                     "spec", spec ? sorted(spec) : json_object());
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

static const struct kind kinds[] = {
    {"Cluster", "cluster", ORG "/clusters/{id}", ORG "/clusters", "c-", cluster_plain,
     cluster_plain, "bootstrap_token.install_url", "its bootstrap install URL", 1},
    {"Node", "node", ORG "/nodes/{node}", ORG "/nodes", NULL, NULL, node_wanted, NULL, NULL, 0},
};
#define KIND_COUNT (sizeof(kinds) / sizeof(kinds[0]))

/* The documents of FILE: a YAML stream, or one JSON value (an array: its elements). */
static int read_documents(json_t **out, const char *path)
{
    struct buf text = BUF_INIT;
    struct purser_error err;
    json_t *value = NULL;
    int rc = ctl_read_file(&text, path);
    if (!rc && (value = json_loadb(text.data, text.len, 0, NULL)))
        *out = json_is_array(value) ? json_incref(value) : json_pack("[O]", value);
    else if (!rc && yaml_codec_parse(out, text.data, text.len, &yaml_limits_documents, &err))
        rc = ctl_error(CTL_INVALID, "%s:%d:%d: %s", path, err.line, err.column, err.message);
    json_decref(value);
    buf_release(&text);
    return rc;
}

/* What document number index (from 1) is, or CTL_INVALID saying what it lacks. */
static int classify(const json_t *doc, size_t index, enum doc_class *class,
                    const struct kind **kind)
{
    const char *schema = text_at(doc, "schema"), *slash = schema ? strchr(schema, '/') : NULL;
    const char *meta = text_at(doc, "metadata.schema"), *lacks = NULL;
    *class = json_is_null(doc)                ? DOC_EMPTY
             : json_object_get(doc, "schema") ? DOC_DECKHAND
             : json_object_get(doc, "kind")   ? DOC_RESOURCE
                                              : DOC_LOCK;
    *kind = NULL;
    for (size_t i = 0; i < KIND_COUNT; i++)
        *kind = text_is(doc, "kind", kinds[i].kind) ? &kinds[i] : *kind;
    if (*class != DOC_EMPTY && !json_is_object(doc))
        lacks = "not a mapping";
    else if (*class == DOC_DECKHAND)
        lacks =
            !slash || !strchr(slash + 1, '/') ? "no schema namespace/Kind/version"
            : !meta || (strcmp(meta, "metadata/Document/v1") && strcmp(meta, "metadata/Control/v1"))
                ? "no metadata.schema metadata/Document/v1 or metadata/Control/v1"
            : !text_at(doc, "metadata.name") ? "no metadata.name"
                                             : NULL;
    else if (*class == DOC_RESOURCE)
        lacks = !*kind                           ? "no kind apply knows (Cluster, Node)"
                : !text_is(doc, "version", "v1") ? "no version: v1"
                : !text_at(doc, "metadata.name") ? "no metadata.name"
                                                 : NULL;
    else if (*class == DOC_LOCK && (!text_at(doc, "revision_id") || !text_at(doc, "name") ||
                                    !json_is_object(json_object_get(doc, "cookbook_locks"))))
        lacks = "no schema (a Deckhand document), kind (a resource) or revision_id, name and "
                "cookbook_locks (a Policyfile lock)";
    return lacks ? ctl_error(CTL_INVALID, "document %zu: %s", index, lacks) : CTL_OK;
}

/* Reads and checks the whole file before anything is sent; its Deckhand documents to *deckhand. */
static int plan_read(json_t **docs, json_t **deckhand, const struct options *o)
{
    enum doc_class class;
    const struct kind *kind = NULL;
    json_t *doc;
    size_t i;
    int rc = read_documents(docs, o->file);
    *deckhand = json_array();
    json_array_foreach (*docs, i, doc) {
        if (rc || (rc = classify(doc, i + 1, &class, &kind)))
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

static int options_parse(const struct ctl_command *self, int argc, char **argv, struct options *o,
                         int *first)
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
static int apply_one(struct ctl *ctl, const struct options *o, const json_t *doc, size_t i,
                     const json_t *deckhand, json_t *results)
{
    enum doc_class class;
    const struct kind *kind = NULL;
    classify(doc, i + 1, &class, &kind); /* checked before: it says no more */
    if (class == DOC_DECKHAND && doc == json_array_get(deckhand, 0))
        return bucket_apply(ctl, o->bucket, deckhand, o->append, results);
    if (class == DOC_LOCK)
        return o->group ? lock_push(ctl, doc, o->group, results) : lock_upload(ctl, doc, results);
    return class == DOC_RESOURCE ? resource_apply(ctl, kind, doc, results) : CTL_OK;
}

int cmd_apply(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("apply");
    struct options o;
    json_t *docs = NULL, *deckhand = NULL, *results = json_array();
    int first, rc = options_parse(self, argc, argv, &o, &first);
    if (!rc && (first != argc || !o.file || o.deep || o.groups || o.policy))
        rc = ctl_usage(self, o.file ? "apply takes no arguments (nor diff's options)"
                                    : "-f FILE: what to apply");
    if (!rc)
        rc = plan_read(&docs, &deckhand, &o);
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

/* ---- diff: a file and the server, revisions, policy groups ---------------------------- */

/* Writes docs as a YAML stream to a new temporary file, whose name goes to *path. */
static int temp_yaml(struct ctl *ctl, const json_t *docs, char **path)
{
    const char *dir = getenv("TMPDIR");
    char *name = ctl_printf(ctl, "%s/purserctl-diff-XXXXXX", dir && *dir ? dir : "/tmp");
    struct buf text = BUF_INIT;
    struct purser_error err;
    int fd = -1,
        rc = yaml_codec_emit(&text, docs, &err) ? ctl_error(CTL_FAILED, "%s", err.message) : CTL_OK;
    if (!rc && (fd = mkstemp(name)) < 0)
        rc = ctl_error(CTL_FAILED, "%s: %s", name, strerror(errno));
    if (!rc && write(fd, buf_cstr(&text), text.len) != (ssize_t)text.len)
        rc = ctl_error(CTL_FAILED, "%s: %s", name, strerror(errno));
    if (fd >= 0)
        close(fd);
    *path = fd >= 0 ? name : NULL;
    buf_release(&text);
    return rc;
}

/* diff -u of the two sides' YAML: CTL_OK when equal, CTL_DIFFERENT, or a failure. */
static int unified_diff(struct ctl *ctl, const json_t *server, char *server_label,
                        const json_t *local, char *local_label)
{
    char *paths[2] = {NULL, NULL};
    int status = 0, spawned = 0, rc = temp_yaml(ctl, server, &paths[0]);
    pid_t pid;
    if (!rc)
        rc = temp_yaml(ctl, local, &paths[1]);
    if (!rc) {
        char *args[] = {"diff",      "-u",     "--label", server_label, "--label",
                        local_label, paths[0], paths[1],  NULL};
        fflush(stdout);
        spawned = posix_spawnp(&pid, "diff", NULL, NULL, args, environ);
        if (spawned || waitpid(pid, &status, 0) < 0)
            rc = ctl_error(CTL_FAILED, "diff (diffutils): %s", strerror(spawned ? spawned : errno));
        else
            rc = WIFEXITED(status) && WEXITSTATUS(status) < 2 ? WEXITSTATUS(status) : CTL_FAILED;
    }
    for (int i = 0; i < 2; i++)
        if (paths[i])
            unlink(paths[i]);
    return rc;
}

/* The bucket's documents in the newest revision against the file's. */
static int bucket_diff(struct ctl *ctl, const char *bucket, const json_t *docs, char *label)
{
    long long id = 0;
    json_t *server = NULL, *theirs = NULL, *ours = NULL;
    int rc = bucket_newest(ctl, bucket, &id, &server);
    if (!rc) {
        theirs = documents_sorted(ctl, server);
        ours = documents_sorted(ctl, docs);
        rc = unified_diff(ctl, theirs, ctl_printf(ctl, "server/bucket/%s", bucket), ours, label);
    }
    json_decref(server);
    json_decref(theirs);
    json_decref(ours);
    return rc;
}

/* The resource on the server (nothing when it does not exist) against what apply would make. */
static int resource_diff(struct ctl *ctl, const struct kind *k, const json_t *doc, char *label)
{
    const char *id = resource_id(ctl, k, doc);
    json_t *current = NULL, *theirs = json_array(), *ours = json_array(), *shaped = NULL;
    int rc = exchange(ctl, REQUEST("GET", k->item, id), NULL, 404, &current);
    if (!rc)
        json_array_append_new(theirs, shaped = k->shape ? k->shape(current, NULL, id)
                                                        : json_deep_copy(current));
    if (!rc || rc == STATUS_EXPECTED) {
        json_array_append_new(ours, k->wanted(doc, shaped, id));
        rc = unified_diff(ctl, theirs, ctl_printf(ctl, "server/%s/%s", k->noun, id), ours, label);
    }
    json_decref(current);
    json_decref(theirs);
    json_decref(ours);
    return rc;
}

/* The file against the server, as kubectl diff: 0 the same, 1 different, or a failure. */
static int diff_file(struct ctl *ctl, const struct options *o)
{
    const char *base = strrchr(o->file, '/');
    char *label = ctl_printf(ctl, "local/%s", base ? base + 1 : o->file);
    json_t *docs = NULL, *deckhand = NULL, *doc;
    int worst = CTL_OK, rc = plan_read(&docs, &deckhand, o);
    size_t i;
    if (!rc && json_array_size(deckhand))
        worst = bucket_diff(ctl, o->bucket, deckhand, label);
    json_array_foreach (docs, i, doc) {
        enum doc_class class;
        const struct kind *k = NULL;
        int one = CTL_OK;
        if (rc || worst > CTL_DIFFERENT || classify(doc, i + 1, &class, &k) || class < DOC_LOCK)
            continue;
        if (k && k->diffable)
            one = resource_diff(ctl, k, doc, label);
        else
            ctl_error(CTL_OK,
                      "note: document %zu (%s %s): diff -f compares buckets and clusters only",
                      i + 1, k ? k->kind : "lock", text_at(doc, k ? "metadata.name" : "name"));
        worst = one > worst ? one : worst;
    }
    json_decref(docs);
    json_decref(deckhand);
    return rc ? rc : worst;
}

/* What changed in a document's data or metadata, from deepdiff's shape (root['a'] as data['a']). */
static void print_changes(struct ctl *ctl, const char *what, const json_t *changes)
{
    const char *change, *path;
    json_t *entries, *entry;
    size_t i;
    json_object_foreach ((json_t *)changes, change, entries) {
        const char *sign = strstr(change, "_added") ? "+ " : strstr(change, "_removed") ? "- " : "";
        if (json_is_true(entries)) /* {"encrypted": true}: no values shown */
            printf("      %s: changed (%s)\n", what, change);
        json_array_foreach (entries, i, entry)
            printf("      %s%s%s\n", sign, what, json_string_value(entry) + 4);
        json_object_foreach (json_is_object(entries) ? entries : NULL, path, entry)
            printf("      %s%s%s: %s\n", sign, what, path + 4,
                   *sign ? value_text(ctl, entry)
                         : ctl_printf(ctl, "%s -> %s",
                                      value_text(ctl, json_object_get(entry, "old_value")),
                                      value_text(ctl, json_object_get(entry, "new_value"))));
    }
}

/* A modified bucket's documents added (+), deleted (-) and changed (~). */
static void print_bucket_details(struct ctl *ctl, const json_t *details)
{
    static const char *const lists[] = {"document_added.details", "document_deleted.details"};
    const char *key, *comma;
    json_t *pair, *change;
    size_t i;
    for (int d = 0; d < 2; d++)
        json_array_foreach (ctl_dig(details, lists[d]), i, pair)
            printf("  %c %s %s\n", d ? '-' : '+', json_string_value(json_array_get(pair, 0)),
                   json_string_value(json_array_get(pair, 1)));
    json_object_foreach (ctl_dig(details, "document_changed.details"), key, change) {
        if ((comma = strstr(key, "', '")) && !strncmp(key, "('", 2)) /* "('schema', 'name')" */
            printf("  ~ %.*s %.*s\n", (int)(comma - key - 2), key + 2, (int)(strlen(comma + 4) - 2),
                   comma + 4);
        print_changes(ctl, "data", json_object_get(change, "data_changed"));
        print_changes(ctl, "metadata", json_object_get(change, "metadata_changed"));
    }
}

static int diff_revisions(struct ctl *ctl, const struct ctl_command *self, char **ids, int deep)
{
    char *end_a, *end_b;
    long long a = strtoll(ids[0], &end_a, 10), b = strtoll(ids[1], &end_b, 10);
    const char *bucket, *template = deep ? DOCS "/revisions/{id}/deepdiff/{other}"
                                         : DOCS "/revisions/{id}/diff/{other}";
    json_t *answer = NULL, *state;
    int different = 0, rc = CTL_OK;
    if (*end_a || *end_b || a < 0 || b < 0 || !*ids[0] || !*ids[1])
        rc = ctl_usage(self, "revisions are numbers (0: none)");
    if (!rc)
        rc = exchange(ctl, REQUEST("GET", template, ids[0], ids[1]), NULL, 0, &answer);
    if (!rc && !text_output(ctl))
        ctl_print(ctl, answer, NULL, NULL);
    else if (!rc) /* the server compares the older with the newer, whichever comes first */
        printf("revision %lld -> %lld\n", a < b ? a : b, a < b ? b : a);
    json_object_foreach (answer, bucket, state) {
        if (!json_is_string(state)) /* "<bucket> diff": the details of a modified one */
            continue;
        different |= strcmp(json_string_value(state), "unmodified") != 0;
        if (!text_output(ctl))
            continue;
        printf("bucket %s: %s\n", bucket, json_string_value(state));
        print_bucket_details(ctl, json_object_get(answer, ctl_printf(ctl, "%s diff", bucket)));
    }
    json_decref(answer);
    return rc ? rc : different ? CTL_DIFFERENT : CTL_OK;
}

/* The policies group points at ({name: {revision_id}}); a group that does not exist, none. */
static int group_pointers(struct ctl *ctl, const char *group, json_t **out)
{
    json_t *answer = NULL;
    int rc = exchange(ctl, REQUEST("GET", ORG "/policy_groups/{group}", group), NULL, 404, &answer);
    *out = json_object_get(answer, "policies") ? json_incref(json_object_get(answer, "policies"))
                                               : json_object();
    json_decref(answer);
    return rc == STATUS_EXPECTED ? CTL_OK : rc;
}

/* A policy's run list, cookbook and attribute changes, as the API's diff says them. */
static void print_policy_diff(struct ctl *ctl, const json_t *diff)
{
    static const char *const lists[][2] = {
        {"run list +", "run_list.added"},     {"run list -", "run_list.removed"},
        {"cookbook +", "cookbooks.added"},    {"cookbook -", "cookbooks.removed"},
        {"attribute +", "attributes.added"},  {"attribute -", "attributes.removed"},
        {"attribute ~", "attributes.changed"}};
    const char *name;
    json_t *item;
    size_t i, j;
    json_object_foreach (ctl_dig(diff, "cookbooks.changed"), name, item)
        printf("  cookbook %s: %s -> %s (%s -> %s)\n", name, text_at(item, "from"),
               text_at(item, "to"), short_rev(ctl, text_at(item, "from_identifier")),
               short_rev(ctl, text_at(item, "to_identifier")));
    for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        json_array_foreach (ctl_dig(diff, lists[i][1]), j, item)
            printf("  %s %s\n", lists[i][0], json_string_value(item));
        json_object_foreach (ctl_dig(diff, lists[i][1]), name, item) /* cookbook: version */
            printf("  %s %s %s\n", lists[i][0], name, json_string_value(item));
    }
}

/* One policy between two groups: the API's diff when they point at different revisions. */
static int policy_diff(struct ctl *ctl, char **groups, json_t **pointers, const char *name,
                       json_t *answers)
{
    const char *revs[2] = {text_at(json_object_get(pointers[0], name), "revision_id"),
                           text_at(json_object_get(pointers[1], name), "revision_id")};
    struct ctl_request request = REQUEST("GET", ORG "/policies/{name}/diff", name);
    struct buf query = BUF_INIT;
    int both = revs[0] && revs[1], same = both && !strcmp(revs[0], revs[1]), rc = CTL_OK;
    json_t *answer = NULL;
    ctl_query_add(&query, "from_group", groups[0]);
    ctl_query_add(&query, "to_group", groups[1]);
    request.query = query.data;
    if (!revs[0] && !revs[1])
        rc = ctl_error(CTL_NOTFOUND, "policy %s: in neither %s nor %s", name, groups[0], groups[1]);
    else if (both && !same)
        rc = exchange(ctl, request, NULL, 0, &answer);
    else /* what each side points at, in the API's shape */
        answer = json_pack("{s:{s:s, s:s?}, s:{s:s, s:s?}}", "from", "policy_group", groups[0],
                           "revision_id", revs[0], "to", "policy_group", groups[1], "revision_id",
                           revs[1]);
    if (!rc && text_output(ctl) && same && !ctl->quiet)
        printf("policy %s: unchanged (%s in both)\n", name, short_rev(ctl, revs[0]));
    else if (!rc && text_output(ctl) && !same)
        printf("policy %s: %s %s -> %s %s\n", name, groups[0],
               revs[0] ? short_rev(ctl, revs[0]) : "(none)", groups[1],
               revs[1] ? short_rev(ctl, revs[1]) : "(none)");
    if (!rc && text_output(ctl) && both && !same)
        print_policy_diff(ctl, answer);
    if (!rc)
        json_object_set(answers, name, answer);
    json_decref(answer);
    buf_release(&query);
    return rc ? rc : same ? CTL_OK : CTL_DIFFERENT;
}

/* The named policy, or every policy either group points at, from one group to the other. */
static int diff_groups(struct ctl *ctl, char **groups, const char *policy)
{
    json_t *pointers[2] = {NULL, NULL}, *names = json_object(), *answers = json_object(), *v;
    const char *name;
    int worst = CTL_OK, rc = group_pointers(ctl, groups[0], &pointers[0]);
    if (!rc)
        rc = group_pointers(ctl, groups[1], &pointers[1]);
    if (!rc && policy)
        json_object_set_new(names, policy, json_null());
    else if (!rc) {
        json_object_update(names, pointers[0]);
        json_object_update(names, pointers[1]);
    }
    json_object_foreach (names, name, v) {
        int one = policy_diff(ctl, groups, pointers, name, answers);
        if ((worst = one > worst ? one : worst) > CTL_DIFFERENT)
            break;
    }
    if (!rc && worst <= CTL_DIFFERENT && !text_output(ctl))
        ctl_print(ctl, answers, NULL, NULL);
    json_decref(pointers[0]);
    json_decref(pointers[1]);
    json_decref(names);
    json_decref(answers);
    return rc ? rc : worst;
}

int cmd_diff(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("diff");
    struct options o;
    int first, rc = options_parse(self, argc, argv, &o, &first), args = argc - first;
    if (rc)
        return rc;
    if (o.append)
        return ctl_usage(self, "--append is apply's");
    if (o.file)
        return args ? ctl_usage(self, "-f FILE takes no revisions or groups") : diff_file(ctl, &o);
    if (args != 2)
        return ctl_usage(self, "two revisions, --groups FROM TO, or -f FILE");
    if (o.groups)
        return diff_groups(ctl, argv + first, o.policy);
    return diff_revisions(ctl, self, argv + first, o.deep);
}
