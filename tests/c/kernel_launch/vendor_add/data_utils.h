/* File helpers of the KernelLaunch-style test project (the vendor samples ship a
 * data_utils.h with ReadFile/WriteFile and CHECK_ACL; this is npu-emu's own). */
#ifndef DATA_UTILS_H
#define DATA_UTILS_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#define CHECK_ACL(x)                                                                        \
    do {                                                                                    \
        aclError __ret = (x);                                                               \
        if (__ret != ACL_ERROR_NONE) {                                                      \
            std::fprintf(stderr, "%s:%d aclError %d: %s\n", __FILE__, __LINE__, (int)__ret,  \
                         aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "");                \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)
#endif

/* Read exactly `size` bytes of `path` into buf (of bufSize bytes). */
inline bool ReadFile(const char *path, size_t size, void *buf, size_t bufSize)
{
    struct stat st;
    if (stat(path, &st) != 0 || (size_t)st.st_size != size || size > bufSize) {
        std::fprintf(stderr, "ReadFile: %s must hold %zu bytes\n", path, size);
        return false;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return false;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, (char *)buf + got, size - got);
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    return got == size;
}

/* Write `size` bytes of buf to `path`. */
inline bool WriteFile(const char *path, const void *buf, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        std::fprintf(stderr, "WriteFile: cannot create %s\n", path);
        return false;
    }
    size_t put = 0;
    while (put < size) {
        ssize_t n = write(fd, (const char *)buf + put, size - put);
        if (n <= 0) {
            break;
        }
        put += (size_t)n;
    }
    close(fd);
    return put == size;
}

#endif /* DATA_UTILS_H */
