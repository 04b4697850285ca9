// Loads the kernel binaries built by ascendc_fatbin_library and launches their kernels by name
// through every launch interface of the runtime API (acl_rt.h), checking results and errors.
#include "acl/acl.h"
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

static int failures = 0;

#define CHECK(expr)                                                                          \
    do {                                                                                     \
        aclError e_ = (expr);                                                                \
        if (e_ != ACL_SUCCESS) {                                                             \
            std::printf("FAIL %s:%d %s = %d (%s)\n", __FILE__, __LINE__, #expr, (int)e_,     \
                        aclGetRecentErrMsg());                                               \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

#define EXPECT_ERR(expr, code)                                                               \
    do {                                                                                     \
        aclError e_ = (expr);                                                                \
        if (e_ != (code)) {                                                                  \
            std::printf("FAIL %s:%d %s = %d, expected %d\n", __FILE__, __LINE__, #expr,     \
                        (int)e_, (int)(code));                                               \
            failures++;                                                                      \
        } else {                                                                             \
            std::printf("error %s = %d: %s\n", #expr, (int)e_, aclGetRecentErrMsg());        \
        }                                                                                    \
    } while (0)

static void expect(bool ok, const char *what)
{
    if (!ok) {
        std::printf("FAIL %s\n", what);
        failures++;
    } else {
        std::printf("ok %s\n", what);
    }
}

template <typename T> static T *to_device(const std::vector<T> &h)
{
    void *d = nullptr;
    CHECK(aclrtMalloc(&d, h.size() * sizeof(T), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(d, h.size() * sizeof(T), h.data(), h.size() * sizeof(T),
                      ACL_MEMCPY_HOST_TO_DEVICE));
    return static_cast<T *>(d);
}

template <typename T> static std::vector<T> from_device(const T *d, size_t n)
{
    std::vector<T> h(n);
    CHECK(aclrtMemcpy(h.data(), n * sizeof(T), d, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST));
    return h;
}

int main(int argc, char **argv)
{
    std::string dir = argc > 1 ? argv[1] : ".";
    std::string two = dir + "/two_kernels/two_kernels.o";
    std::string one = dir + "/one_kernel/one_kernel.o";
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));

    aclrtBinHandle bin = nullptr;
    EXPECT_ERR(aclrtBinaryLoadFromFile((dir + "/no_such.o").c_str(), nullptr, &bin),
               ACL_ERROR_INVALID_FILE);
    EXPECT_ERR(aclrtBinaryLoadFromFile(argv[0], nullptr, &bin), ACL_ERROR_INVALID_FILE);
    CHECK(aclrtBinaryLoadFromFile(two.c_str(), nullptr, &bin));

    aclrtFuncHandle scale = nullptr, tiled = nullptr, missing = nullptr;
    EXPECT_ERR(aclrtBinaryGetFunction(bin, "no_such_kernel", &missing), ACL_ERROR_RT_KERNEL_LOOKUP);
    CHECK(aclrtBinaryGetFunction(bin, "scale_add", &scale));
    CHECK(aclrtBinaryGetFunction(bin, "add_tiled", &tiled));
    char name[64] = {};
    CHECK(aclrtGetFunctionName(tiled, sizeof(name), name));
    expect(std::strcmp(name, "add_tiled") == 0, "aclrtGetFunctionName gives add_tiled");

    // 1. aclrtLaunchKernel: the argument block in device memory, each parameter at its natural
    //    alignment: x, y, z (8 bytes each), alpha (float at 24), n (uint32 at 28).
    const uint32_t n = 10000;
    std::vector<float> xh(n), yh(n);
    for (uint32_t i = 0; i < n; i++) {
        xh[i] = (float)(i % 97) * 0.5f;
        yh[i] = (float)(i % 13) - 6.0f;
    }
    float *x = to_device(xh), *y = to_device(yh), *z = nullptr, *w = nullptr;
    CHECK(aclrtMalloc((void **)&z, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc((void **)&w, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    struct ScaleArgs {
        void *x, *y, *z;
        float alpha;
        uint32_t n;
    };
    ScaleArgs a1{x, y, z, 2.0f, n};
    ScaleArgs a2{z, y, w, -1.0f, n}; // reads the first launch's result: stream order
    void *dargs = nullptr;
    CHECK(aclrtMalloc(&dargs, 2 * sizeof(ScaleArgs), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpyAsync(dargs, sizeof(ScaleArgs), &a1, sizeof(ScaleArgs),
                           ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtMemcpyAsync((char *)dargs + sizeof(ScaleArgs), sizeof(ScaleArgs), &a2,
                           sizeof(ScaleArgs), ACL_MEMCPY_HOST_TO_DEVICE, stream));
    CHECK(aclrtLaunchKernel(scale, 7, dargs, sizeof(ScaleArgs), stream));
    CHECK(aclrtLaunchKernel(scale, 3, (char *)dargs + sizeof(ScaleArgs), sizeof(ScaleArgs),
                            stream));
    EXPECT_ERR(aclrtLaunchKernel(scale, 7, dargs, 12, stream), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtSynchronizeStream(stream));
    {
        std::vector<float> zh = from_device(z, n), wh = from_device(w, n);
        int bad = 0;
        for (uint32_t i = 0; i < n; i++) {
            float ze = 2.0f * xh[i] + yh[i];
            if (zh[i] != ze || wh[i] != -ze + yh[i]) {
                bad++;
            }
        }
        expect(bad == 0, "aclrtLaunchKernel: scale_add twice in stream order");
    }

    // 2. The aclrtKernelArgs builder, with two placeholders for the tiling.
    const int32_t total = 8 * 2048, tiles = 8;
    std::vector<aclFloat16> ah(total), bh(total);
    for (int32_t i = 0; i < total; i++) {
        ah[i] = aclFloatToFloat16((float)(i % 50) * 0.25f);
        bh[i] = aclFloatToFloat16((float)(i % 7) - 3.0f);
    }
    aclFloat16 *ad = to_device(ah), *bd = to_device(bh), *cd = nullptr;
    CHECK(aclrtMalloc((void **)&cd, total * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtArgsHandle args = nullptr;
    CHECK(aclrtKernelArgsInit(tiled, &args));
    aclrtParamHandle p[5] = {};
    void *ptrs[3] = {ad, bd, cd};
    for (int i = 0; i < 3; i++) {
        CHECK(aclrtKernelArgsAppend(args, &ptrs[i], sizeof(void *), &p[i]));
    }
    EXPECT_ERR(aclrtLaunchKernelWithConfig(tiled, 8, stream, nullptr, args, nullptr),
               ACL_ERROR_INVALID_PARAM); // not finalized
    CHECK(aclrtKernelArgsAppendPlaceHolder(args, &p[3]));
    CHECK(aclrtKernelArgsAppendPlaceHolder(args, &p[4]));
    int32_t *lenBuf = nullptr, *tileBuf = nullptr;
    CHECK(aclrtKernelArgsGetPlaceHolderBuffer(args, p[3], sizeof(int32_t), (void **)&lenBuf));
    CHECK(aclrtKernelArgsGetPlaceHolderBuffer(args, p[4], sizeof(int32_t), (void **)&tileBuf));
    *lenBuf = total;
    *tileBuf = tiles;
    CHECK(aclrtKernelArgsFinalize(args));
    EXPECT_ERR(aclrtLaunchKernelWithConfig(scale, 8, stream, nullptr, args, nullptr),
               ACL_ERROR_INVALID_PARAM); // args of another kernel
    CHECK(aclrtLaunchKernelWithConfig(tiled, 8, stream, nullptr, args, nullptr));
    CHECK(aclrtSynchronizeStream(stream));
    auto check_add = [&](const char *what) {
        std::vector<aclFloat16> ch = from_device(cd, total);
        int bad = 0;
        for (int32_t i = 0; i < total; i++) {
            float e = aclFloat16ToFloat(aclFloatToFloat16(aclFloat16ToFloat(ah[i]) +
                                                          aclFloat16ToFloat(bh[i])));
            if (aclFloat16ToFloat(ch[i]) != e) {
                bad++;
            }
        }
        expect(bad == 0, what);
    };
    check_add("aclrtLaunchKernelWithConfig: add_tiled with placeholder tiling");

    // 3. aclrtLaunchKernelWithHostArgs: the placeholders' data inside the host block.
    CHECK(aclrtMemset(cd, total * 2, 0, total * 2));
    struct HostArgs {
        void *x, *y, *z;
        int32_t *total, *tiles;
        int32_t totalValue, tilesValue;
    } ha{ad, bd, cd, nullptr, nullptr, total, tiles};
    aclrtPlaceHolderInfo ph[2] = {{offsetof(HostArgs, total), offsetof(HostArgs, totalValue)},
                                  {offsetof(HostArgs, tiles), offsetof(HostArgs, tilesValue)}};
    CHECK(aclrtLaunchKernelWithHostArgs(tiled, 8, stream, nullptr, &ha, sizeof(ha), ph, 2));
    CHECK(aclrtSynchronizeStream(stream));
    check_add("aclrtLaunchKernelWithHostArgs: add_tiled");

    // 4. A launch configuration: accepted attributes.
    aclrtLaunchKernelAttr attr[1];
    attr[0].id = ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE;
    attr[0].value.schemMode = 1;
    aclrtLaunchKernelCfg cfg{attr, 1};
    CHECK(aclrtMemset(cd, total * 2, 0, total * 2));
    CHECK(aclrtLaunchKernelWithConfig(tiled, 8, stream, &cfg, args, nullptr));
    CHECK(aclrtSynchronizeStream(stream));
    check_add("aclrtLaunchKernelWithConfig with a SCHEM_MODE attribute");

    // 5. aclrtBinaryLoadFromData, and aclrtBinaryGetFunctionByEntry (the tiling key).
    std::ifstream f(one, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    aclrtBinHandle bin1 = nullptr;
    CHECK(aclrtBinaryLoadFromData(bytes.data(), bytes.size(), nullptr, &bin1));
    aclrtFuncHandle k1 = nullptr, k2 = nullptr;
    CHECK(aclrtBinaryGetFunctionByEntry(bin1, 1, &k1));
    CHECK(aclrtBinaryGetFunctionByEntry(bin1, 2, &k2));
    EXPECT_ERR(aclrtBinaryGetFunctionByEntry(bin, 1, &missing), ACL_ERROR_RT_KERNEL_LOOKUP);
    int32_t *o = nullptr;
    CHECK(aclrtMalloc((void **)&o, 8 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    void *oarg = o;
    CHECK(aclrtLaunchKernelWithHostArgs(k1, 4, stream, nullptr, &oarg, sizeof(oarg), nullptr, 0));
    void *oarg2 = o + 4;
    CHECK(aclrtLaunchKernelWithHostArgs(k2, 4, stream, nullptr, &oarg2, sizeof(oarg2), nullptr, 0));
    CHECK(aclrtSynchronizeStream(stream));
    std::vector<int32_t> oh = from_device(o, 8);
    expect(oh[0] == 100 && oh[3] == 103 && oh[4] == 200 && oh[7] == 203,
           "aclrtBinaryGetFunctionByEntry: tiling keys 1 and 2");

    // 6. A kernel access outside the buffers it was given fails the launch (507015).
    ScaleArgs over{x, y, z, 1.0f, n + 4096};
    CHECK(aclrtLaunchKernelWithHostArgs(scale, 4, stream, nullptr, &over, sizeof(over), nullptr, 0));
    EXPECT_ERR(aclrtSynchronizeStream(stream), ACL_ERROR_RT_AICORE_EXCEPTION);

    // 7. Unload: the handles go with the binary.
    CHECK(aclrtBinaryUnLoad(bin1));
    EXPECT_ERR(aclrtLaunchKernelWithHostArgs(k1, 4, stream, nullptr, &oarg, sizeof(oarg), nullptr, 0),
               ACL_ERROR_INVALID_PARAM);
    EXPECT_ERR(aclrtBinaryUnLoad(bin1), ACL_ERROR_INVALID_PARAM);
    CHECK(aclrtBinaryUnLoad(bin));

    CHECK(aclrtFree(dargs));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf(failures == 0 ? "PASS\n" : "FAILED %d\n", failures);
    return failures == 0 ? 0 : 1;
}
