/* Host side of an AddKernelInvocation-style project (the vendor sample before the Neo
 * variants): z = x + y over 8 * 2048 fp16 values with blockDim 8. RUN_MODE npu calls
 * add_custom_do, defined in the kernel source, which launches with
 * add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z); RUN_MODE cpu (ASCENDC_CPU_DEBUG) runs the
 * kernel with ICPU_RUN_KF. In npu mode it also checks the other kernel calls of the source
 * (a multi-line call, a struct argument by value, a launch error reported at synchronize).
 * Reads input/input_{x,y}.bin, writes output/output_z.bin and compares it with
 * output/golden.bin: exit 0 and "PASS" when they agree. */
#include "data_utils.h"
#include <cstring>
#include <vector>
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#include <cmath>
#include <cstdio>
extern void add_custom_do(uint32_t blockDim, void *l2ctrl, void *stream, uint8_t *x, uint8_t *y, uint8_t *z);
extern void add_custom_do_lines(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z);
extern void muls_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *z, uint32_t blockLength,
                           float scale);
#ifdef INVOCATION_ELSEWHERE
extern void add_custom_do_elsewhere(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z);
#endif
extern void add_t_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z, uint32_t blockLength);
extern const char *add_custom_usage();
extern int add_custom_line();

static float h2f(uint16_t h)
{
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? std::ldexp((float)m, -24) : std::ldexp((float)(m | 0x400), (int)e - 25);
    return (h & 0x8000) ? -v : v;
}

/* The other kernel calls of the source; returns 0 when all behave. */
static int extra_checks(aclrtStream stream, uint8_t *xDevice, uint8_t *yDevice, uint8_t *zDevice, size_t bytes,
                        const uint8_t *golden)
{
    const size_t n = bytes / 2;
    std::vector<uint16_t> z(n), x(n);
    std::printf("usage string: %s\n", add_custom_usage());
    std::printf("line of add_custom_line: %d\n", add_custom_line());
    // Multi-line call: same result as add_custom_do.
    CHECK_ACL(aclrtMemset(zDevice, bytes, 0, bytes));
    add_custom_do_lines(8, stream, xDevice, yDevice, zDevice);
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    if (std::memcmp(z.data(), golden, bytes) != 0) {
        std::printf("FAIL: add_custom_do_lines result differs\n");
        return 1;
    }
    std::printf("multi-line call: ok\n");
    // A template kernel: add_t<half><<<...>>>, 4 blocks of n / 4.
    CHECK_ACL(aclrtMemset(zDevice, bytes, 0, bytes));
    add_t_do(4, stream, xDevice, yDevice, zDevice, (uint32_t)(n / 4));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    if (std::memcmp(z.data(), golden, bytes) != 0) {
        std::printf("FAIL: add_t<half> result differs\n");
        return 1;
    }
    std::printf("template kernel: ok\n");
#ifdef INVOCATION_ELSEWHERE
    // A call in another source of the library, of a kernel it only declares.
    CHECK_ACL(aclrtMemset(zDevice, bytes, 0, bytes));
    add_custom_do_elsewhere(8, stream, xDevice, yDevice, zDevice);
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    if (std::memcmp(z.data(), golden, bytes) != 0) {
        std::printf("FAIL: add_custom_do_elsewhere result differs\n");
        return 1;
    }
    std::printf("call from another source: ok\n");
#endif
    // Struct argument by value: z = x * 0.5 over 16 blocks of 1024 (exact in fp16).
    add_custom_do(0 + 8, nullptr, stream, xDevice, xDevice, zDevice); /* z = 2x */
    muls_custom_do(16, stream, zDevice, yDevice, (uint32_t)(n / 16), 0.25f); /* y = x / 2 */
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, yDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_ACL(aclrtMemcpy(x.data(), bytes, xDevice, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < n; i++) {
        if (h2f(z[i]) != h2f(x[i]) * 0.5f) {
            std::printf("FAIL: muls_custom y[%zu] = %g, expected %g\n", i, h2f(z[i]), h2f(x[i]) * 0.5f);
            return 1;
        }
    }
    std::printf("struct argument: ok\n");
    // A launch error has no return value: recorded, and the next synchronize fails.
    add_custom_do(0, nullptr, stream, xDevice, yDevice, zDevice);
    const char *msg = aclGetRecentErrMsg();
    std::printf("recent after blockDim 0: %s\n", msg ? msg : "(none)");
    aclError rc = aclrtSynchronizeStream(stream);
    std::printf("synchronize after blockDim 0: %d\n", (int)rc);
    msg = aclGetRecentErrMsg();
    std::printf("recent after synchronize: %s\n", msg ? msg : "(none)");
    rc = aclrtSynchronizeStream(stream);
    std::printf("next synchronize: %d\n", (int)rc);
    return rc == ACL_SUCCESS ? 0 : 1;
}
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);
#endif

