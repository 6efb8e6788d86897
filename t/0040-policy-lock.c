/* 0040-policy-lock: Policyfile lock validation, driven by t/data/policy-lock/: each case is
 * an `input` lock for the policy named "web" and an `error` file holding Chef's exact message,
 * or "ok". */
#include "cases.h"
#include "policy/policy_lock.h"
#include "tap.h"

int main(int argc, char **argv)
{
    char **names;
    size_t count;
    tap_init(argc, argv);

    count = cases_list("policy-lock", &names);
    for (size_t i = 0; i < count; i++) {
        size_t len;
        char *input = cases_read("policy-lock", names[i], "input", &len);
        char *want = cases_read("policy-lock", names[i], "error", NULL);
        json_error_t jerr;
        json_t *lock = input ? json_loadb(input, len, 0, &jerr) : NULL;
        struct purser_error err;
        int rc;
        if (!tap_ok(lock && want, "%s: case files", names[i]))
            goto next;
        want[strcspn(want, "\n")] = '\0';
        purser_error_clear(&err);
        rc = policy_lock_validate(lock, "web", &err);
        if (strcmp(want, "ok") == 0) {
            if (!tap_ok(rc == 0, "%s: accepted", names[i]))
                tap_diag("  %s", err.message);
        } else {
            tap_is_int(rc, PURSER_EINVAL, "%s: refused", names[i]);
            tap_is_str(err.message, want, "%s: with Chef's message", names[i]);
        }
    next:
        json_decref(lock);
        free(input);
        free(want);
    }
    cases_free(names, count);
    tap_ok(count >= 30, "%zu cases", count);

    tap_ok(policy_version_ok("0") && policy_version_ok("1.2") && policy_version_ok("10.20.30"),
           "versions of 1 to 3 parts");
    tap_ok(!policy_version_ok("") && !policy_version_ok(".1") && !policy_version_ok("1.") &&
               !policy_version_ok("-1") && !policy_version_ok("1.2.3.4"),
           "empty parts, signs and a fourth part are refused");
    return tap_done();
}
