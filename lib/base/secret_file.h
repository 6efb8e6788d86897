/* secret_file.h: writing a file that holds a key, a token or another secret (a keyring, a
 * private key, purserctl's contexts, an export with secrets) so that nothing but that file
 * receives it.
 *
 * The text goes to a temporary file beside the target, "<path>.tmp": a stale one of that name
 * (a file, or a symlink planted there) is removed first, and it is made new with
 * O_CREAT|O_EXCL|O_NOFOLLOW and mode 600 (set again with fchmod, whatever the umask). Once whole
 * and on disk it is renamed over the target, so the target is always a new file of mode 600,
 * whatever was at its name before (a file of another mode, a symlink: the name is replaced, never
 * written through). Every function returns 0, or -1 with errno set. */
#ifndef PURSER_SECRET_FILE_H
#define PURSER_SECRET_FILE_H

#include <stddef.h>

struct secret_file {
    int fd;     /* the temporary file, open for writing; -1 when none */
    char *tmp;  /* its name (owned) */
    char *path; /* the target's name (owned) */
};

/* Makes the temporary file for path; on failure nothing is left behind and f holds nothing. */
int secret_file_begin(struct secret_file *f, const char *path);

/* Writes the len bytes of data to the temporary file, whole. */
int secret_file_put(struct secret_file *f, const void *data, size_t len);

/* Puts the temporary file in the target's place (fsync, close, rename); on failure it is
 * removed. Releases f either way. */
int secret_file_commit(struct secret_file *f);

/* Closes and removes the temporary file, and releases f (one that holds nothing: nothing). */
void secret_file_abort(struct secret_file *f);

/* All of it: data, len bytes, as the file at path. */
int secret_file_write(const char *path, const void *data, size_t len);

#endif
