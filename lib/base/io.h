/* io.h: file descriptors written whole. */
#ifndef PURSER_IO_H
#define PURSER_IO_H

#include <stddef.h>

/* Writes the len bytes at data to fd, again after EINTR and a short write: 0, or -1 with
 * errno set (0 when write wrote nothing). */
int io_write_all(int fd, const void *data, size_t len);

#endif
