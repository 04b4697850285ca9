/*
 * ACL runtime sample: device memory, copies in every direction, streams and events.
 *
 * 1. aclInit, aclrtSetDevice (ASCEND_DEVICE_ID, default 0), device count and SoC name.
 * 2. Synchronous round trip: host -> device (H2D), device -> device (D2D), device -> host (D2H).
 * 3. Two streams ordered by an event: stream A uploads, stream B waits for A's event, then
 *    copies D2D, patches a range with aclrtMemsetAsync and downloads; events time the work.
 * 4. Check every byte, release everything, print PASS (exit 0) or what differs (exit 1).
 *
 * Builds unchanged against CANN or npu-emu:  make   (needs ASCEND_HOME_PATH from set_env.sh)
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "acl/acl.h"

#define CHECK_ACL(call)                                                                       \
    do {                                                                                      \
        aclError err_ = (call);                                                               \
        if (err_ != ACL_SUCCESS) {                                                            \
            const char *msg_ = aclGetRecentErrMsg();                                          \
            std::fprintf(stderr, "FAIL: %s returned %d at %s:%d: %s\n", #call, (int)err_,     \
                         __FILE__, __LINE__, msg_ ? msg_ : "(no message)");                    \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

static const size_t kSize = 8u << 20; /* 8 MiB */

/* Compare; report the first difference. */
static bool Check(const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            std::fprintf(stderr, "FAIL: %s: byte %zu is 0x%02x, expected 0x%02x\n", what, i, got[i],
                         want[i]);
            return false;
        }
    }
    std::printf("%-44s ok (%zu bytes)\n", what, n);
    return true;
}

int main()
{
    int32_t deviceId = 0;
    if (const char *d = std::getenv("ASCEND_DEVICE_ID")) {
        deviceId = std::atoi(d);
    }

    CHECK_ACL(aclInit(nullptr));
    uint32_t deviceCount = 0;
    CHECK_ACL(aclrtGetDeviceCount(&deviceCount));
    CHECK_ACL(aclrtSetDevice(deviceId));
    const char *soc = aclrtGetSocName();
    std::printf("Found %u NPU device(s); using device %d (%s)\n", deviceCount, deviceId,
                soc ? soc : "unknown");

    /* Host buffers: page-locked, as the vendor samples use. */
    uint8_t *src = nullptr;
    uint8_t *dst = nullptr;
    CHECK_ACL(aclrtMallocHost(reinterpret_cast<void **>(&src), kSize));
    CHECK_ACL(aclrtMallocHost(reinterpret_cast<void **>(&dst), kSize));
    for (size_t i = 0; i < kSize; ++i) {
        src[i] = static_cast<uint8_t>((i * 131u + 7u) >> 3);
    }

    void *devA = nullptr;
    void *devB = nullptr;
    CHECK_ACL(aclrtMalloc(&devA, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc(&devB, kSize, ACL_MEM_MALLOC_HUGE_FIRST));

    bool ok = true;

    /* Synchronous round trip. */
    CHECK_ACL(aclrtMemcpy(devA, kSize, src, kSize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(devB, kSize, devA, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE));
    std::memset(dst, 0, kSize);
    CHECK_ACL(aclrtMemcpy(dst, kSize, devB, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
    ok = Check("sync H2D -> D2D -> D2H", dst, src, kSize) && ok;

    /* Asynchronous copies on two streams ordered by an event. */
    aclrtStream streamA = nullptr;
    aclrtStream streamB = nullptr;
    aclrtEvent uploaded = nullptr;
    aclrtEvent start = nullptr;
    aclrtEvent end = nullptr;
    CHECK_ACL(aclrtCreateStream(&streamA));
    CHECK_ACL(aclrtCreateStream(&streamB));
    CHECK_ACL(aclrtCreateEvent(&uploaded));
    CHECK_ACL(aclrtCreateEvent(&start));
    CHECK_ACL(aclrtCreateEvent(&end));

    for (size_t i = 0; i < kSize; ++i) {
        src[i] = static_cast<uint8_t>(i * 7u + 1u);
    }
    CHECK_ACL(aclrtMemset(devA, kSize, 0, kSize));
    CHECK_ACL(aclrtMemset(devB, kSize, 0, kSize));

    CHECK_ACL(aclrtRecordEvent(start, streamA));
    CHECK_ACL(aclrtMemcpyAsync(devA, kSize, src, kSize, ACL_MEMCPY_HOST_TO_DEVICE, streamA));
    CHECK_ACL(aclrtRecordEvent(uploaded, streamA));
    /* Stream B must not read devA before stream A's upload is done. */
    CHECK_ACL(aclrtStreamWaitEvent(streamB, uploaded));
    CHECK_ACL(aclrtMemcpyAsync(devB, kSize, devA, kSize, ACL_MEMCPY_DEVICE_TO_DEVICE, streamB));
    const size_t patchOff = 4096 + 3;
    const size_t patchLen = 100000;
    CHECK_ACL(aclrtMemsetAsync(static_cast<uint8_t *>(devB) + patchOff, kSize - patchOff, 0xA5,
                               patchLen, streamB));
    std::memset(dst, 0, kSize);
    CHECK_ACL(aclrtMemcpyAsync(dst, kSize, devB, kSize, ACL_MEMCPY_DEVICE_TO_HOST, streamB));
    CHECK_ACL(aclrtRecordEvent(end, streamB));
    CHECK_ACL(aclrtSynchronizeStream(streamB));
    CHECK_ACL(aclrtSynchronizeEvent(end));

    float ms = 0.0f;
    CHECK_ACL(aclrtEventElapsedTime(&ms, start, end));
    std::printf("async upload + copy + memset + download took %.3f ms on the device\n", ms);

    std::memset(src + patchOff, 0xA5, patchLen); /* what devB should now hold */
    ok = Check("async H2D | event | D2D, memset, D2H", dst, src, kSize) && ok;
    if (!(ms > 0.0f)) {
        std::fprintf(stderr, "FAIL: elapsed time between the events is %f ms, expected > 0\n", ms);
        ok = false;
    }

    CHECK_ACL(aclrtDestroyEvent(start));
    CHECK_ACL(aclrtDestroyEvent(end));
    CHECK_ACL(aclrtDestroyEvent(uploaded));
    CHECK_ACL(aclrtDestroyStream(streamA));
    CHECK_ACL(aclrtDestroyStream(streamB));
    CHECK_ACL(aclrtFree(devA));
    CHECK_ACL(aclrtFree(devB));
    CHECK_ACL(aclrtFreeHost(src));
    CHECK_ACL(aclrtFreeHost(dst));
    CHECK_ACL(aclrtResetDevice(deviceId));
    CHECK_ACL(aclFinalize());

    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
