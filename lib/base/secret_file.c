/* secret_file.c: files that hold a secret, written aside and renamed (secret_file.h). */
#include "base/secret_file.h"

#include "base/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void release(struct secret_file *f)
{
    free(f->tmp);
    free(f->path);
    *f = (struct secret_file){.fd = -1};
}

int secret_file_begin(struct secret_file *f, const char *path)
{
    size_t len = strlen(path) + sizeof(".tmp");
    *f = (struct secret_file){.fd = -1, .tmp = malloc(len), .path = strdup(path)};
    if (!f->tmp || !f->path) {
        release(f);
        errno = ENOMEM;
        return -1;
    }
    snprintf(f->tmp, len, "%s.tmp", path);
    if (unlink(f->tmp) && errno != ENOENT) { /* (a stale one, or whatever was planted there) */
        release(f);
        return -1;
    }
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f->fd < 0) {
        int saved = errno;
        release(f);
        errno = saved;
        return -1;
    }
    if (fchmod(f->fd, 0600)) {
        secret_file_abort(f);
        return -1;
    }
    return 0;
}

int secret_file_put(struct secret_file *f, const void *data, size_t len)
{
    return io_write_all(f->fd, data, len);
}

int secret_file_commit(struct secret_file *f)
{
    int rc = fsync(f->fd);
    if (close(f->fd) && !rc)
        rc = -1;
    f->fd = -1;
    if (!rc)
        rc = rename(f->tmp, f->path);
    if (rc) {
        int saved = errno;
        unlink(f->tmp);
        errno = saved;
    }
    release(f);
    return rc;
}

void secret_file_abort(struct secret_file *f)
{
    int saved = errno;
    if (f->fd >= 0) {
        close(f->fd);
        unlink(f->tmp);
    }
    release(f);
    errno = saved;
}

int secret_file_write(const char *path, const void *data, size_t len)
{
    struct secret_file f;
    if (secret_file_begin(&f, path))
        return -1;
    if (secret_file_put(&f, data, len)) {
        secret_file_abort(&f);
        return -1;
    }
    return secret_file_commit(&f);
}
