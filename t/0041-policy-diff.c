/* 0041-policy-diff: differences between two locks, on known pairs in t/data/policy-diff/
 * (`from`, `to`, and the `expected` answer, written by hand). */
#include "cases.h"
#include "policy/policy_diff.h"
#include "tap.h"

int main(int argc, char **argv)
{
    char **names;
    size_t count;
    tap_init(argc, argv);
    count = cases_list("policy-diff", &names);
    for (size_t i = 0; i < count; i++) {
        char *texts[3];
        const char *files[] = {"from", "to", "expected"};
        json_t *json[3] = {NULL, NULL, NULL}, *got = NULL;
        for (int f = 0; f < 3; f++) {
            texts[f] = cases_read("policy-diff", names[i], files[f], NULL);
            json[f] = texts[f] ? json_loads(texts[f], 0, NULL) : NULL;
        }
        if (tap_ok(json[0] && json[1] && json[2], "%s: case files", names[i])) {
            got = policy_diff(json[0], json[1]);
            if (!tap_ok(json_equal(got, json[2]), "%s: the expected difference", names[i])) {
                char *text = json_dumps(got, JSON_INDENT(2));
                tap_diag("got %s", text);
                free(text);
            }
        }
        json_decref(got);
        for (int f = 0; f < 3; f++) {
            json_decref(json[f]);
            free(texts[f]);
        }
    }
    cases_free(names, count);
    tap_ok(count >= 2, "%zu cases", count);
    return tap_done();
}
