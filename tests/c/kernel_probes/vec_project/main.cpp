/* Host program of the vector probe project: runs leakyrelu_custom (GM tiling, double buffer),
 * sub_muls_custom (tiling by value, TBuf), abs_pad_custom (DataCopyPad tails, scalar argument)
 * and cast_exp_custom (Cast/Exp) and checks each against a host reference. Both branches of a
 * KernelLaunch main.cpp: ACLRT_LAUNCH_KERNEL (RUN_MODE npu) and ICPU_RUN_KF (RUN_MODE cpu). */
#include "data_utils.h"
#include "probe_tiling.h"
#include <cmath>
#include <cstring>
#include <vector>
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#include "aclrtlaunch_leakyrelu_custom.h"
#include "aclrtlaunch_sub_muls_custom.h"
#include "aclrtlaunch_abs_pad_custom.h"
#include "aclrtlaunch_cast_exp_custom.h"
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void leakyrelu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling);
extern "C" __global__ __aicore__ void sub_muls_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, SubMulsTiling tiling);
extern "C" __global__ __aicore__ void abs_pad_custom(GM_ADDR x, GM_ADDR y, uint32_t rowLength);
extern "C" __global__ __aicore__ void cast_exp_custom(GM_ADDR x, GM_ADDR y, uint32_t totalLength);
#endif

typedef _Float16 f16;
static int failures = 0;

static void Expect(bool ok, const char *what, size_t i, double got, double want)
{
    if (!ok && failures++ < 5) {
        std::printf("FAIL %s[%zu]: got %g, want %g\n", what, i, got, want);
    }
}

