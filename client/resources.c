/* resources.c: purserctl's get, describe, create, replace, patch and delete over the kinds of
 * kinds.c: options, pages, output. */
#include "kinds.h"

#include "codec/yaml_codec.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* ---- the verbs ------------------------------------------------------------------------------- */

struct verb_options {
    const char *given[8]; /* kind_parent_options' values */
    const char *file, *patch, *selector, *filter, *sort, *page_size, *query;
    const char *if_match;
    const char *organization; /* with all_organizations: organization=, or NULL */
    int all, yes, all_organizations;
};

/* Parses the verb's options; *first gets the index of the first positional argument. */
static int verb_parse(const struct ctl_command *self, int argc, char **argv, struct verb_options *o,
                      int *first)
{
    static const struct option options[] = {{"user", required_argument, NULL, 0},
                                            {"client", required_argument, NULL, 1},
                                            {"policy-group", required_argument, NULL, 2},
                                            {"policy", required_argument, NULL, 3},
                                            {"revision", required_argument, NULL, 4},
                                            {"cluster", required_argument, NULL, 5},
                                            {"filename", required_argument, NULL, 'f'},
                                            {"patch", required_argument, NULL, 'p'},
                                            {"selector", required_argument, NULL, 'l'},
                                            {"filter", required_argument, NULL, 'F'},
                                            {"sort", required_argument, NULL, 'S'},
                                            {"page-size", required_argument, NULL, 'P'},
                                            {"query", required_argument, NULL, 'q'},
                                            {"all", no_argument, NULL, 'A'},
                                            {"if-match", required_argument, NULL, 'M'},
                                            {"yes", no_argument, NULL, 'Y'},
                                            {"all-organizations", no_argument, NULL, 'W'},
                                            {"organization", required_argument, NULL, 'w'},
                                            {NULL, 0, NULL, 0}};
    int opt;
    memset(o, 0, sizeof(*o));
    while ((opt = getopt_long(argc, argv, "f:p:l:", options, NULL)) != -1)
        switch (opt) {
        case 0:
        case 1:
        case 2:
        case 3:
        case 4:
        case 5: o->given[opt] = optarg; break;
        case 'f': o->file = optarg; break;
        case 'p': o->patch = optarg; break;
        case 'l': o->selector = optarg; break;
        case 'F': o->filter = optarg; break;
        case 'S': o->sort = optarg; break;
        case 'P': o->page_size = optarg; break;
        case 'q': o->query = optarg; break;
        case 'A': o->all = 1; break;
        case 'Y': o->yes = 1; break;
        case 'M': o->if_match = optarg; break;
        case 'W': o->all_organizations = 1; break;
        case 'w': o->organization = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    if (optind >= argc)
        return ctl_usage(self, "which kind? (%s --help lists them)", self->name);
    *first = optind;
    return CTL_OK;
}

/* Resolves kind, parents and names for verb. */
static int target_of(struct ctl *ctl, const struct ctl_command *self, unsigned verb,
                     const struct verb_options *o, char **args, int nargs, struct target *t)
{
    int want, named = 0;
    memset(t, 0, sizeof(*t));
    if (!(t->kind = kind_find(args[0], o->given, verb)))
        return ctl_usage(self, "unknown kind %s (purserctl %s --help lists them)", args[0],
                         self->name);
    if (!(t->kind->verbs & verb))
        return ctl_error(CTL_USAGE, "%s are not %s by purserctl %s", t->kind->plural,
                         kind_verb_name(verb), self->name);
    for (size_t i = 0; kind_parent_options[i]; i++)
        if (o->given[i] && !(t->kind->parents && strstr(t->kind->parents, kind_parent_options[i])))
            return ctl_usage(self, "%s %s does not take --%s", self->name, t->kind->plural,
                             kind_parent_options[i]);
    want = kind_names_wanted(t->kind, verb);
    if (verb == K_CREATE && t->kind->name_field)
        named = nargs - 1 == want + 1 || (o->file && nargs - 1 == want);
    if (nargs - 1 != want && !named)
        return ctl_usage(self, "%s %s takes %d name%s", self->name, t->kind->name,
                         want + (verb == K_CREATE && t->kind->name_field),
                         want + (verb == K_CREATE && t->kind->name_field) == 1 ? "" : "s");
    return kind_target_fill(ctl, t, o->given, args + 1, nargs - 1 - (named && nargs - 1 > want));
}

/* Checks that the list of t takes the options given (a selector the API would ignore must not
 * select everything). */
static int list_options_check(const struct ctl_command *self, const struct target *t,
                              const struct verb_options *o)
{
    const char *options = t->kind->options ? t->kind->options : "";
    const char *given[] = {o->filter ? "filter" : NULL, o->sort ? "sort" : NULL,
                           o->page_size ? "page-size" : NULL};
    if (o->selector && !t->kind->selector)
        return ctl_usage(self, "%s %s takes no -l selector", self->name, t->kind->plural);
    if (o->all_organizations && !kind_all_organizations(t->kind))
        return ctl_usage(self, "%s %s takes no --all-organizations", self->name, t->kind->plural);
    if (o->organization && !o->all_organizations)
        return ctl_usage(self, "--organization narrows --all-organizations (one organization's "
                               "list: --org ORG)");
    for (size_t i = 0; i < 3; i++)
        if (given[i] && !strstr(options, given[i]))
            return ctl_usage(self, "%s %s takes no --%s", self->name, t->kind->plural, given[i]);
    return CTL_OK;
}

/* The query of one page: the options, then where the page starts (a page token, or the
 * event feed's since). */
static void list_query(struct buf *query, const struct target *t, const struct verb_options *o,
                       const char *token, long long since)
{
    buf_reset(query);
    if (o->selector)
        ctl_query_add(query, t->kind->selector, o->selector);
    if (o->filter)
        ctl_query_add(query, "filter", o->filter);
    if (o->sort)
        ctl_query_add(query, "sort", o->sort);
    if (o->page_size)
        ctl_query_add(query, "page_size", o->page_size);
    if (o->organization)
        ctl_query_add(query, "organization", o->organization);
    if (o->query)
        buf_printf(query, "%s%s", query->len ? "&" : "", o->query);
    if (token)
        ctl_query_add(query, "page_token", token);
    if (t->kind->paging == PAGE_SINCE)
        buf_printf(query, "%ssince=%lld", query->len ? "&" : "", since);
}

/* Where the page after page starts: 1 with *token or *since moved on, 0 when page is the last.
 * A cursor that does not move is the API failing, not a reason to ask forever. */
static int list_next(const struct target *t, const json_t *page, char **token, long long *since)
{
    const char *next = json_string_value(json_object_get(page, "next_page_token"));
    json_t *next_seq = json_object_get(page, "next");
    if (t->kind->paging == PAGE_TOKEN && next && *next && (!*token || strcmp(next, *token))) {
        free(*token);
        *token = strdup(next);
        return *token != NULL;
    }
    if (t->kind->paging == PAGE_SINCE && json_array_size(json_object_get(page, "events")) &&
        json_is_integer(next_seq) && json_integer_value(next_seq) > *since) {
        *since = json_integer_value(next_seq);
        return 1;
    }
    return 0;
}

/* A document list's page (a list of documents; its next page's token is in a header): a full
 * page of page_size documents may have a next one, at the position after it. */
static int document_page_next(const struct verb_options *o, const json_t *page, char **token)
{
    long size = o->page_size ? atol(o->page_size) : 0, at = *token ? atol(*token) : 0;
    char next[24];
    if (size > 1000)
        size = 1000; /* (the API's most) */
    if (!json_is_array(page) || size < 1 || json_array_size(page) != (size_t)size)
        return 0;
    snprintf(next, sizeof(next), "%ld", at + size);
    free(*token);
    return (*token = strdup(next)) != NULL;
}

/* Follows a list's pages into one answer: page_token's items, or the event feed's since. A
 * document API list asked as YAML is kept as the API's text in raw. */
static int list_all(struct ctl *ctl, const struct target *t, const struct verb_options *o,
                    json_t **out, struct ctl_answer *raw)
{
    struct buf query = BUF_INIT;
    const struct kind_all *all = o->all_organizations ? kind_all_organizations(t->kind) : NULL;
    struct ctl_request request = {
        .method = "GET", .template = all ? all->list : t->kind->list, .values = t->values};
    const char *rows = t->kind->view ? t->kind->view->rows : NULL;
    char *token = NULL;
    long long since = 0;
    int rc, more = 1;

    *out = NULL;
    /* (pages are followed as JSON: a page's YAML is one page of the list) */
    if (kind_is_document_api(t->kind) && ctl->output == OUT_YAML && !o->page_size)
        request.accept = "application/x-yaml";
    while (more) {
        json_t *page = NULL;
        list_query(&query, t, o, token, since);
        request.query = query.len ? query.data : NULL;
        if (request.accept) {
            rc = ctl_call(ctl, &request, raw);
            break;
        }
        if ((rc = ctl_call_json(ctl, &request, &page)))
            break;
        if (!*out)
            *out = json_incref(page);
        else
            json_array_extend(rows ? json_object_get(*out, rows) : *out,
                              rows ? json_object_get(page, rows) : page);
        more = list_next(t, page, &token, &since) || document_page_next(o, page, &token);
        json_decref(page);
    }
    if (*out && t->kind->paging == PAGE_TOKEN)
        json_object_set_new(*out, "next_page_token", json_string(""));
    if (*out && t->kind->paging == PAGE_SINCE)
        json_object_set_new(*out, "next", json_integer(since));
    free(token);
    buf_release(&query);
    return rc;
}

/* Prints one object the API answered (raw, its text): -o json as the API's text, -o name as
 * kind/name (the name the server gave: the view's name path, else the name typed), else YAML. */
static int print_one(struct ctl *ctl, const struct kind *k, const struct ctl_answer *raw,
                     const char *typed)
{
    json_t *value = json_loadb(raw->body.data, raw->body.len, JSON_DECODE_ANY, NULL);
    const char *path = k->view && k->view->name && *k->view->name != '@' ? k->view->name : NULL;
    int rc = CTL_OK;

    if (ctl->output == OUT_NAME) {
        const char *named = json_string_value(path ? ctl_dig(value, path) : NULL);
        printf("%s/%s\n", k->name, named ? named : typed);
    } else if (ctl->output == OUT_JSON)
        printf("%s%s", raw->body.data,
               raw->body.len && raw->body.data[raw->body.len - 1] == '\n' ? "" : "\n");
    else if (!value)
        rc = ctl_error(CTL_FAILED, "the answer is not JSON");
    else
        rc = ctl_print_yaml(stdout, value);
    json_decref(value);
    return rc;
}

/* get KIND NAME...: one object (YAML from the document API when -o yaml asks). */
static int get_one(struct ctl *ctl, const struct target *t, const char *typed)
{
    struct ctl_request request = {.method = "GET", .template = t->kind->item, .values = t->values};
    struct ctl_answer raw;
    int rc;
    if (kind_is_document_api(t->kind) && ctl->output == OUT_YAML)
        request.accept = "application/x-yaml";
    if (!(rc = ctl_call(ctl, &request, &raw))) {
        if (request.accept)
            fputs(raw.body.data, stdout);
        else
            rc = print_one(ctl, t->kind, &raw, typed);
    }
    ctl_answer_release(&raw);
    return rc;
}

/* The page size purserctl reads the organizations' list in. */
#define ORGANIZATIONS_PAGE "500"

/* get KIND: every page of the list. */
static int get_list(struct ctl *ctl, const struct ctl_command *self, const struct target *t,
                    const struct verb_options *o)
{
    struct ctl_answer raw = {0};
    json_t *answer = NULL;
    struct kind paged_kind;
    struct target paged;
    struct verb_options chunked;
    int rc = list_options_check(self, t, o);
    /* a server may hold thousands of organizations: their list is read a page at a time, as
     * kubectl reads a list in chunks, never as Chef's whole map */
    if (!rc && !o->page_size && !strcmp(t->kind->plural, "organizations")) {
        chunked = *o;
        chunked.page_size = ORGANIZATIONS_PAGE;
        o = &chunked;
    }
    if (kind_page_view(t->kind) && (o->page_size || o->sort)) { /* pages of envelopes */
        paged_kind = *t->kind;
        paged_kind.paging = PAGE_TOKEN;
        paged_kind.view = kind_page_view(t->kind);
        paged = *t;
        paged.kind = &paged_kind;
        t = &paged;
    }
    if (!rc)
        rc = list_all(ctl, t, o, &answer, &raw);
    if (!rc && raw.body.data)
        fputs(raw.body.data, stdout);
    else if (!rc)
        rc = ctl_print(ctl, answer,
                       o->all_organizations ? kind_all_organizations(t->kind)->view : t->kind->view,
                       NULL);
    json_decref(answer);
    ctl_answer_release(&raw);
    return rc;
}

int cmd_get(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("get");
    const struct kind *list;
    struct verb_options o;
    struct target t;
    int first, rc = verb_parse(self, argc, argv, &o, &first);
    unsigned verb;

    if (!rc) {
        list = kind_find(argv[first], o.given, K_LIST);
        verb = list && (list->verbs & K_LIST) && argc - first - 1 == kind_names_wanted(list, K_LIST)
                   ? K_LIST
                   : K_GET;
        rc = target_of(ctl, self, verb, &o, argv + first, argc - first, &t);
    }
    if (!rc)
        rc = verb == K_LIST ? get_list(ctl, self, &t, &o) : get_one(ctl, &t, argv[argc - 1]);
    return rc;
}

int cmd_describe(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("describe");
    struct verb_options o;
    struct target t;
    json_t *answer = NULL;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (!rc)
        rc = target_of(ctl, self, K_GET, &o, argv + first, argc - first, &t);
    if (!rc) {
        struct ctl_request request = {
            .method = "GET", .template = t.kind->item, .values = t.values};
        rc = ctl_call_json(ctl, &request, &answer);
    }
    if (!rc) {
        printf("%s %s\n", t.kind->name, argv[argc - 1]);
        ctl_print_yaml(stdout, answer);
        json_decref(answer);
        /* the kinds that hang off this one */
        char related[64];
        snprintf(related, sizeof(related), "%s", t.kind->related ? t.kind->related : "");
        for (char *save = NULL, *r = strtok_r(related, " ", &save); r && !rc;
             r = strtok_r(NULL, " ", &save)) {
            struct verb_options child = {0};
            struct target ct = {0};
            struct ctl_answer raw = {0};
            json_t *list = NULL;
            for (size_t i = 0; kind_parent_options[i]; i++)
                if (!strcmp(kind_parent_options[i], t.kind->name))
                    child.given[i] = argv[argc - 1];
            if (!(ct.kind = kind_find(r, child.given, K_LIST)) ||
                kind_target_fill(ctl, &ct, child.given, NULL, 0))
                continue;
            printf("\n%s:\n", ct.kind->plural);
            enum ctl_output was = ctl->output;
            ctl->output = OUT_TABLE;
            if (list_all(ctl, &ct, &child, &list, &raw) == CTL_OK)
                ctl_print(ctl, list, ct.kind->view, NULL);
            ctl->output = was;
            json_decref(list);
            ctl_answer_release(&raw);
        }
    }
    return rc;
}

/* Sets body's value at a dotted path to name, making the objects on the way. */
static void set_name(json_t *body, const char *path, const char *name)
{
    const char *dot;
    while ((dot = strchr(path, '.'))) {
        char part[64];
        json_t *next;
        snprintf(part, sizeof(part), "%.*s", (int)(dot - path), path);
        if (!json_is_object(next = json_object_get(body, part)))
            json_object_set_new(body, part, next = json_object());
        body = next;
        path = dot + 1;
    }
    json_object_set_new(body, path, json_string(name));
}

/* What an answer shows only once: with -o name (a name on stdout, for a script) they go to
 * stderr rather than nowhere. */
static void note_secrets(const struct ctl_answer *answer)
{
    static const char *const once[] = {"bootstrap_token.install_url", "private_key",
                                       "chef_key.private_key", "token"};
    json_t *value = json_loadb(answer->body.data, answer->body.len, JSON_DECODE_ANY, NULL);
    for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
        if (json_is_string(ctl_dig(value, once[i])))
            fprintf(stderr, "purserctl: note: %s, shown this once:\n%s\n", once[i],
                    json_string_value(ctl_dig(value, once[i])));
    json_decref(value);
}

/* Sends body to the kind's path with method (as YAML to the document API, which takes only
 * that), printing the answer as print_one does. */
static int send_body(struct ctl *ctl, const struct target *t, const char *method,
                     const json_t *body, const char *content_type, const char *if_match,
                     const char *typed)
{
    const char *template = !strcmp(method, "POST") ? t->kind->create : t->kind->item;
    struct ctl_request request = {.method = method,
                                  .template = template,
                                  .values = t->values,
                                  .content_type = content_type,
                                  .if_match = if_match};
    struct buf text = BUF_INIT;
    struct ctl_answer answer = {0};
    char *json = NULL;
    int rc = CTL_OK;

    if (kind_is_document_api(t->kind))
        rc = ctl_request_yaml(&request, &text, body);
    else if ((json = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY))) {
        request.body = json;
        request.body_len = strlen(json);
    }
    if (!rc && !(rc = ctl_call(ctl, &request, &answer))) {
        if (ctl->output == OUT_NAME)
            note_secrets(&answer);
        rc = print_one(ctl, t->kind, &answer, typed);
    }
    ctl_answer_release(&answer);
    free(json);
    buf_release(&text);
    return rc;
}

