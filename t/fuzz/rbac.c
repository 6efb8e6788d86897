/* rbac: the RBAC policy file, and a decision under what parses. */
#include "auth/rbac.h"
#include "fuzz.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rbac_policy *policy = NULL;
    struct purser_error err;
    if (rbac_policy_parse(&policy, (const char *)data, size, &err))
        return 0;
    {
        const struct rbac_grant grants[] = {{"admin", "dev*,staging"}, {"reader", NULL}};
        struct rbac_subject who = {.is_user = 1, .name = "u", .grants = grants, .grant_count = 2};
        struct rbac_target target = {.user = "u", .policy_group = "prod"};
        enum rbac_scope scope;
        rbac_decide(policy, &who, &target, "read_node", &scope, &err);
        char *limits = NULL;
        rbac_group_limits(policy, &who, "write_policy_group", &limits);
        free(limits);
        rbac_role_allows(policy, "admin", "read_node");
    }
    rbac_policy_free(policy);
    return 0;
}
