/* cookbook.c: purserctl cookbook: an artifact uploaded as chef push does (its files through a
 * sandbox, then its manifest), or an artifact's files downloaded back into a folder. */
#include "ctl.h"

#include "base/crypto.h"
#include "config/config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COOKBOOK_FILE_MAX ((size_t)1 << 30) /* the largest file read whole */
#define COOKBOOK_DEPTH_MAX 32               /* folders inside folders, at most */

/* A file of the cookbook: its path from the folder ('/'-separated) and its MD5. */
struct cookbook_file {
    const char *path; /* in the ctl's arena */
    char checksum[33];
    size_t size;
};

struct cookbook {
    struct ctl *ctl;
    const char *dir;
    struct cookbook_file *files; /* sorted by path; freed by cookbook_release */
    size_t count, cap;
};

/* The folders of a cookbook that Chef names a segment; other files are its root files. */
static const char *const segments[] = {"attributes", "definitions", "files",     "libraries",
                                       "providers",  "recipes",     "resources", "templates"};

static void cookbook_release(struct cookbook *cb)
{
    free(cb->files);
    cb->files = NULL;
    cb->count = cb->cap = 0;
}

/* ---- reading the folder ------------------------------------------------------------------ */

/* Reads the file at path (from the folder), keeping its MD5 and size. */
static int file_add(struct cookbook *cb, const char *path)
{
    const char *full = ctl_printf(cb->ctl, "%s/%s", cb->dir, path);
    struct purser_error err;
    struct cookbook_file *file;
    char *content = NULL;
    size_t len = 0;

    if (file_read_all(&content, &len, full, COOKBOOK_FILE_MAX, &err))
        return ctl_error(CTL_INVALID, "%s", err.message);
    if (cb->count == cb->cap) {
        size_t cap = cb->cap ? 2 * cb->cap : 64;
        void *grown = realloc(cb->files, cap * sizeof(*cb->files));
        if (!grown) {
            free(content);
            return ctl_error(CTL_FAILED, "out of memory");
        }
        cb->files = grown;
        cb->cap = cap;
    }
    file = &cb->files[cb->count++];
    file->path = path;
    file->size = len;
    crypto_md5_hex(file->checksum, content, len);
    free(content);
    return CTL_OK;
}

/* Whether the entry is a folder to walk into: symbolic links to folders are not followed. */
static int entry_kind(const char *full, int *is_dir, int *is_file)
{
    struct stat st;
    if (lstat(full, &st))
        return -1;
    *is_dir = S_ISDIR(st.st_mode);
    *is_file =
        S_ISREG(st.st_mode) || (S_ISLNK(st.st_mode) && !stat(full, &st) && S_ISREG(st.st_mode));
    return 0;
}

/* Adds every file under the folder's relative path (NULL: the folder), dot-files left out. */
static int folder_walk(struct cookbook *cb, const char *relative, int depth)
{
    const char *here = relative ? ctl_printf(cb->ctl, "%s/%s", cb->dir, relative) : cb->dir;
    DIR *dir = NULL;
    struct dirent *entry;
    int rc = CTL_OK;

    if (depth > COOKBOOK_DEPTH_MAX)
        return ctl_error(CTL_INVALID, "%s: folders nested too deep", here);
    if (!(dir = opendir(here)))
        return ctl_error(CTL_INVALID, "cannot read %s: %s", here, strerror(errno));
    while (!rc && (entry = readdir(dir))) {
        const char *path;
        int is_dir = 0, is_file = 0;
        if (entry->d_name[0] == '.')
            continue;
        path = relative ? ctl_printf(cb->ctl, "%s/%s", relative, entry->d_name)
                        : ctl_printf(cb->ctl, "%s", entry->d_name);
        if (entry_kind(ctl_printf(cb->ctl, "%s/%s", cb->dir, path), &is_dir, &is_file))
            rc = ctl_error(CTL_INVALID, "%s/%s: %s", cb->dir, path, strerror(errno));
        else if (is_dir)
            rc = folder_walk(cb, path, depth + 1);
        else if (is_file)
            rc = file_add(cb, path);
    }
    closedir(dir);
    return rc;
}