int cmd_create(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("create");
    struct verb_options o;
    struct target t;
    json_t *body = NULL;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (!rc)
        rc = target_of(ctl, self, K_CREATE, &o, argv + first, argc - first, &t);
    if (!rc && o.file)
        rc = ctl_read_value(&body, o.file);
    if (!rc) {
        if (!body)
            body = json_object();
        if (t.kind->name_field && argc - first - 1 > kind_names_wanted(t.kind, K_CREATE))
            set_name(body, t.kind->name_field, argv[argc - 1]);
        rc = send_body(ctl, &t, "POST", body, "application/json", NULL, argv[argc - 1]);
        json_decref(body);
    }
    return rc;
}

int cmd_replace(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("replace");
    struct verb_options o;
    struct target t;
    json_t *body = NULL;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (!rc)
        rc = target_of(ctl, self, K_REPLACE, &o, argv + first, argc - first, &t);
    if (!rc && !o.file)
        rc = ctl_usage(self, "-f FILE: the whole new %s", t.kind->name);
    if (!rc)
        rc = ctl_read_value(&body, o.file);
    if (!rc) {
        rc = send_body(ctl, &t, "PUT", body, "application/json", o.if_match, argv[argc - 1]);
        if (rc == CTL_CONFLICT && kind_is_conditional(t.kind) && !o.if_match &&
            !ctl_dig(body, "metadata.revision"))
            fprintf(stderr,
                    "purserctl: a %s is replaced at the revision it was read at: keep "
                    "metadata.revision in the file (purserctl get %s %s -o yaml), or give "
                    "--if-match REVISION, or --if-match '*' to replace whatever is there\n",
                    t.kind->name, t.kind->name, argv[argc - 1]);
        json_decref(body);
    }
    return rc;
}

