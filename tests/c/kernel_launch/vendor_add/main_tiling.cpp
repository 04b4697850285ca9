/* Host side of the KernelLaunch-style AddCustom project with tiling (the layout of the vendor
 * AddKernelInvocationTilingNeo sample): z = x + y over 10007 fp16 values (not a multiple of
 * anything) on blockDim 8, the AddCustomTilingData struct passed from the host: by pointer
 * to aclrtlaunch_add_custom_tiling (RUN_MODE npu: the generated header takes the struct's
 * address and the launch copies it), by value to ICPU_RUN_KF (RUN_MODE cpu).
 * Reads input/input_{x,y}.bin, writes output/output_z.bin, compares with output/golden.bin. */
#include "add_custom_tiling.h"
#include "data_utils.h"
#include <cstring>
#include <vector>
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#include "aclrtlaunch_add_custom_tiling.h"
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void add_custom_tiling(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                        AddCustomTilingData tiling);
#endif

int32_t main(int32_t argc, char *argv[])
{
    (void)argc;
    (void)argv;
    const uint32_t blockDim = 8, length = 10007;
    size_t byteSize = length * sizeof(uint16_t);
    std::vector<uint8_t> out(byteSize);

#ifdef ASCENDC_CPU_DEBUG
    uint8_t *tiling = (uint8_t *)AscendC::GmAlloc(sizeof(AddCustomTilingData));
    *reinterpret_cast<AddCustomTilingData *>(tiling) = AddCustomTiling(length, blockDim, 256);
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(byteSize);
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(byteSize);
    uint8_t *z = (uint8_t *)AscendC::GmAlloc(byteSize);
    if (!ReadFile("./input/input_x.bin", byteSize, x, byteSize) ||
        !ReadFile("./input/input_y.bin", byteSize, y, byteSize)) {
        return 1;
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_custom_tiling, blockDim, x, y, z, *reinterpret_cast<AddCustomTilingData *>(tiling));
    std::memcpy(out.data(), z, byteSize);
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)y);
    AscendC::GmFree((void *)z);
    AscendC::GmFree((void *)tiling);
#else
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    AddCustomTilingData *tiling;
    CHECK_ACL(aclrtMallocHost((void **)&tiling, sizeof(AddCustomTilingData)));
    *tiling = AddCustomTiling(length, blockDim, 256);
    uint8_t *xHost, *yHost, *xDevice, *yDevice, *zDevice;
    CHECK_ACL(aclrtMallocHost((void **)&xHost, byteSize));
    CHECK_ACL(aclrtMallocHost((void **)&yHost, byteSize));
    CHECK_ACL(aclrtMalloc((void **)&xDevice, byteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&yDevice, byteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&zDevice, byteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    if (!ReadFile("./input/input_x.bin", byteSize, xHost, byteSize) ||
        !ReadFile("./input/input_y.bin", byteSize, yHost, byteSize)) {
        return 1;
    }
    CHECK_ACL(aclrtMemcpy(xDevice, byteSize, xHost, byteSize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(yDevice, byteSize, yHost, byteSize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(blockDim, stream, xDevice, yDevice, zDevice, tiling));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(out.data(), byteSize, zDevice, byteSize, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_ACL(aclrtFree(xDevice));
    CHECK_ACL(aclrtFree(yDevice));
    CHECK_ACL(aclrtFree(zDevice));
    CHECK_ACL(aclrtFreeHost(xHost));
    CHECK_ACL(aclrtFreeHost(yHost));
    CHECK_ACL(aclrtFreeHost(tiling));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
#endif
    if (!WriteFile("./output/output_z.bin", out.data(), byteSize)) {
        return 1;
    }
    std::vector<uint8_t> golden(byteSize);
    if (!ReadFile("./output/golden.bin", byteSize, golden.data(), byteSize)) {
        return 1;
    }
    if (std::memcmp(out.data(), golden.data(), byteSize) != 0) {
        std::printf("FAIL: output_z.bin differs from golden.bin\n");
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