static int file_order(const void *a, const void *b)
{
    return strcmp(((const struct cookbook_file *)a)->path, ((const struct cookbook_file *)b)->path);
}

static int cookbook_read(struct cookbook *cb)
{
    int rc = folder_walk(cb, NULL, 0);
    if (!rc && !cb->count)
        rc = ctl_error(CTL_INVALID, "%s: no files to upload", cb->dir);
    if (!rc)
        qsort(cb->files, cb->count, sizeof(*cb->files), file_order);
    return rc;
}

/* ---- the manifest ------------------------------------------------------------------------ */

/* The quoted string at *p ('...' or "..."), moving *p past it; NULL when there is none. */
static char *quoted_take(struct ctl *ctl, const char **p)
{
    const char *s = *p + strspn(*p, " \t(,"), *end;
    if (*s != '\'' && *s != '"')
        return NULL;
    if (!(end = strchr(s + 1, *s)))
        return NULL;
    *p = end + 1;
    return ctl_printf(ctl, "%.*s", (int)(end - s - 1), s + 1);
}

/* What metadata.rb says of name, version and depends (it is Ruby: only these simple lines). */
static json_t *metadata_rb_parse(struct ctl *ctl, const char *text)
{
    json_t *metadata = json_pack("{s:{}}", "dependencies");

    for (const char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line + strspn(line, " \t");
        size_t word = strcspn(p, " \t(");
        int is_name = word == 4 && !strncmp(p, "name", 4);
        int is_version = word == 7 && !strncmp(p, "version", 7);
        int is_depends = word == 7 && !strncmp(p, "depends", 7);
        char *value, *constraint;

        p += word;
        if ((!is_name && !is_version && !is_depends) || !(value = quoted_take(ctl, &p)))
            continue;
        if (is_depends) {
            constraint = quoted_take(ctl, &p);
            json_object_set_new(json_object_get(metadata, "dependencies"), value,
                                json_string(constraint ? constraint : ">= 0.0.0"));
        } else
            json_object_set_new(metadata, is_name ? "name" : "version", json_string(value));
    }
    return metadata;
}

/* The cookbook's metadata: metadata.json as it is, else what metadata.rb says, else {}. */
static int metadata_read(struct cookbook *cb, json_t **out)
{
    const char *json_path = ctl_printf(cb->ctl, "%s/metadata.json", cb->dir);
    const char *rb_path = ctl_printf(cb->ctl, "%s/metadata.rb", cb->dir);
    struct buf text = BUF_INIT;
    int rc = CTL_OK;

    *out = NULL;
    if (!access(json_path, F_OK)) {
        if (!(rc = ctl_read_value(out, json_path)) && !json_is_object(*out))
            rc = ctl_error(CTL_INVALID, "%s: not an object", json_path);
    } else if (!access(rb_path, F_OK) && !(rc = ctl_read_file(&text, rb_path)))
        *out = metadata_rb_parse(cb->ctl, buf_cstr(&text));
    buf_release(&text);
    if (!rc && !*out)
        *out = json_object();
    if (!rc && !json_is_object(json_object_get(*out, "dependencies")))
        json_object_set_new(*out, "dependencies", json_object());
    return rc;
}

/* The folder's own name (of its real path: "." names the folder it is). */
static const char *folder_name(struct ctl *ctl, const char *dir)
{
    char *real = realpath(dir, NULL);
    const char *slash, *name;
    if (!real)
        return dir;
    slash = strrchr(real, '/');
    name = ctl_printf(ctl, "%s", slash && slash[1] ? slash + 1 : real);
    free(real);
    return name;
}

/* ChefDK's content identifier: the SHA-1 (hex) of "path:md5\n" for each file, by path. */
static const char *content_identifier(struct cookbook *cb)
{
    struct buf text = BUF_INIT;
    unsigned char digest[20];
    char hex[41];

    for (size_t i = 0; i < cb->count; i++)
        buf_printf(&text, "%s:%s\n", cb->files[i].path, cb->files[i].checksum);
    crypto_sha1(digest, buf_cstr(&text), text.len);
    crypto_hex(hex, digest, sizeof(digest));
    buf_release(&text);
    return ctl_printf(cb->ctl, "%s", hex);
}

