/* Host programs for tests/tests/kernel_launch.rs: the AddCustom kernels of tests/c/ascendc
 * launched through the generated aclrtlaunch_*.h headers (npu-emu ascendc-stub) with
 * ACLRT_LAUNCH_KERNEL on emulated streams, results checked against an fp16 reference
 * (GCC's _Float16, host_f16.h). One mode per run:
 *   sweep    add_custom_tiling at blockDim 1, 3, 8, 48, 200 and lengths including uneven ones,
 *            and the fixed-size add_custom (8 x 2048) at blockDim 8
 *   streams  two launches on two streams at once
 *   order    memcpy-async / launch / launch / memcpy-async on one stream, one synchronize
 *   errors   bad blockDim, host and foreign pointers, bad stream, NULL tiling: codes + messages
 *   oob      a launch whose tiling overruns the buffers: 507015 at synchronize, then recovery
 *   soc      the SoC name and core counts the runtime reports, then a 200-block launch */
#include <cstdint>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "add_custom_tiling.h"
#include "aclrtlaunch_add_custom.h"
#include "aclrtlaunch_add_custom_tiling.h"
#include "common.h"
#include "host_f16.h"

static const size_t TILE = 64; /* elements per tile (a multiple of 16) */

struct Bufs {
    size_t n;
    void *x, *y, *z;
    std::vector<uint16_t> hx, hy;
};

static Bufs make(size_t n, uint32_t seed)
{
    Bufs b;
    b.n = n;
    b.hx.resize(n);
    b.hy.resize(n);
    fill_f16(b.hx.data(), n, seed, 100.0f);
    fill_f16(b.hy.data(), n, seed + 7, 100.0f);
    CHECK(aclrtMalloc(&b.x, n * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b.y, n * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b.z, n * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(b.x, n * 2, b.hx.data(), n * 2, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(b.y, n * 2, b.hy.data(), n * 2, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemset(b.z, n * 2, 0xFF, n * 2)); /* NaNs: an element never written shows */
    return b;
}

static void release(Bufs &b)
{
    CHECK(aclrtFree(b.x));
    CHECK(aclrtFree(b.y));
    CHECK(aclrtFree(b.z));
}

/* z must be x + y (each sum rounded to fp16). */
static int verify(const char *what, Bufs &b)
{
    std::vector<uint16_t> hz(b.n);
    CHECK(aclrtMemcpy(hz.data(), b.n * 2, b.z, b.n * 2, ACL_MEMCPY_DEVICE_TO_HOST));
    const uint16_t *x = b.hx.data(), *y = b.hy.data();
    return check_f16(what, hz.data(), b.n, [&](size_t i) {
        return static_cast<float>(f16_from_bits(x[i])) + static_cast<float>(f16_from_bits(y[i]));
    });
}

static int sweep(aclrtStream s)
{
    const uint32_t dims[] = {1, 3, 8, 48, 200}; /* 200: more blocks than the 48 cores */
    const size_t lens[] = {16, 1000, 4097, 8 * 2048 + 5};
    int bad = 0;
    for (uint32_t bd : dims) {
        for (size_t n : lens) {
            if (n < bd) {
                continue;
            }
            Bufs b = make(n, (uint32_t)(n * 131 + bd));
            AddCustomTilingData t = AddCustomTiling((uint32_t)n, bd, TILE);
            CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(bd, s, b.x, b.y, b.z, &t));
            CHECK(aclrtSynchronizeStream(s));
            char what[96];
            std::snprintf(what, sizeof what, "add_custom_tiling blockDim %u length %zu", bd, n);
            int r = verify(what, b);
            std::printf("%s: %s\n", what, r ? "FAIL" : "ok");
            bad |= r;
            release(b);
        }
    }
    /* The fixed-size kernel of the vendor sample: 8 blocks of 2048. */
    Bufs b = make(8 * 2048, 99);
    CHECK(ACLRT_LAUNCH_KERNEL(add_custom)(8, s, b.x, b.y, b.z));
    CHECK(aclrtSynchronizeStream(s));
    int r = verify("add_custom blockDim 8", b);
    std::printf("add_custom blockDim 8 length 16384: %s\n", r ? "FAIL" : "ok");
    release(b);
    return bad | r;
}

static int streams()
{
    aclrtStream s1, s2;
    CHECK(aclrtCreateStream(&s1));
    CHECK(aclrtCreateStream(&s2));
    Bufs a = make(50000, 1), b = make(33333, 2);
    AddCustomTilingData ta = AddCustomTiling(50000, 8, TILE), tb = AddCustomTiling(33333, 5, TILE);
    CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(8, s1, a.x, a.y, a.z, &ta));
    CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(5, s2, b.x, b.y, b.z, &tb));
    /* The tiling structs are copied at the launch: changing them now changes nothing. */
    ta.totalLength = tb.totalLength = 0;
    CHECK(aclrtSynchronizeStream(s2));
    CHECK(aclrtSynchronizeStream(s1));
    int r = verify("stream 1", a) | verify("stream 2", b);
    std::printf("two streams: %s\n", r ? "FAIL" : "ok");
    release(a);
    release(b);
    CHECK(aclrtDestroyStream(s1));
    CHECK(aclrtDestroyStream(s2));
    return r;
}

