/* policy_lock: a JSON body as the Policyfile API reads it (duplicate keys refused), checked
 * as a Policyfile lock; the JSON syntax checker must agree with jansson on what is JSON. */
#include "policy/policy_lock.h"
#include "codec/json_check.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    struct purser_error err;
    json_t *body =
        json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    int valid = json_text_valid((const char *)data, size);
    if (body && !valid && memchr(data, 0, size) == NULL)
        abort(); /* jansson read it: the checker must accept it */
    if (body) {
        policy_lock_validate(body, "fuzz", &err);
        policy_lock_validate(body, json_string_value(json_object_get(body, "name")), &err);
    }
    json_decref(body);
    return 0;
}
