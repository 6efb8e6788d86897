/* diff.c: purserctl diff: two document revisions, two policy groups, or a file and the server. */
#include "apply.h"

#include "codec/yaml_codec.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* value as compact JSON, in the ctl's arena. */
static const char *value_text(struct ctl *ctl, const json_t *value)
{
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    const char *out = ctl_printf(ctl, "%s", text ? text : "null");
    free(text);
    return out;
}

/* ---- a file against the server, as kubectl diff ------------------------------------------- */

/* docs made plain and ordered by schema and name, as both sides of a diff are. */
static json_t *documents_sorted(struct ctl *ctl, const json_t *docs)
{
    json_t *index = apply_document_index(ctl, docs), *order = apply_sorted(index),
           *out = json_array(), *doc;
    const char *key;
    json_object_foreach (order, key, doc)
        json_array_append(out, json_object_get(index, key));
    json_decref(order);
    json_decref(index);
    return out;
}

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
    int rc = apply_bucket_newest(ctl, bucket, &id, &server);
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

/* The two sides as one-document streams (server NULL: an empty one), through diff -u; it takes
 * the references to server and local. */
static int one_diff(struct ctl *ctl, json_t *server, char *server_label, json_t *local,
                    char *local_label)
{
    json_t *theirs = server ? json_pack("[o]", server) : json_array();
    json_t *ours = json_pack("[o]", local);
    int rc = unified_diff(ctl, theirs, server_label, ours, local_label);
    json_decref(theirs);
    json_decref(ours);
    return rc;
}

/* The resource on the server (nothing when it does not exist) against what apply would make. */
static int resource_diff(struct ctl *ctl, const struct apply_kind *k, const json_t *doc,
                         char *label)
{
    const char *id = apply_resource_id(ctl, k, doc);
    json_t *current, *shaped;
    int rc = apply_resource_current(ctl, k, id, &current, &shaped);
    if (!rc || rc == STATUS_EXPECTED)
        rc = one_diff(ctl, json_incref(shaped), ctl_printf(ctl, "server/%s/%s", k->noun, id),
                      k->wanted(doc, shaped, id), label);
    json_decref(current);
    json_decref(shaped);
    return rc;
}

/* A Policyfile lock against the server's: the one --policy-group's group serves, else the
 * uploaded revision of its revision_id (nothing when there is none). */
static int lock_diff(struct ctl *ctl, const json_t *lock, const char *group, char *label)
{
    const char *name = apply_text(lock, "name"), *rev = apply_text(lock, "revision_id");
    struct ctl_request request =
        group ? REQUEST("GET", ORG "/policy_groups/{group}/policies/{name}", group, name)
              : REQUEST("GET", ORG "/policies/{name}/revisions/{rev}", name, rev);
    char *server_label =
        group ? ctl_printf(ctl, "server/policy_group/%s/%s", group, name)
              : ctl_printf(ctl, "server/policy/%s/%s", name, apply_short_revision(ctl, rev));
    json_t *current = NULL;
    int rc = apply_exchange(ctl, request, NULL, 404, &current);
    if (!rc) /* a revision's answer says which groups point at it: not the lock's */
        json_object_del(current, "policy_group_list");
    if (!rc || rc == STATUS_EXPECTED)
        rc = one_diff(ctl, current ? apply_sorted(current) : NULL, server_label, apply_sorted(lock),
                      label);
    json_decref(current);
    return rc;
}

/* Document i of the file against the server (Deckhand documents: compared by their bucket). */
static int document_diff(struct ctl *ctl, const struct apply_options *o, const json_t *doc,
                         size_t i, char *label)
{
    enum doc_class class;
    const struct apply_kind *k = NULL;
    apply_classify(doc, i + 1, &class, &k); /* checked before: it says no more */
    if (class == DOC_LOCK)
        return lock_diff(ctl, doc, o->group, label);
    if (class == DOC_RESOURCE && k->diffable)
        return resource_diff(ctl, k, doc, label);
    if (class == DOC_RESOURCE)
        ctl_error(CTL_OK,
                  "note: document %zu (%s %s): diff -f compares buckets, Policyfile locks, "
                  "clusters and nodes",
                  i + 1, k->kind, apply_text(doc, "metadata.name"));
    return CTL_OK;
}

/* The file against the server, as kubectl diff: 0 the same, 1 different, or a failure. */
static int diff_file(struct ctl *ctl, const struct apply_options *o)
{
    const char *base = strrchr(o->file, '/');
    char *label = ctl_printf(ctl, "local/%s", base ? base + 1 : o->file);
    json_t *docs = NULL, *deckhand = NULL;
    int worst = CTL_OK, rc = apply_plan_read(&docs, &deckhand, o);
    if (!rc && json_array_size(deckhand))
        worst = bucket_diff(ctl, o->bucket, deckhand, label);
    for (size_t i = 0; !rc && worst <= CTL_DIFFERENT && i < json_array_size(docs); i++) {
        int one = document_diff(ctl, o, json_array_get(docs, i), i, label);
        worst = one > worst ? one : worst;
    }
    json_decref(docs);
    json_decref(deckhand);
    if (!rc)
        rc = worst;
    return rc;
}

/* ---- two document revisions ---------------------------------------------------------------- */

/* The length of a deepdiff path's first segment: "['key']" or "[\"key\"]" (quotes inside
 * escaped), "[3]", or the rest of path when it is none of them. */
static size_t segment_length(const char *p)
{
    char quote = p[0] == '[' ? p[1] : 0;
    const char *c = p + 2, *close = strchr(p, ']');
    if (quote != '\'' && quote != '"')
        return p[0] == '[' && close ? (size_t)(close - p + 1) : strlen(p);
    for (; *c && !(*c == quote && c[1] == ']'); c++)
        if (*c == '\\' && c[1])
            c++;
    return *c ? (size_t)(c + 2 - p) : strlen(p);
}