/* One stream, no synchronize in between: upload, z = x + y, w = z + y, download. */
static int order(aclrtStream s)
{
    const size_t n = 20000;
    Bufs b = make(n, 5);
    void *w;
    CHECK(aclrtMalloc(&w, n * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<uint16_t> hx2(n), hw(n, 0);
    fill_f16(hx2.data(), n, 77, 50.0f);
    void *hostx;
    CHECK(aclrtMallocHost(&hostx, n * 2));
    std::memcpy(hostx, hx2.data(), n * 2);
    AddCustomTilingData t = AddCustomTiling((uint32_t)n, 7, TILE);
    AddCustomTilingData t3 = AddCustomTiling((uint32_t)n, 3, TILE);
    for (int round = 0; round < 3; round++) {
        CHECK(aclrtMemcpyAsync(b.x, n * 2, hostx, n * 2, ACL_MEMCPY_HOST_TO_DEVICE, s));
        CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(7, s, b.x, b.y, b.z, &t));
        CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(3, s, b.z, b.y, w, &t3));
        CHECK(aclrtMemcpyAsync(hw.data(), n * 2, w, n * 2, ACL_MEMCPY_DEVICE_TO_HOST, s));
        CHECK(aclrtSynchronizeStream(s));
        const uint16_t *x = hx2.data(), *y = b.hy.data();
        int r = check_f16("w = (x + y) + y", hw.data(), n, [&](size_t i) {
            _Float16 z = static_cast<_Float16>(static_cast<float>(f16_from_bits(x[i])) +
                                               static_cast<float>(f16_from_bits(y[i])));
            return static_cast<float>(z) + static_cast<float>(f16_from_bits(y[i]));
        });
        if (r) {
            std::printf("stream order round %d: FAIL\n", round);
            return 1;
        }
        /* Next round uploads new x: the previous launches must not see it. */
        fill_f16(hx2.data(), n, 78 + round, 50.0f);
        std::memcpy(hostx, hx2.data(), n * 2);
    }
    std::printf("stream order: ok\n");
    CHECK(aclrtFreeHost(hostx));
    CHECK(aclrtFree(w));
    release(b);
    return 0;
}

static int errors(aclrtStream s)
{
    Bufs b = make(1024, 3);
    AddCustomTilingData t = AddCustomTiling(1024, 4, TILE);
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(0, s, b.x, b.y, b.z, &t), 107000,
                "aclrtlaunch_add_custom_tiling: blockDim = 0 is invalid: expected 1..=65535");
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(65536, s, b.x, b.y, b.z, &t), 107000,
                "blockDim = 65536 is invalid");
    std::vector<uint16_t> host(1024);
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, host.data(), b.z, &t), 107000,
                "aclrtlaunch_add_custom_tiling: argument y = 0x");
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, host.data(), b.z, &t), 107000,
                "is a host address, not device memory");
    void *pinned;
    CHECK(aclrtMallocHost(&pinned, 4096));
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom)(8, s, pinned, b.y, b.z), 107000,
                "argument x = 0x");
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom)(8, s, pinned, b.y, b.z), 107000,
                "host memory from aclrtMallocHost");
    CHECK(aclrtFreeHost(pinned));
    void *freed;
    CHECK(aclrtMalloc(&freed, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtFree(freed));
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, b.y, freed, &t), 107000,
                "argument z = 0x");
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, b.y, freed, &t), 107000,
                "is not a live device allocation");
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, (aclrtStream)(uintptr_t)0x1234, b.x, b.y,
                                                       b.z, &t),
                ACL_ERROR_INVALID_PARAM, "aclrtlaunch_add_custom_tiling: stream = 0x1234");
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, b.y, b.z, nullptr),
                ACL_ERROR_INVALID_PARAM, "aclrtlaunch_add_custom_tiling: argument tiling is NULL");
    /* Memory of another device. */
    CHECK(aclrtSetDevice(1));
    void *other;
    CHECK(aclrtMalloc(&other, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtSetDevice(0));
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, other, b.z, &t), 107000,
                "is memory of device 1");
    /* A virtual range mapped with aclrtMapMem: not supported as a kernel argument (yet). */
    aclrtPhysicalMemProp prop;
    std::memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    void *va = nullptr;
    aclrtDrvMemHandle h;
    CHECK(aclrtReserveMemAddress(&va, 2u << 20, 0, nullptr, 0));
    CHECK(aclrtMallocPhysical(&h, 2u << 20, &prop, 0));
    CHECK(aclrtMapMem(va, 2u << 20, 0, h, 0));
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, b.y, va, &t), 207000,
                "argument z = 0x");
    EXPECT_CODE(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, b.y, va, &t), 207000,
                "mapped with aclrtMapMem");
    CHECK(aclrtUnmapMem(va));
    CHECK(aclrtFreePhysical(h));
    CHECK(aclrtReleaseMemAddress(va));
    /* Nothing of the rejected launches ran. */
    CHECK(aclrtSynchronizeStream(s));
    std::vector<uint16_t> hz(1024);
    CHECK(aclrtMemcpy(hz.data(), 2048, b.z, 2048, ACL_MEMCPY_DEVICE_TO_HOST));
    for (uint16_t v : hz) {
        if (v != 0xFFFF) {
            std::printf("a rejected launch wrote z: FAIL\n");
            return 1;
        }
    }
    /* The default stream (NULL) works. */
    CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, nullptr, b.x, b.y, b.z, &t));
    CHECK(aclrtSynchronizeStream(nullptr));
    int r = verify("default stream", b);
    release(b);
    std::printf("errors: %s\n", r ? "FAIL" : "ok");
    return r;
}

