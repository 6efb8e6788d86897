/* policy_lock.h: validating a Policyfile lock the way the Chef Infra Server does.
 *
 * Checks, in Chef's order, with Chef's messages (each the text of a 400):
 *   revision_id  "Field 'revision_id' missing" / "Field 'revision_id' invalid"
 *                (a string matching ^[.[:alnum:]_:-]{1,255}$)
 *   name         "Field 'name' missing" / "Field 'name' invalid" (same pattern)
 *   run_list     "Field 'run_list' missing" / "Field 'run_list' is not a valid run list"
 *                (an array of "recipe[cookbook::recipe]" strings)
 *   cookbook_locks "Field 'cookbook_locks' missing" / "Field 'cookbook_locks' invalid"
 *                (an object keyed by cookbook names ^[.[:alnum:]_-]{1,255}$, each an object with)
 *     identifier "Field 'identifier' missing" / "Field 'identifier' invalid"
 *     dotted_decimal_identifier (optional) "Field 'dotted_decimal_identifier' is not a valid
 * version" version    "Field 'version' missing" / "Field 'version' is not a valid version" (1 to 3
 * dot-separated integers, each at most 2^63-1) and last, the name must be the one in the URL:
 * "Field 'name' invalid". Every other field is kept as it came.
 */
#ifndef PURSER_POLICY_LOCK_H
#define PURSER_POLICY_LOCK_H

#include "base/err.h"

#include <jansson.h>

/* The largest lock body accepted (Chef's limit); larger is 413. */
#define POLICY_LOCK_MAX_BYTES 2000000

/* 0 when lock (borrowed) is a valid lock for the policy named url_name; PURSER_EINVAL with
 * Chef's message otherwise. */
int policy_lock_validate(const json_t *lock, const char *url_name, struct purser_error *err);

/* 1 when name matches ^[.[:alnum:]_:-]{1,255}$ (policy, group and revision names). */
int policy_name_ok(const char *name);

/* 1 when name matches ^[.[:alnum:]_-]{1,255}$ (cookbook names). */
int cookbook_name_ok(const char *name);

/* 1 when text is a Chef cookbook version: 1 to 3 dot-separated integers <= 2^63-1. */
int policy_version_ok(const char *text);

#endif