static int segment_known(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(segments) / sizeof(segments[0]); i++)
        if (strlen(segments[i]) == len && !strncmp(segments[i], name, len))
            return 1;
    return 0;
}

/* A file's entry of all_files, as Chef names it: "recipes/default.rb" for a segment's file
 * (its folder and base name), "root_files/PATH" for the others; the specificity of files/ and
 * templates/ is their second folder ("default", "host-..."), "root_default" without one. */
static json_t *file_entry(struct ctl *ctl, const struct cookbook_file *file)
{
    const char *path = file->path, *slash = strchr(path, '/'), *base = strrchr(path, '/');
    const char *name = ctl_printf(ctl, "root_files/%s", path), *specificity = "default";
    size_t first = slash ? (size_t)(slash - path) : 0;

    if (slash && segment_known(path, first)) {
        name = ctl_printf(ctl, "%.*s/%s", (int)first, path, base + 1);
        if (!strncmp(path, "files/", 6) || !strncmp(path, "templates/", 10))
            specificity = strchr(slash + 1, '/')
                              ? ctl_printf(ctl, "%.*s", (int)strcspn(slash + 1, "/"), slash + 1)
                              : "root_default";
    }
    return json_pack("{s:s, s:s, s:s, s:s}", "name", name, "path", path, "checksum", file->checksum,
                     "specificity", specificity);
}

/* The artifact's manifest, as chef push sends it. */
static json_t *manifest_make(struct cookbook *cb, const char *name, const char *identifier,
                             json_t *metadata)
{
    json_t *files = json_array();
    const char *version = json_string_value(json_object_get(metadata, "version"));

    version = ctl_printf(cb->ctl, "%s", version ? version : "0.0.0");
    json_object_set_new(metadata, "version", json_string(version));
    json_object_set_new(metadata, "name", json_string(name));
    for (size_t i = 0; i < cb->count; i++)
        json_array_append_new(files, file_entry(cb->ctl, &cb->files[i]));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:O, s:o}", "name", name, "identifier",
                     identifier, "version", version, "cookbook_name", name, "chef_type",
                     "cookbook_version", "frozen?", 0, "metadata", metadata, "all_files", files);
}

/* ---- upload ------------------------------------------------------------------------------ */

/* Sends body (JSON) with method to the template; the answer parsed into *out. */
static int json_send(struct ctl *ctl, const char *method, const char *template,
                     const char *const *values, const json_t *body, json_t **out)
{
    char *text = json_dumps(body, JSON_COMPACT);
    struct ctl_request request = {.method = method,
                                  .template = template,
                                  .values = values,
                                  .content_type = "application/json",
                                  .body = text,
                                  .body_len = text ? strlen(text) : 0};
    int rc = text ? ctl_call_json(ctl, &request, out) : ctl_error(CTL_FAILED, "out of memory");
    free(text);
    return rc;
}

/* POST sandboxes: which of the checksums the server still needs. */
static int sandbox_open(struct cookbook *cb, json_t **out)
{
    json_t *checksums = json_object(), *body;
    int rc;

    for (size_t i = 0; i < cb->count; i++)
        json_object_set_new(checksums, cb->files[i].checksum, json_null());
    body = json_pack("{s:o}", "checksums", checksums);
    rc = json_send(cb->ctl, "POST", ORG "/sandboxes", NULL, body, out);
    json_decref(body);
    if (!rc && !json_is_string(json_object_get(*out, "sandbox_id")))
        rc = ctl_error(CTL_FAILED, "POST %s/sandboxes answered no sandbox_id", ORG);
    return rc;
}

