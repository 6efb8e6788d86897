/* collect.c: purserctl collect, the organization's collection of policy revisions no group
 * points at, the cookbook artifacts no remaining revision names and the files only they used
 * (POST collect_policies). */
#include "ctl.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* The request's body from the command line into body ({keep, dry_run?, policies?}). */
static int collect_options(const struct ctl_command *self, int argc, char **argv, json_t *body)
{
    static const struct option options[] = {{"keep", required_argument, NULL, 'k'},
                                            {"dry-run", no_argument, NULL, 'n'},
                                            {"policy", required_argument, NULL, 'p'},
                                            {NULL, 0, NULL, 0}};
    json_t *policies = json_array();
    char *end;
    int opt;
    json_object_set_new(body, "policies", policies);
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        long keep;
        switch (opt) {
        case 'k':
            keep = strtol(optarg, &end, 10);
            if (!*optarg || *end || keep < 0)
                return ctl_usage(self, "--keep takes a number from 0, not %s", optarg);
            json_object_set_new(body, "keep", json_integer(keep));
            break;
        case 'n': json_object_set_new(body, "dry_run", json_true()); break;
        case 'p': json_array_append_new(policies, json_string(optarg)); break;
        default: return ctl_usage(self, NULL);
        }
    }
    if (!json_object_get(body, "keep") || optind != argc)
        return ctl_usage(self, "--keep N says how many of each policy's newest revisions stay");
    if (!json_array_size(policies))
        json_object_del(body, "policies");
    return CTL_OK;
}

/* What went (or would go), a line each, then the counts. */
static void print_collected(const json_t *answer)
{
    int dry = json_is_true(json_object_get(answer, "dry_run"));
    const json_t *revisions = json_object_get(answer, "revisions");
    const json_t *artifacts = json_object_get(answer, "cookbook_artifacts");
    const json_t *files = json_object_get(answer, "files");
    const char *verb = dry ? "would remove" : "removed";
    size_t i;
    json_t *item;
    json_array_foreach (revisions, i, item)
        printf("%s revision %s/%s\n", verb, ctl_text(item, "policy"),
               ctl_text(item, "revision_id"));
    json_array_foreach (artifacts, i, item)
        printf("%s cookbook artifact %s/%s\n", verb, ctl_text(item, "name"),
               ctl_text(item, "identifier"));
    json_array_foreach (files, i, item)
        printf("%s file %s\n", verb, json_string_value(item));
    printf("%zu revision(s), %zu cookbook artifact(s), %zu file(s) %s\n",
           json_array_size(revisions), json_array_size(artifacts), json_array_size(files),
           dry ? "would be removed" : "removed");
}

/* -o name: kind/name of each thing that went. */
static void print_names(const json_t *answer)
{
    size_t i;
    json_t *item;
    json_array_foreach (json_object_get(answer, "revisions"), i, item)
        printf("policy-revision/%s/%s\n", ctl_text(item, "policy"), ctl_text(item, "revision_id"));
    json_array_foreach (json_object_get(answer, "cookbook_artifacts"), i, item)
        printf("cookbook-artifact/%s/%s\n", ctl_text(item, "name"), ctl_text(item, "identifier"));
    json_array_foreach (json_object_get(answer, "files"), i, item)
        printf("file/%s\n", json_string_value(item));
}

int cmd_collect(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_command *self = ctl_command_find("collect");
    json_t *body = json_object(), *answer = NULL;
    char *text = NULL;
    int rc = collect_options(self, argc, argv, body);
    if (!rc && !(text = json_dumps(body, JSON_COMPACT)))
        rc = ctl_error(CTL_FAILED, "out of memory");
    if (!rc) {
        struct ctl_request request = {.method = "POST",
                                      .template = ORG "/collect_policies",
                                      .content_type = "application/json",
                                      .body = text,
                                      .body_len = strlen(text)};
        rc = ctl_call_json(ctl, &request, &answer);
    }
    if (!rc && ctl->output == OUT_NAME)
        print_names(answer);
    else if (!rc && (ctl->output == OUT_JSON || ctl->output == OUT_YAML))
        rc = ctl_print(ctl, answer, NULL, NULL);
    else if (!rc)
        print_collected(answer);
    free(text);
    json_decref(body);
    json_decref(answer);
    return rc;
}
