/* 2002-json-schema: the official JSON-Schema-Test-Suite's draft 4 cases, as Debian ships them
 * in libtest-json-schema-acceptance-perl, run through lib/jsonschema: every test of every
 * file but refRemote.json (it needs a network) and the optional/ folder. A test passes when
 * the schema compiles and the instance's validity is what the suite says. */
#include "codec/jsonschema.h"
#include "config/config.h"
#include "tap.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUITE "/usr/share/perl5/auto/share/dist/Test-JSON-Schema-Acceptance/tests/draft4"

static int compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_file(const char *dir, const char *name, size_t *total)
{
    char path[1024];
    json_error_t jerr;
    json_t *groups, *group;
    size_t g;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!tap_ok((groups = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr)) != NULL,
                "%s reads", name))
        return;
    json_array_foreach (groups, g, group) {
        const char *what = json_string_value(json_object_get(group, "description"));
        struct jsonschema *schema = NULL;
        struct purser_error err;
        json_t *test;
        size_t t;
        int compiled = jsonschema_compile(&schema, json_object_get(group, "schema"), &err) == 0;
        json_array_foreach (json_object_get(group, "tests"), t, test) {
            int expected = json_is_true(json_object_get(test, "valid"));
            int got =
                compiled && jsonschema_validate(schema, json_object_get(test, "data"), NULL, 0);
            (*total)++;
            if (!tap_ok(compiled && got == expected, "%s: %s: %s", name, what,
                        json_string_value(json_object_get(test, "description"))))
                tap_diag("  %s",
                         compiled ? (expected ? "valid, judged invalid" : "invalid, judged valid")
                                  : err.message);
        }
        jsonschema_free(schema);
    }
    json_decref(groups);
}

int main(int argc, char **argv)
{
    const char *dir = getenv("PURSER_JSON_SCHEMA_SUITE");
    char *names[128];
    size_t n = 0, total = 0;
    struct dirent *entry;
    DIR *d;

    tap_init(argc, argv);
    if (!dir)
        dir = SUITE;
    if (!(d = opendir(dir))) {
        tap_ok(0, "the draft 4 suite is at %s (libtest-json-schema-acceptance-perl)", dir);
        return tap_done();
    }
    while ((entry = readdir(d)) && n < 128) {
        size_t len = strlen(entry->d_name);
        if (len > 5 && strcmp(entry->d_name + len - 5, ".json") == 0 &&
            strcmp(entry->d_name, "refRemote.json") != 0)
            names[n++] = strdup(entry->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), compare);
    tap_ok(n >= 25, "%zu draft 4 files found", n);
    for (size_t i = 0; i < n; i++) {
        run_file(dir, names[i], &total);
        free(names[i]);
    }
    tap_ok(total >= 500, "%zu suite tests run", total);
    {
        /* found by fuzzing (t/fuzz/corpus/jsonschema/crash-ref-to-itself): a schema whose $ref
         * leads back to itself without going into the instance overflowed the stack. Now the
         * loop is a failure of that $ref: alone it makes the instance invalid; beside a
         * branch that holds ({}), anyOf still passes. */
        const char *loops[] = {"{\"$ref\": \"#\"}", "{\"anyOf\": [{\"$ref\": \"\"}, {}]}"};
        const int want[] = {0, 1};
        for (size_t i = 0; i < sizeof(loops) / sizeof(loops[0]); i++) {
            json_t *schema = json_loads(loops[i], 0, NULL), *errors = json_array();
            json_t *one = json_real(1.5);
            struct jsonschema *s = NULL;
            struct purser_error err;
            int compiled = !jsonschema_compile(&s, schema, &err);
            int ok = compiled ? jsonschema_validate(s, one, errors, 10) : -1;
            const char *msg =
                json_string_value(json_object_get(json_array_get(errors, 0), "message"));
            tap_ok(compiled && ok == want[i] &&
                       (want[i] || (msg && strstr(msg, "refers to itself"))),
                   "%s: %s (%s), no stack overflow", loops[i], ok ? "valid" : "invalid",
                   msg ? msg : "no message");
            jsonschema_free(s);
            json_decref(schema);
            json_decref(errors);
            json_decref(one);
        }
    }
    return tap_done();
}