/* PUT file_store/{checksum}: the file's bytes, as they were read. */
static int file_upload(struct cookbook *cb, const struct cookbook_file *file)
{
    const char *full = ctl_printf(cb->ctl, "%s/%s", cb->dir, file->path);
    const char *values[] = {file->checksum, NULL};
    struct ctl_request request = {.method = "PUT",
                                  .template = ORG "/file_store/{checksum}",
                                  .values = values,
                                  .content_type = "application/x-binary"};
    struct ctl_answer answer = {0};
    struct purser_error err;
    char *content = NULL;
    size_t len = 0;
    int rc;

    if (file_read_all(&content, &len, full, COOKBOOK_FILE_MAX, &err))
        return ctl_error(CTL_INVALID, "%s", err.message);
    request.body = content;
    request.body_len = len;
    rc = ctl_call(cb->ctl, &request, &answer);
    ctl_answer_release(&answer);
    free(content);
    return rc;
}

/* Uploads each file the sandbox needs (each content once); *sent counts them. */
static int files_upload(struct cookbook *cb, json_t *sandbox, size_t *sent)
{
    json_t *checksums = json_object_get(sandbox, "checksums");
    double total = 0, done = 0;
    int rc = CTL_OK;

    for (size_t i = 0; i < cb->count; i++)
        if (json_is_true(
                ctl_dig(json_object_get(checksums, cb->files[i].checksum), "needs_upload")))
            total += (double)cb->files[i].size;
    *sent = 0;
    for (size_t i = 0; i < cb->count && !rc; i++) {
        json_t *entry = json_object_get(checksums, cb->files[i].checksum);
        if (!json_is_true(json_object_get(entry, "needs_upload")))
            continue;
        if (!(rc = file_upload(cb, &cb->files[i]))) {
            json_object_set_new(entry, "needs_upload", json_false()); /* the same content again */
            done += (double)cb->files[i].size;
            ctl_progress(cb->ctl, "sent", done, total);
            (*sent)++;
        }
    }
    ctl_progress_end(cb->ctl);
    return rc;
}

/* PUT sandboxes/{id} {is_completed: true}. */
static int sandbox_commit(struct cookbook *cb, const json_t *sandbox)
{
    const char *values[] = {json_string_value(json_object_get(sandbox, "sandbox_id")), NULL};
    json_t *body = json_pack("{s:b}", "is_completed", 1), *answer = NULL;
    int rc = json_send(cb->ctl, "PUT", ORG "/sandboxes/{id}", values, body, &answer);
    json_decref(body);
    json_decref(answer);
    return rc;
}

static int answer_print_yaml(const struct ctl_answer *answer)
{
    json_t *value = json_loadb(answer->body.data, answer->body.len, 0, NULL);
    int rc = ctl_print_yaml(stdout, value ? value : json_null());
    json_decref(value);
    return rc;
}

/* PUT the manifest; prints what the API answers (201 stored, 200 the same one already). */
static int artifact_put(struct cookbook *cb, const json_t *manifest, size_t sent)
{
    const char *name = json_string_value(json_object_get(manifest, "name"));
    const char *identifier = json_string_value(json_object_get(manifest, "identifier"));
    const char *values[] = {name, identifier, NULL};
    char *text = json_dumps(manifest, JSON_COMPACT);
    struct ctl_request request = {.method = "PUT",
                                  .template = ORG "/cookbook_artifacts/{name}/{identifier}",
                                  .values = values,
                                  .content_type = "application/json",
                                  .body = text,
                                  .body_len = text ? strlen(text) : 0};
    struct ctl_answer answer = {0};
    int rc = text ? ctl_call(cb->ctl, &request, &answer) : ctl_error(CTL_FAILED, "out of memory");

    if (!rc && cb->ctl->output == OUT_JSON)
        rc = ctl_print(cb->ctl, manifest, NULL, answer.body.data);
    else if (!rc && cb->ctl->output == OUT_YAML)
        rc = answer_print_yaml(&answer);
    else if (!rc && cb->ctl->output == OUT_NAME)
        printf("cookbook-artifact/%s/%s\n", name, identifier);
    else if (!rc)
        printf("cookbook %s %s %s: version %s, %zu file%s (%zu sent)\n", name, identifier,
               answer.status == 201 ? "uploaded" : "unchanged", ctl_text(manifest, "version"),
               cb->count, cb->count == 1 ? "" : "s", sent);
    ctl_answer_release(&answer);
    free(text);
    return rc;
}

