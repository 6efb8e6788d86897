/* cases.h: data-driven test cases for C tests: t/data/<suite>/<case>/<file>.
 *
 *   char **names; size_t n = cases_list("yaml", &names);   // sorted case names
 *   char *text = cases_read("yaml", names[i], "input", &len); // NULL when absent; free() it
 *   cases_free(names, n);
 * The data folder is $PURSER_TESTDATA, else t/data (tests run from the repository root).
 */
#ifndef PURSER_CASES_H
#define PURSER_CASES_H

#include "config/config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cases_dir(void)
{
    const char *dir = getenv("PURSER_TESTDATA");
    return dir ? dir : "t/data";
}

static int cases_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t cases_list(const char *suite, char ***out)
{
    char path[1024];
    size_t n = 0, cap = 16;
    struct dirent *entry;
    DIR *dir;
    *out = malloc(cap * sizeof(**out));
    snprintf(path, sizeof(path), "%s/%s", cases_dir(), suite);
    if (!*out || !(dir = opendir(path)))
        return 0;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] == '.')
            continue;
        if (n == cap)
            *out = realloc(*out, (cap *= 2) * sizeof(**out));
        (*out)[n++] = strdup(entry->d_name);
    }
    closedir(dir);
    qsort(*out, n, sizeof(**out), cases_compare);
    return n;
}

static char *cases_read(const char *suite, const char *name, const char *file, size_t *len)
{
    char path[1024], *text = NULL;
    size_t ignored;
    struct purser_error err;
    snprintf(path, sizeof(path), "%s/%s/%s/%s", cases_dir(), suite, name, file);
    if (file_read_all(&text, len ? len : &ignored, path, 1 << 26, &err))
        return NULL;
    return text;
}

static void cases_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

#endif