int32_t main(int32_t argc, char *argv[])
{
    (void)argc;
    (void)argv;
    uint32_t blockDim = 8;
    size_t inputByteSize = 8 * 2048 * sizeof(uint16_t);
    size_t outputByteSize = 8 * 2048 * sizeof(uint16_t);
    std::vector<uint8_t> out(outputByteSize);

#ifdef ASCENDC_CPU_DEBUG
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(inputByteSize);
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(inputByteSize);
    uint8_t *z = (uint8_t *)AscendC::GmAlloc(outputByteSize);
    if (!ReadFile("./input/input_x.bin", inputByteSize, x, inputByteSize) ||
        !ReadFile("./input/input_y.bin", inputByteSize, y, inputByteSize)) {
        return 1;
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_custom, blockDim, x, y, z);
    std::memcpy(out.data(), z, outputByteSize);
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)y);
    AscendC::GmFree((void *)z);
#else
    CHECK_ACL(aclInit(nullptr));
    int32_t deviceId = 0;
    CHECK_ACL(aclrtSetDevice(deviceId));
    aclrtContext context;
    CHECK_ACL(aclrtCreateContext(&context, deviceId));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));

    uint8_t *xHost, *yHost, *xDevice, *yDevice, *zDevice;
    CHECK_ACL(aclrtMallocHost((void **)&xHost, inputByteSize));
    CHECK_ACL(aclrtMallocHost((void **)&yHost, inputByteSize));
    CHECK_ACL(aclrtMalloc((void **)&xDevice, inputByteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&yDevice, inputByteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&zDevice, outputByteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    if (!ReadFile("./input/input_x.bin", inputByteSize, xHost, inputByteSize) ||
        !ReadFile("./input/input_y.bin", inputByteSize, yHost, inputByteSize)) {
        return 1;
    }
    CHECK_ACL(aclrtMemcpy(xDevice, inputByteSize, xHost, inputByteSize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(yDevice, inputByteSize, yHost, inputByteSize, ACL_MEMCPY_HOST_TO_DEVICE));

    add_custom_do(blockDim, nullptr, stream, xDevice, yDevice, zDevice);
    CHECK_ACL(aclrtSynchronizeStream(stream));

    CHECK_ACL(aclrtMemcpy(out.data(), outputByteSize, zDevice, outputByteSize, ACL_MEMCPY_DEVICE_TO_HOST));
    {
        std::vector<uint8_t> golden(outputByteSize);
        if (!ReadFile("./output/golden.bin", outputByteSize, golden.data(), outputByteSize) ||
            extra_checks(stream, xDevice, yDevice, zDevice, outputByteSize, golden.data()) != 0) {
            return 1;
        }
    }
    CHECK_ACL(aclrtFree(xDevice));
    CHECK_ACL(aclrtFree(yDevice));
    CHECK_ACL(aclrtFree(zDevice));
    CHECK_ACL(aclrtFreeHost(xHost));
    CHECK_ACL(aclrtFreeHost(yHost));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtDestroyContext(context));
    CHECK_ACL(aclrtResetDevice(deviceId));
    CHECK_ACL(aclFinalize());
#endif
    if (!WriteFile("./output/output_z.bin", out.data(), outputByteSize)) {
        return 1;
    }
    std::vector<uint8_t> golden(outputByteSize);
    if (!ReadFile("./output/golden.bin", outputByteSize, golden.data(), outputByteSize)) {
        return 1;
    }
    const uint16_t *o = (const uint16_t *)out.data();
    const uint16_t *g = (const uint16_t *)golden.data();
    size_t bad = 0;
    for (size_t i = 0; i < outputByteSize / 2; i++) {
        if (o[i] != g[i]) {
            if (bad < 5) {
                std::fprintf(stderr, "z[%zu] = 0x%04x, expected 0x%04x\n", i, o[i], g[i]);
            }
            bad++;
        }
    }
    if (bad != 0) {
        std::printf("FAIL: %zu of %zu values differ\n", bad, outputByteSize / 2);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