/* The artifact's name: --name, else the metadata's, else the folder's. */
static const char *artifact_name(struct cookbook *cb, const char *name, const json_t *metadata)
{
    const char *named = json_string_value(json_object_get(metadata, "name"));
    if (name)
        return name;
    return named ? ctl_printf(cb->ctl, "%s", named) : folder_name(cb->ctl, cb->dir);
}

static int cookbook_upload(struct ctl *ctl, const char *dir, const char *name,
                           const char *identifier)
{
    struct cookbook cb = {.ctl = ctl, .dir = dir};
    json_t *metadata = NULL, *manifest = NULL, *sandbox = NULL;
    size_t sent = 0;
    int rc = cookbook_read(&cb);

    if (!rc)
        rc = metadata_read(&cb, &metadata);
    if (!rc)
        manifest = manifest_make(&cb, artifact_name(&cb, name, metadata),
                                 identifier ? identifier : content_identifier(&cb), metadata);
    if (!rc)
        rc = sandbox_open(&cb, &sandbox);
    if (!rc)
        rc = files_upload(&cb, sandbox, &sent);
    if (!rc)
        rc = sandbox_commit(&cb, sandbox);
    if (!rc)
        rc = artifact_put(&cb, manifest, sent);
    json_decref(sandbox);
    json_decref(manifest);
    json_decref(metadata);
    cookbook_release(&cb);
    return rc;
}

/* ---- download ---------------------------------------------------------------------------- */

/* Whether a manifest's path stays inside the folder: relative, no "." or ".." in it. */
static int path_safe(const char *path)
{
    if (!path || !*path || *path == '/')
        return 0;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += n + (p[n] == '/');
    }
    return 1;
}

/* Makes dir and the folders of path in it, as mkdir -p. */
static int folders_make(struct ctl *ctl, const char *dir, const char *path)
{
    char *full = ctl_printf(ctl, "%s/%s", dir, path), *p = full;

    while ((p = strchr(p + 1, '/'))) {
        *p = '\0';
        if (mkdir(full, 0755) && errno != EEXIST)
            return ctl_error(CTL_INVALID, "cannot make %s: %s", full, strerror(errno));
        *p = '/';
    }
    return CTL_OK;
}

/* Checks that the file at full has the MD5 checksum. */
static int checksum_check(const char *full, const char *checksum)
{
    struct purser_error err;
    char *content = NULL, md5[33];
    size_t len = 0;

    if (file_read_all(&content, &len, full, COOKBOOK_FILE_MAX, &err))
        return ctl_error(CTL_FAILED, "%s", err.message);
    crypto_md5_hex(md5, content, len);
    free(content);
    if (strcmp(md5, checksum))
        return ctl_error(CTL_FAILED, "%s: its MD5 is %s, not the manifest's %s", full, md5,
                         checksum);
    return CTL_OK;
}

/* GET file_store/{checksum} into dir/path (through path.tmp, checked, then renamed). */
static int file_download(struct ctl *ctl, const char *dir, const json_t *entry, double *bytes)
{
    const char *path = json_string_value(json_object_get(entry, "path"));
    const char *checksum = json_string_value(json_object_get(entry, "checksum"));
    const char *values[] = {checksum, NULL}, *full, *tmp;
    struct ctl_request request = {.method = "GET",
                                  .template = ORG "/file_store/{checksum}",
                                  .values = values,
                                  .accept = "*/*"};
    struct ctl_answer answer = {0};
    struct stat st;
    int rc;

    rc = folders_make(ctl, dir, path);
    if (!rc) {
        full = ctl_printf(ctl, "%s/%s", dir, path);
        tmp = ctl_printf(ctl, "%s.tmp", full);
        if (!(request.download = fopen(tmp, "wb")))
            rc = ctl_error(CTL_INVALID, "cannot write %s: %s", tmp, strerror(errno));
    }
    if (!rc) {
        rc = ctl_call(ctl, &request, &answer);
        if (fclose(request.download) && !rc)
            rc = ctl_error(CTL_FAILED, "cannot write %s: %s", tmp, strerror(errno));
        if (!rc)
            rc = checksum_check(tmp, checksum);
        if (!rc && rename(tmp, full))
            rc = ctl_error(CTL_FAILED, "cannot rename %s to %s: %s", tmp, full, strerror(errno));
        if (rc)
            unlink(tmp);
        else if (!stat(full, &st))
            *bytes += (double)st.st_size;
        ctl_answer_release(&answer);
    }
    return rc;
}