/* Device buffers: aclrtMalloc in npu mode, GmAlloc in cpu mode. */
static uint8_t *DevAlloc(size_t n)
{
#ifdef ASCENDC_CPU_DEBUG
    return (uint8_t *)AscendC::GmAlloc(n);
#else
    void *p = nullptr;
    CHECK_ACL(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
    return (uint8_t *)p;
#endif
}
static void ToDev(uint8_t *dev, const void *host, size_t n)
{
#ifdef ASCENDC_CPU_DEBUG
    std::memcpy(dev, host, n);
#else
    CHECK_ACL(aclrtMemcpy(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE));
#endif
}
static void FromDev(void *host, const uint8_t *dev, size_t n)
{
#ifdef ASCENDC_CPU_DEBUG
    std::memcpy(host, dev, n);
#else
    CHECK_ACL(aclrtMemcpy(host, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST));
#endif
}
static void DevFree(uint8_t *p)
{
#ifdef ASCENDC_CPU_DEBUG
    AscendC::GmFree((void *)p);
#else
    CHECK_ACL(aclrtFree(p));
#endif
}

int32_t main(int32_t argc, char *argv[])
{
    (void)argc;
    (void)argv;
#ifndef ASCENDC_CPU_DEBUG
    CHECK_ACL(aclInit(nullptr));
    int32_t deviceId = 0;
    CHECK_ACL(aclrtSetDevice(deviceId));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
#else
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
#endif

    /* 1. LeakyRelu: 8 blocks x 2 tiles x 2 buffers x 128 floats. */
    {
        const uint32_t blockDim = 8, total = 8 * 2 * 2 * 128;
        LeakyReluTiling tiling{total, 2, 0.25f};
        std::vector<float> x(total), y(total);
        for (uint32_t i = 0; i < total; i++) {
            x[i] = (float)((int)(i % 97) - 48) / 4.0f;
        }
        uint8_t *xd = DevAlloc(total * 4), *yd = DevAlloc(total * 4), *td = DevAlloc(sizeof tiling);
        uint8_t *wd = DevAlloc(32);
        ToDev(xd, x.data(), total * 4);
        ToDev(td, &tiling, sizeof tiling);
#ifdef ASCENDC_CPU_DEBUG
        ICPU_RUN_KF(leakyrelu_custom, blockDim, xd, yd, wd, td);
#else
        ACLRT_LAUNCH_KERNEL(leakyrelu_custom)(blockDim, stream, xd, yd, wd, td);
        CHECK_ACL(aclrtSynchronizeStream(stream));
#endif
        FromDev(y.data(), yd, total * 4);
        uint32_t arch = 0;
        FromDev(&arch, wd, sizeof arch);
        std::printf("kernel __NPU_ARCH__ %u\n", arch);
        for (uint32_t i = 0; i < total; i++) {
            float want = x[i] >= 0 ? x[i] : x[i] * 0.25f;
            Expect(y[i] == want, "leakyrelu", i, y[i], want);
        }
        DevFree(xd);
        DevFree(yd);
        DevFree(td);
        DevFree(wd);
        std::printf("leakyrelu_custom done\n");
    }

    /* 2. |x - y| * 0.5 in half: 4 blocks x 3 tiles x 64. */
    {
        const uint32_t blockDim = 4, tile = 64, blockLength = 3 * tile, total = blockDim * blockLength;
        SubMulsTiling tiling{blockLength, tile, 0.5f};
        std::vector<f16> x(total), y(total), z(total);
        for (uint32_t i = 0; i < total; i++) {
            x[i] = (f16)((float)(i % 31) * 0.5f);
            y[i] = (f16)((float)(i % 17) * 1.25f);
        }
        uint8_t *xd = DevAlloc(total * 2), *yd = DevAlloc(total * 2), *zd = DevAlloc(total * 2);
        ToDev(xd, x.data(), total * 2);
        ToDev(yd, y.data(), total * 2);
#ifdef ASCENDC_CPU_DEBUG
        ICPU_RUN_KF(sub_muls_custom, blockDim, xd, yd, zd, tiling);
#else
        ACLRT_LAUNCH_KERNEL(sub_muls_custom)(blockDim, stream, xd, yd, zd, &tiling);
        CHECK_ACL(aclrtSynchronizeStream(stream));
#endif
        FromDev(z.data(), zd, total * 2);
        for (uint32_t i = 0; i < total; i++) {
            f16 d = (f16)((float)x[i] - (float)y[i]);
            f16 a = d < (f16)0 ? (f16)(-(float)d) : d;
            f16 want = (f16)((float)a * 0.5f);
            Expect(z[i] == want, "sub_muls", i, (double)z[i], (double)want);
        }
        DevFree(xd);
        DevFree(yd);
        DevFree(zd);
        std::printf("sub_muls_custom done\n");
    }

    /* 3. abs with DataCopyPad: 5 rows of 37 halves (74 bytes each). */
    {
        const uint32_t blockDim = 5, row = 37, total = blockDim * row;
        std::vector<f16> x(total), y(total, (f16)99.0f);
        for (uint32_t i = 0; i < total; i++) {
            x[i] = (f16)((float)((int)i - 90) * 0.75f);
        }
        uint8_t *xd = DevAlloc(total * 2), *yd = DevAlloc(total * 2);
        ToDev(xd, x.data(), total * 2);
        ToDev(yd, y.data(), total * 2);
#ifdef ASCENDC_CPU_DEBUG
        ICPU_RUN_KF(abs_pad_custom, blockDim, xd, yd, row);
#else
        ACLRT_LAUNCH_KERNEL(abs_pad_custom)(blockDim, stream, xd, yd, row);
        CHECK_ACL(aclrtSynchronizeStream(stream));
#endif
        FromDev(y.data(), yd, total * 2);
        for (uint32_t i = 0; i < total; i++) {
            float want = std::fabs((float)x[i]);
            Expect((float)y[i] == want, "abs_pad", i, (double)y[i], want);
        }
        DevFree(xd);
        DevFree(yd);
        std::printf("abs_pad_custom done\n");
    }

    /* 4. half(exp(x) + 1): 2 blocks x 512. */
    {
        const uint32_t blockDim = 2, total = 1024;
        std::vector<f16> x(total), y(total);
        for (uint32_t i = 0; i < total; i++) {
            x[i] = (f16)((float)((int)(i % 64) - 32) / 8.0f);
        }
        uint8_t *xd = DevAlloc(total * 2), *yd = DevAlloc(total * 2);
        ToDev(xd, x.data(), total * 2);
#ifdef ASCENDC_CPU_DEBUG
        ICPU_RUN_KF(cast_exp_custom, blockDim, xd, yd, total);
#else
        ACLRT_LAUNCH_KERNEL(cast_exp_custom)(blockDim, stream, xd, yd, total);
        CHECK_ACL(aclrtSynchronizeStream(stream));
#endif
        FromDev(y.data(), yd, total * 2);
        for (uint32_t i = 0; i < total; i++) {
            float want = std::exp((float)x[i]) + 1.0f;
            float got = (float)y[i];
            Expect(std::fabs(got - want) <= want * 1e-3f, "cast_exp", i, got, want);
        }
        DevFree(xd);
        DevFree(yd);
        std::printf("cast_exp_custom done\n");
    }

#ifndef ASCENDC_CPU_DEBUG
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(deviceId));
    CHECK_ACL(aclFinalize());
#endif
    if (failures != 0) {
        std::printf("FAIL: %d wrong elements\n", failures);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
