/* rbac: the RBAC policy file, and a decision under what parses. */
#include "auth/rbac.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rbac_policy *policy = NULL;
    struct purser_error err;
    if (rbac_policy_parse(&policy, (const char *)data, size, &err))
        return 0;
    {
        const char *roles[] = {"admin", "reader"};
        struct rbac_subject who = {.is_user = 1, .name = "u", .roles = roles, .role_count = 2};
        struct rbac_target target = {.user = "u"};
        enum rbac_scope scope;
        rbac_decide(policy, &who, &target, "read_node", &scope, &err);
        rbac_role_allows(policy, "admin", "read_node");
    }
    rbac_policy_free(policy);
    return 0;
}