/* CTL_OK when every entry names a checksum and a path inside the folder. */
static int files_check(const json_t *files)
{
    const json_t *entry;
    size_t i;

    json_array_foreach (files, i, entry) {
        const char *path = json_string_value(json_object_get(entry, "path"));
        if (!path_safe(path) || !json_is_string(json_object_get(entry, "checksum")))
            return ctl_error(CTL_FAILED, "the manifest names a file at %s: not inside the folder",
                             path ? path : "(no path)");
    }
    return CTL_OK;
}

/* The manifest's file entries: all_files, or the segments of older manifests. */
static json_t *manifest_files(const json_t *manifest)
{
    static const char *const parts[] = {"all_files",  "recipes",   "definitions", "libraries",
                                        "attributes", "files",     "templates",   "resources",
                                        "providers",  "root_files"};
    json_t *files = json_array();
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (json_array_size(json_object_get(manifest, parts[i]))) {
            json_array_extend(files, json_object_get(manifest, parts[i]));
            if (i == 0)
                break;
        }
    return files;
}

/* Downloads each file into dir, showing the bytes received. */
static int files_download(struct ctl *ctl, const char *dir, const json_t *files)
{
    const json_t *entry;
    double bytes = 0;
    size_t i;
    int rc = CTL_OK;

    json_array_foreach (files, i, entry) {
        if ((rc = file_download(ctl, dir, entry, &bytes)))
            break;
        ctl_progress(ctl, "received", bytes, 0);
    }
    ctl_progress_end(ctl);
    return rc;
}

static int cookbook_download(struct ctl *ctl, const char *name, const char *identifier,
                             const char *dir)
{
    const char *values[] = {name, identifier, NULL};
    struct ctl_request request = {.method = "GET",
                                  .template = ORG "/cookbook_artifacts/{name}/{identifier}",
                                  .values = values};
    json_t *manifest = NULL, *files = NULL;
    int rc = ctl_call_json(ctl, &request, &manifest);

    if (!rc) {
        files = manifest_files(manifest);
        rc = files_check(files);
    }
    if (!rc)
        rc = files_download(ctl, dir, files);
    if (!rc && !ctl->quiet)
        printf("cookbook %s %s: version %s, %zu file%s into %s\n", name, identifier,
               ctl_text(manifest, "version"), json_array_size(files),
               json_array_size(files) == 1 ? "" : "s", dir);
    json_decref(files);
    json_decref(manifest);
    return rc;
}

/* ---- the command ------------------------------------------------------------------------- */

int cmd_cookbook(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"name", required_argument, NULL, 'n'},
                                            {"identifier", required_argument, NULL, 'i'},
                                            {NULL, 0, NULL, 0}};
    const struct ctl_command *self = ctl_command_find("cookbook");
    const char *name = NULL, *identifier = NULL, *verb;
    int opt;

    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1)
        switch (opt) {
        case 'n': name = optarg; break;
        case 'i': identifier = optarg; break;
        default: return ctl_usage(self, NULL);
        }
    verb = optind < argc ? argv[optind] : "";
    if (!strcmp(verb, "upload") && argc - optind == 2)
        return cookbook_upload(ctl, argv[optind + 1], name, identifier);
    if (!strcmp(verb, "download") && argc - optind == 4 && !name && !identifier)
        return cookbook_download(ctl, argv[optind + 1], argv[optind + 2], argv[optind + 3]);
    if (!strcmp(verb, "upload") || !strcmp(verb, "download"))
        return ctl_usage(self, "%s: wrong arguments", verb);
    return ctl_usage(self, "upload or download, not '%s'", verb);
}
