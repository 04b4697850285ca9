/* File helpers and the ACL check macro, as the KernelLaunch samples' data_utils.h provides. */
#ifndef DATA_UTILS_H
#define DATA_UTILS_H
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#endif

#define INFO_LOG(fmt, args...) fprintf(stdout, "[INFO]  " fmt "\n", ##args)
#define ERROR_LOG(fmt, args...) fprintf(stderr, "[ERROR]  " fmt "\n", ##args)

#define CHECK_ACL(x)                                                                        \
    do {                                                                                    \
        aclError __ret = x;                                                                 \
        if (__ret != ACL_ERROR_NONE) {                                                      \
            std::fprintf(stderr, "%s:%d aclError:%d\n", __FILE__, __LINE__, (int)__ret);    \
        }                                                                                   \
    } while (0)

inline bool WriteFile(const char *path, const void *buf, size_t size)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, S_IRUSR | S_IWUSR);
    if (fd < 0) {
        ERROR_LOG("Open file failed. path = %s", path);
        return false;
    }
    ssize_t n = write(fd, buf, size);
    close(fd);
    return n == (ssize_t)size;
}
#endif
