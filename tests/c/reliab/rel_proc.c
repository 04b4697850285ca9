/* One process of the reliability suite (tests/tests/reliability.rs). Usage:
 *   rel_proc exit MB        allocate and write MB MiB on device 0, then exit() without aclFinalize
 *   rel_proc hold MB        the same, then print "ready" and wait to be killed
 *   rel_proc usable MB      aclrtMalloc MB MiB until it fails; print how much fitted
 *   rel_proc config PATH    aclInit(PATH); print the code and the message
 *   rel_proc victim DEV MB  allocate MB MiB on device DEV filled with 0x5a, print
 *                           "victim at ADDR", wait for a line on stdin, then check the memory
 *   rel_proc steps          a job's life step by step (init, device, malloc, copies, memset,
 *                           free, finalize); before step $FILL_AT the file system holding the
 *                           node is filled up to the last byte through $FILL_FILE. Every step
 *                           prints "step NAME -> CODE MESSAGE"; nothing may crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"

static const char *msg(void) {
    const char *m = aclGetRecentErrMsg();
    return m ? m : "";
}

static void *alloc_and_write(size_t mb) {
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        fprintf(stderr, "init failed: %s\n", msg());
        exit(2);
    }
    void *p = NULL;
    if (aclrtMalloc(&p, mb << 20, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        fprintf(stderr, "malloc failed: %s\n", msg());
        exit(2);
    }
    if (aclrtMemset(p, mb << 20, 0x5a, mb << 20) != ACL_SUCCESS) {
        fprintf(stderr, "memset failed: %s\n", msg());
        exit(2);
    }
    return p;
}

/* Fill the file system of `path` to the last byte. */
static void fill(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror("open fill file");
        exit(2);
    }
    static char block[1 << 16];
    memset(block, 7, sizeof block);
    for (size_t n = sizeof block; n >= 1;) {
        ssize_t w = write(fd, block, n);
        if (w < 0) {
            if (errno != ENOSPC) {
                perror("fill");
                exit(2);
            }
            n /= 2;
        }
    }
    close(fd);
    printf("filled\n");
    fflush(stdout);
}

/* A step whose prerequisite failed is skipped. */
#define SKIP (-1)

static aclError bigmalloc(void) {
    void *q = NULL;
    aclError e = aclrtMalloc(&q, 64 << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    if (e == ACL_SUCCESS) aclrtFree(q);
    return e;
}

static int steps(void) {
    const char *at = getenv("FILL_AT");
    const char *file = getenv("FILL_FILE");
    void *dev = NULL, *host = NULL;
    aclrtStream stream = NULL;
    static char buf[1 << 20];
    aclError r = 0;
    /* Each step runs once; a failed step leaves later steps with what exists. */
#define STEP(name, call)                                                         \
    do {                                                                         \
        if (at && file && strcmp(at, name) == 0) fill(file);                     \
        r = (call);                                                              \
        if (r == SKIP)                                                           \
            printf("step %s -> skipped\n", name);                                \
        else                                                                     \
            printf("step %s -> %d %s\n", name, (int)r, r ? msg() : "");          \
        fflush(stdout);                                                          \
    } while (0)
    STEP("init", aclInit(NULL));
    STEP("device", aclrtSetDevice(0));
    STEP("stream", aclrtCreateStream(&stream));
    STEP("malloc", aclrtMalloc(&dev, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    STEP("mallochost", aclrtMallocHost(&host, 1 << 20));
    STEP("memcpy", dev ? aclrtMemcpy(dev, 1 << 20, buf, 1 << 20, ACL_MEMCPY_HOST_TO_DEVICE)
                       : SKIP);
    STEP("memset", dev ? aclrtMemsetAsync(dev, 1 << 20, 1, 1 << 20, stream)
                       : SKIP);
    STEP("sync", stream ? aclrtSynchronizeStream(stream) : SKIP);
    STEP("bigmalloc", bigmalloc());
    STEP("free", dev ? aclrtFree(dev) : SKIP);
    STEP("freehost", host ? aclrtFreeHost(host) : SKIP);
    STEP("destroystream", stream ? aclrtDestroyStream(stream) : SKIP);
    STEP("reset", aclrtResetDevice(0));
    STEP("finalize", aclFinalize());
    printf("steps done\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *mode = argv[1];
    if (!strcmp(mode, "exit") || !strcmp(mode, "hold")) {
        size_t mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
        alloc_and_write(mb);
        printf("ready\n");
        fflush(stdout);
        if (!strcmp(mode, "exit")) exit(0);
        for (;;) pause();
    }
    if (!strcmp(mode, "usable")) {
        size_t mb = strtoul(argv[2], NULL, 10);
        if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
        size_t free0 = 0, total = 0;
        aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total);
        size_t n = 0;
        void *p;
        aclError e;
        while ((e = aclrtMalloc(&p, mb << 20, ACL_MEM_MALLOC_HUGE_FIRST)) == ACL_SUCCESS) n++;
        size_t free1 = 0;
        aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total);
        printf("usable size=%zu count=%zu total=%zu free_after=%zu code=%d\n", mb << 20, n,
               total, free1, (int)e);
        printf("message: %s\n", msg());
        return 0;
    }
    if (!strcmp(mode, "config")) {
        aclError e = aclInit(argv[2]);
        printf("aclInit -> %d %s\n", (int)e, e ? msg() : "");
        return 0;
    }
    if (!strcmp(mode, "steps")) return steps();
    if (!strcmp(mode, "victim")) {
        int dev = atoi(argv[2]);
        size_t bytes = strtoul(argv[3], NULL, 10) << 20;
        if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(dev) != ACL_SUCCESS) return 2;
        void *p = NULL;
        if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 2;
        if (aclrtMemset(p, bytes, 0x5a, bytes) != ACL_SUCCESS) return 2;
        printf("victim at %p\n", p);
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof line, stdin)) { /* EOF: check anyway */ }
        unsigned char *h = malloc(bytes);
        if (aclrtMemcpy(h, bytes, p, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return 2;
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++) bad += h[i] != 0x5a;
        printf(bad ? "victim CORRUPTED: %zu bytes changed\n" : "victim intact\n", bad);
        return 0;
    }
    return 2;
}