int cmd_patch(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("patch");
    struct verb_options o;
    struct target t;
    json_t *body = NULL;
    json_error_t error;
    int first, rc = verb_parse(self, argc, argv, &o, &first);

    if (!rc)
        rc = target_of(ctl, self, K_PATCH, &o, argv + first, argc - first, &t);
    if (!rc && !!o.patch == !!o.file)
        rc = ctl_usage(self, "give the merge patch: -p JSON or -f FILE");
    if (!rc && o.patch && !(body = json_loads(o.patch, 0, &error)))
        rc = ctl_error(CTL_INVALID, "-p: %s", error.text);
    if (!rc && o.file)
        rc = ctl_read_value(&body, o.file);
    if (!rc) {
        /* as kubectl patch: a merge patch applies to whatever is there unless --if-match says
         * which revision (the server merges it in the write's own transaction) */
        if (!o.if_match && kind_is_conditional(t.kind) && !ctl_dig(body, "metadata.revision"))
            o.if_match = "*";
        rc = send_body(ctl, &t, "PATCH", body, "application/merge-patch+json", o.if_match,
                       argv[argc - 1]);
        json_decref(body);
    }
    return rc;
}

/* What a delete must say outright: which revision (never "the newest" by default), and --yes
 * for a purge of the whole document store. */