static uint32_t g_exception_code = 0;
static void on_exception(aclrtExceptionInfo *info)
{
    g_exception_code = aclrtGetErrorCodeFromExceptionInfo(info);
}

static int oob(aclrtStream s)
{
    CHECK(aclrtSetExceptionInfoCallback(on_exception));
    const size_t n = 4096;
    Bufs b = make(n, 9);
    /* The tiling claims twice the length: the blocks of the upper half read past x. */
    AddCustomTilingData t = AddCustomTiling((uint32_t)(2 * n), 4, TILE);
    CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, b.y, b.z, &t));
    aclError e = aclrtSynchronizeStream(s);
    const char *m = aclGetRecentErrMsg();
    std::printf("synchronize: %d\nmessage: %s\n", (int)e, m ? m : "(none)");
    std::printf("exception callback: %u\n", g_exception_code);
    if (e != 507015) {
        return 1;
    }
    /* Reported once; the stream stays usable. */
    CHECK(aclrtSynchronizeStream(s));
    t = AddCustomTiling((uint32_t)n, 4, TILE);
    CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(4, s, b.x, b.y, b.z, &t));
    CHECK(aclrtSynchronizeStream(s));
    int r = verify("after the fault", b);
    release(b);
    std::printf("recovered: %s\n", r ? "FAIL" : "ok");
    return r;
}

/* What the runtime says about the emulated SoC, then more blocks than it has cores. */
static int soc(aclrtStream s)
{
    int64_t aic = -1, vec = -1, cube = -1, capAic = -1, capVec = -1;
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &aic));
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_CUBE_CORE_NUM, &cube));
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &vec));
    CHECK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &capAic));
    CHECK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &capVec));
    std::printf("soc %s: aicore %lld cube %lld vector %lld; capability aicore %lld vector %lld\n",
                aclrtGetSocName(), (long long)aic, (long long)cube, (long long)vec, (long long)capAic,
                (long long)capVec);
    const size_t n = 8 * 2048 + 5;
    Bufs b = make(n, 4242);
    AddCustomTilingData t = AddCustomTiling((uint32_t)n, 200, TILE);
    CHECK(ACLRT_LAUNCH_KERNEL(add_custom_tiling)(200, s, b.x, b.y, b.z, &t));
    CHECK(aclrtSynchronizeStream(s));
    int r = verify("add_custom_tiling blockDim 200", b);
    std::printf("blockDim 200: %s\n", r ? "FAIL" : "ok");
    release(b);
    return r;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "sweep";
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    int r;
    if (!std::strcmp(mode, "sweep")) {
        r = sweep(s);
    } else if (!std::strcmp(mode, "streams")) {
        r = streams();
    } else if (!std::strcmp(mode, "order")) {
        r = order(s);
    } else if (!std::strcmp(mode, "errors")) {
        r = errors(s);
    } else if (!std::strcmp(mode, "oob")) {
        r = oob(s);
    } else if (!std::strcmp(mode, "soc")) {
        r = soc(s);
    } else {
        std::fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("%s\n", r ? "FAIL" : "PASS");
    return r;
}
