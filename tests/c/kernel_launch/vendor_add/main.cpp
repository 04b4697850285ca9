/* Host side of the KernelLaunch-style AddCustom project: z = x + y over 8 * 2048 fp16 values
 * with blockDim 8. RUN_MODE npu launches through aclrtlaunch_add_custom.h on a stream;
 * RUN_MODE cpu (ASCENDC_CPU_DEBUG, tikicpulib) runs the kernel with ICPU_RUN_KF on GmAlloc
 * buffers. Reads input/input_{x,y}.bin, writes output/output_z.bin and compares it with
 * output/golden.bin (its own check): exit 0 and "PASS" when they agree. */
#include "data_utils.h"
#include <cstring>
#include <vector>
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#include "aclrtlaunch_add_custom.h"
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

    CHECK_ACL(ACLRT_LAUNCH_KERNEL(add_custom)(blockDim, stream, xDevice, yDevice, zDevice));
    CHECK_ACL(aclrtSynchronizeStream(stream));

    CHECK_ACL(aclrtMemcpy(out.data(), outputByteSize, zDevice, outputByteSize, ACL_MEMCPY_DEVICE_TO_HOST));
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