static int delete_guard(const struct ctl_command *self, const struct kind *k, unsigned verb,
                        const struct verb_options *o)
{
    if (k && k->parents && strstr(k->parents, "revision") && !o->given[KIND_PARENT_REVISION])
        return ctl_usage(self, "delete %s: say which revision (--revision N)", k->plural);
    if (k && verb == K_DELETE_ALL && !k->parents && !o->yes)
        return ctl_usage(self,
                         "delete %s --all deletes every one of the organization's %s: "
                         "add --yes",
                         k->plural, k->plural);
    return CTL_OK;
}

int cmd_delete(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("delete");
    struct verb_options o;
    struct target t;
    struct ctl_answer answer;
    int first, rc = verb_parse(self, argc, argv, &o, &first);
    unsigned verb;

    if (!rc) {
        verb = o.all ? K_DELETE_ALL : K_DELETE;
        if (o.all && argc - first != 1)
            rc = ctl_usage(self, "--all deletes every %s: no names with it", argv[first]);
    }
    if (!rc)
        rc = delete_guard(self, kind_find(argv[first], o.given, verb), verb, &o);
    if (!rc && o.all) {
        memset(&t, 0, sizeof(t));
        if (!(t.kind = kind_find(argv[first], o.given, K_DELETE_ALL)) ||
            !(t.kind->verbs & K_DELETE_ALL))
            rc = ctl_usage(self, "--all works on revisions (purge) and tags");
        if (!rc)
            rc = kind_target_fill(ctl, &t, o.given, NULL, 0);
    } else if (!rc) {
        rc = target_of(ctl, self, verb, &o, argv + first, argc - first, &t);
    }
    if (!rc) {
        struct ctl_request request = {.method = "DELETE",
                                      .template = o.all ? t.kind->list : t.kind->item,
                                      .values = t.values};
        request.if_match = o.if_match;
        if (!strcmp(t.kind->name, "organization") && o.query)
            request.query = o.query;
        if ((rc = ctl_call(ctl, &request, &answer)) == CTL_OK && !ctl->quiet) {
            if (ctl->output == OUT_JSON && answer.body.len)
                printf("%s\n", answer.body.data);
            else if (ctl->output == OUT_NAME)
                printf("%s/%s\n", t.kind->name, o.all ? "*" : argv[argc - 1]);
            else
                printf("%s %s deleted\n", t.kind->name, o.all ? "(all)" : argv[argc - 1]);
        }
        ctl_answer_release(&answer);
    }
    return rc;
}
