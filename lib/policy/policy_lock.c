/* policy_lock.c: Chef's Policyfile lock validation rules and messages. */
#include "policy/policy_lock.h"

#include <ctype.h>
#include <string.h>

static int chars_ok(const char *s, size_t max, const char *extra)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
            return 0;
    return 1;
}

int policy_name_ok(const char *name)
{
    return chars_ok(name, 255, "._:-");
}

int cookbook_name_ok(const char *name)
{
    return chars_ok(name, 255, "._-");
}

int policy_version_ok(const char *text)
{
    static const char max[] = "9223372036854775807";
    int parts = 0;
    const char *p = text;
    while (1) {
        const char *start = p;
        size_t digits;
        while (*p >= '0' && *p <= '9')
            p++;
        digits = (size_t)(p - start);
        if (digits == 0 || digits > sizeof(max) - 1 ||
            (digits == sizeof(max) - 1 && strncmp(start, max, digits) > 0))
            return 0;
        parts++;
        if (*p == '\0')
            return parts <= 3;
        if (*p != '.' || parts == 3)
            return 0;
        p++;
    }
}

/* "recipe[cookbook::recipe]" */
static int run_list_item_ok(const char *item)
{
    const char *open = "recipe[", *sep, *end;
    char part[256];
    size_t n;
    if (strncmp(item, open, strlen(open)) != 0)
        return 0;
    item += strlen(open);
    sep = strstr(item, "::");
    end = strchr(item, ']');
    if (!sep || !end || end[1] != '\0' || sep > end)
        return 0;
    n = (size_t)(sep - item);
    if (n == 0 || n >= sizeof(part))
        return 0;
    memcpy(part, item, n);
    part[n] = '\0';
    if (!cookbook_name_ok(part))
        return 0;
    n = (size_t)(end - sep - 2);
    if (n == 0 || n >= sizeof(part))
        return 0;
    memcpy(part, sep + 2, n);
    part[n] = '\0';
    return cookbook_name_ok(part);
}

static int field_missing(struct purser_error *err, const char *field)
{
    return purser_error_set(err, PURSER_EINVAL, "Field '%s' missing", field);
}

static int field_invalid(struct purser_error *err, const char *field)
{
    return purser_error_set(err, PURSER_EINVAL, "Field '%s' invalid", field);
}

static int check_name_field(const json_t *lock, const char *field, struct purser_error *err)
{
    const json_t *v = json_object_get(lock, field);
    if (!v)
        return field_missing(err, field);
    if (!json_is_string(v) || !policy_name_ok(json_string_value(v)))
        return field_invalid(err, field);
    return 0;
}

static int check_run_list(const json_t *lock, struct purser_error *err)
{
    const json_t *list = json_object_get(lock, "run_list");
    size_t i;
    json_t *item;
    if (!list)
        return field_missing(err, "run_list");
    if (!json_is_array(list))
        return purser_error_set(err, PURSER_EINVAL, "Field 'run_list' is not a valid run list");
    json_array_foreach (list, i, item) {
        if (!json_is_string(item) || !run_list_item_ok(json_string_value(item)))
            return purser_error_set(err, PURSER_EINVAL, "Field 'run_list' is not a valid run list");
    }
    return 0;
}

static int check_version(const json_t *lock, const char *field, int optional,
                         struct purser_error *err)
{
    const json_t *v = json_object_get(lock, field);
    if (!v)
        return optional ? 0 : field_missing(err, field);
    if (!json_is_string(v) || !policy_version_ok(json_string_value(v)))
        return purser_error_set(err, PURSER_EINVAL, "Field '%s' is not a valid version", field);
    return 0;
}

static int check_cookbook_locks(const json_t *lock, struct purser_error *err)
{
    const json_t *locks = json_object_get(lock, "cookbook_locks");
    const char *name;
    json_t *entry;
    int rc = 0;
    if (!locks)
        return field_missing(err, "cookbook_locks");
    if (!json_is_object(locks))
        return field_invalid(err, "cookbook_locks");
    json_object_foreach ((json_t *)locks, name, entry) {
        if (!cookbook_name_ok(name) || !json_is_object(entry))
            rc = field_invalid(err, "cookbook_locks");
        if (!rc)
            rc = check_name_field(entry, "identifier", err);
        if (!rc)
            rc = check_version(entry, "dotted_decimal_identifier", 1, err);
        if (!rc)
            rc = check_version(entry, "version", 0, err);
        if (rc)
            break;
    }
    return rc;
}

int policy_lock_validate(const json_t *lock, const char *url_name, struct purser_error *err)
{
    int rc;
    if (!json_is_object(lock))
        return purser_error_set(err, PURSER_EINVAL, "invalid JSON");
    rc = check_name_field(lock, "revision_id", err);
    if (!rc)
        rc = check_name_field(lock, "name", err);
    if (!rc)
        rc = check_run_list(lock, err);
    if (!rc)
        rc = check_cookbook_locks(lock, err);
    if (!rc && url_name && strcmp(json_string_value(json_object_get(lock, "name")), url_name) != 0)
        rc = purser_error_set(err, PURSER_EINVAL, "Field 'name' invalid : %s does not match %s",
                              url_name, json_string_value(json_object_get(lock, "name")));
    return rc;
}
