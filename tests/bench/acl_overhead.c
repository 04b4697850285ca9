/* Overhead of the runtime's stream path (a benchmark program, not a test).
 *
 * Prints the median cost of
 *   - an empty aclrtSynchronizeStream (idle stream),
 *   - an aclrtMemcpyAsync enqueue (host to device, 4 KiB),
 *   - a round trip: aclrtMemcpyAsync enqueue + aclrtSynchronizeStream,
 *   - the same two for aclrtLaunchHostFunc with an empty function (host functions always run
 *     on the stream's worker thread: a real hand-off to a second thread and back),
 * and, in the same run, the peers:
 *   - the work itself: a 4 KiB memcpy on the calling thread,
 *   - a pthread mutex/condvar ping-pong with a second thread that does the 4 KiB memcpy (the
 *     textbook hand-off to a worker and back),
 * with the ratios of our round trips to them.
 *
 * One command (builds everything, prints the load): tests/bench/run.sh stream
 * (the program takes the iteration count as its argument, default 20000).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "acl/acl.h"

#include "bench.h"

static void nothing(void *arg) { (void)arg; }

/* The condvar ping-pong peer: `turn` 1 = the worker copies, 0 = the caller's turn. */
static struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int turn, quit;
    char src[4096], dst[4096];
} pp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, {0}, {0}};

static void *pong(void *arg) {
    (void)arg;
    pthread_mutex_lock(&pp.m);
    for (;;) {
        while (pp.turn == 0 && !pp.quit) pthread_cond_wait(&pp.cv, &pp.m);
        if (pp.quit) break;
        memcpy(pp.dst, pp.src, sizeof pp.dst);
        pp.turn = 0;
        pthread_cond_broadcast(&pp.cv);
    }
    pthread_mutex_unlock(&pp.m);
    return NULL;
}

static void ping(void) {
    pthread_mutex_lock(&pp.m);
    pp.turn = 1;
    pthread_cond_broadcast(&pp.cv);
    while (pp.turn == 1) pthread_cond_wait(&pp.cv, &pp.m);
    pthread_mutex_unlock(&pp.m);
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    if (iters < 10) iters = 10;
    double *t = malloc(sizeof(double) * (size_t)iters);
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *dev = NULL, *host = NULL;
    int have_mem = aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS &&
                   aclrtMallocHost(&host, 4096) == ACL_SUCCESS;
    if (!have_mem) {
        const char *m = aclGetRecentErrMsg();
        printf("device memory unavailable (%s): memcpy rows skipped\n", m ? m : "");
    } else {
        memset(host, 1, 4096);
    }

    /* Warm up. */
    for (int i = 0; i < 1000; i++) {
        if (have_mem) CHECK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
        else CHECK(aclrtLaunchHostFunc(s, nothing, NULL));
        CHECK(aclrtSynchronizeStream(s));
    }

    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        CHECK(aclrtSynchronizeStream(s));
        t[i] = now_ns() - a;
    }
    double sync_empty = median(t, iters);

    double memcpy_enqueue = -1, memcpy_round = -1;
    if (have_mem) {
        for (int i = 0; i < iters; i++) {
            double a = now_ns();
            CHECK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
            t[i] = now_ns() - a;
            if (i % 64 == 63) CHECK(aclrtSynchronizeStream(s));
        }
        CHECK(aclrtSynchronizeStream(s));
        memcpy_enqueue = median(t, iters);

        for (int i = 0; i < iters; i++) {
            double a = now_ns();
            CHECK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
            CHECK(aclrtSynchronizeStream(s));
            t[i] = now_ns() - a;
        }
        memcpy_round = median(t, iters);
    }

    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        CHECK(aclrtLaunchHostFunc(s, nothing, NULL));
        t[i] = now_ns() - a;
        if (i % 64 == 63) CHECK(aclrtSynchronizeStream(s));
    }
    CHECK(aclrtSynchronizeStream(s));
    double host_enqueue = median(t, iters);

    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        CHECK(aclrtLaunchHostFunc(s, nothing, NULL));
        CHECK(aclrtSynchronizeStream(s));
        t[i] = now_ns() - a;
    }
    double host_round = median(t, iters);

    /* Peers: the work alone, and a condvar hand-off of it to a second thread. */
    static char a4[4096], b4[4096];
    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        memcpy(b4, a4, sizeof b4);
        __asm__ __volatile__("" ::"r"(b4) : "memory");
        t[i] = now_ns() - a;
    }
    double work = median(t, iters);
    pthread_t th;
    if (pthread_create(&th, NULL, pong, NULL) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
    }
    for (int i = 0; i < 1000; i++) ping();
    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        ping();
        t[i] = now_ns() - a;
    }
    double pingpong = median(t, iters);
    pthread_mutex_lock(&pp.m);
    pp.quit = 1;
    pthread_cond_broadcast(&pp.cv);
    pthread_mutex_unlock(&pp.m);
    pthread_join(th, NULL);

    printf("iterations per measurement: %d (medians)\n", iters);
    printf("empty aclrtSynchronizeStream:                 %8.0f ns\n", sync_empty);
    printf("aclrtMemcpyAsync H2D 4 KiB enqueue:           %8.0f ns\n", memcpy_enqueue);
    printf("round trip (aclrtMemcpyAsync 4 KiB + sync):   %8.0f ns\n", memcpy_round);
    printf("aclrtLaunchHostFunc enqueue (empty function): %8.0f ns\n", host_enqueue);
    printf("round trip (aclrtLaunchHostFunc + sync):      %8.0f ns\n", host_round);
    printf("peer: the work alone (4 KiB memcpy):          %8.0f ns\n", work);
    printf("peer: condvar ping-pong, worker does the copy: %7.0f ns\n", pingpong);
    if (have_mem)
        printf("ratio memcpy round trip / condvar ping-pong:  %8.2f   (/ the work alone: %.1f)\n",
               memcpy_round / pingpong, memcpy_round / work);
    printf("ratio host-func round trip / condvar ping-pong: %6.2f\n", host_round / pingpong);

    if (have_mem) {
        CHECK(aclrtFreeHost(host));
        CHECK(aclrtFree(dev));
    }
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    free(t);
    return 0;
}