/* The length of a quoted segment's key when it is a plain word, else 0. */
static size_t plain_key(const char *p, size_t n)
{
    static const char word[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    if (n < 5 || p[0] != '[' || (p[1] != '\'' && p[1] != '"'))
        return 0;
    return strspn(p + 2, word) == n - 4 ? n - 4 : 0;
}

/* deepdiff's path as people read it, under what: root['a']['b'][0] is data.a.b[0]; a key that
 * is not a plain word keeps its brackets (data['a.b']). */
static const char *readable_path(struct ctl *ctl, const char *what, const char *path)
{
    const char *p = !path ? "" : strncmp(path, "root", 4) ? path : path + 4, *out;
    struct buf text = BUF_INIT;
    buf_adds(&text, what);
    while (*p) {
        size_t n = segment_length(p), key = plain_key(p, n);
        if (key) {
            buf_addc(&text, '.');
            buf_add(&text, p + 2, key);
        } else
            buf_add(&text, p, n);
        p += n;
    }
    out = ctl_printf(ctl, "%s", buf_cstr(&text));
    buf_release(&text);
    return out;
}

/* What changed in a document's data or metadata, from deepdiff's shape (each path readable). */
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
            printf("      %s%s\n", sign, readable_path(ctl, what, json_string_value(entry)));
        json_object_foreach (json_is_object(entries) ? entries : NULL, path, entry)
            printf("      %s%s: %s\n", sign, readable_path(ctl, what, path),
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
        rc = apply_exchange(ctl, REQUEST("GET", template, ids[0], ids[1]), NULL, 0, &answer);
    if (!rc && !apply_text_output(ctl))
        ctl_print(ctl, answer, NULL, NULL);
    else if (!rc) /* the server compares the older with the newer, whichever comes first */
        printf("revision %lld -> %lld\n", a < b ? a : b, a < b ? b : a);
    json_object_foreach (answer, bucket, state) {
        if (!json_is_string(state)) /* "<bucket> diff": the details of a modified one */
            continue;
        different |= strcmp(json_string_value(state), "unmodified") != 0;
        if (!apply_text_output(ctl))
            continue;
        printf("bucket %s: %s\n", bucket, json_string_value(state));
        print_bucket_details(ctl, json_object_get(answer, ctl_printf(ctl, "%s diff", bucket)));
    }
    json_decref(answer);
    if (!rc)
        rc = different ? CTL_DIFFERENT : CTL_OK;
    return rc;
}

/* ---- two policy groups ---------------------------------------------------------------------- */

/* The policies group points at ({name: {revision_id}}); a group that does not exist, none. */
static int group_pointers(struct ctl *ctl, const char *group, json_t **out)
{
    json_t *answer = NULL;
    int rc = apply_exchange(ctl, REQUEST("GET", ORG "/policy_groups/{group}", group), NULL, 404,
                            &answer);
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
        printf("  cookbook %s: %s -> %s (%s -> %s)\n", name, apply_text(item, "from"),
               apply_text(item, "to"),
               apply_short_revision(ctl, apply_text(item, "from_identifier")),
               apply_short_revision(ctl, apply_text(item, "to_identifier")));
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
    const char *revs[2] = {apply_text(json_object_get(pointers[0], name), "revision_id"),
                           apply_text(json_object_get(pointers[1], name), "revision_id")};
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
        rc = apply_exchange(ctl, request, NULL, 0, &answer);
    else /* what each side points at, in the API's shape */
        answer = json_pack("{s:{s:s, s:s?}, s:{s:s, s:s?}}", "from", "policy_group", groups[0],
                           "revision_id", revs[0], "to", "policy_group", groups[1], "revision_id",
                           revs[1]);
    if (!rc && apply_text_output(ctl) && same && !ctl->quiet)
        printf("policy %s: unchanged (%s in both)\n", name, apply_short_revision(ctl, revs[0]));
    else if (!rc && apply_text_output(ctl) && !same)
        printf("policy %s: %s %s -> %s %s\n", name, groups[0],
               revs[0] ? apply_short_revision(ctl, revs[0]) : "(none)", groups[1],
               revs[1] ? apply_short_revision(ctl, revs[1]) : "(none)");
    if (!rc && apply_text_output(ctl) && both && !same)
        print_policy_diff(ctl, answer);
    if (!rc)
        json_object_set(answers, name, answer);
    json_decref(answer);
    buf_release(&query);
    if (!rc)
        rc = same ? CTL_OK : CTL_DIFFERENT;
    return rc;
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
    if (!rc && worst <= CTL_DIFFERENT && !apply_text_output(ctl))
        ctl_print(ctl, answers, NULL, NULL);
    json_decref(pointers[0]);
    json_decref(pointers[1]);
    json_decref(names);
    json_decref(answers);
    if (!rc)
        rc = worst;
    return rc;
}

int cmd_diff(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("diff");
    struct apply_options o;
    int first, rc = apply_options_parse(self, argc, argv, &o, &first), args = argc - first;
    if (!rc && o.append)
        rc = ctl_usage(self, "--append is apply's");
    if (!rc && o.file && args)
        rc = ctl_usage(self, "-f FILE takes no revisions or groups");
    else if (!rc && o.file)
        rc = diff_file(ctl, &o);
    else if (!rc && args != 2)
        rc = ctl_usage(self, "two revisions, --groups FROM TO, or -f FILE");
    else if (!rc && o.groups)
        rc = diff_groups(ctl, argv + first, o.policy);
    else if (!rc)
        rc = diff_revisions(ctl, self, argv + first, o.deep);
    return rc;
}
