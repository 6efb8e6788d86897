/* git.c: purserctl git: the clone URL of the organization's history repository or of a
 * cluster's catalog, after the server's access check (which brings the repository up to date). */
#include "ctl.h"

#include <stdio.h>
#include <string.h>

int cmd_git(struct ctl *ctl, int argc, char **argv)
{
    const char *cluster = NULL;
    struct ctl_answer answer;
    int rc;
    if (argc == 4 && strcmp(argv[1], "check") == 0 && strcmp(argv[2], "--cluster") == 0)
        cluster = argv[3];
    else if (argc != 2 || strcmp(argv[1], "check") != 0)
        return ctl_usage(ctl_command_find("git"), NULL);
    const char *values[] = {cluster, NULL};
    struct ctl_request request = {.method = "GET",
                                  .template =
                                      cluster ? ORG "/clusters/{id}/git-access" : ORG "/git-access",
                                  .values = cluster ? values : NULL,
                                  .query = "service=git-upload-pack"};
    if ((rc = ctl_call(ctl, &request, &answer)) == CTL_OK) {
        if (cluster)
            printf("%s/git/%s/catalogs/%s.git\n", ctl->context.url, ctl->context.organization,
                   cluster);
        else
            printf("%s/git/%s.git\n", ctl->context.url, ctl->context.organization);
    }
    ctl_answer_release(&answer);
    return rc;
}
