// The documented two-phase aclnnNpuFormatCast flow, written the way the API reference's
// example program is laid out: ND tensor on the device, CalculateSizeAndFormat, the private
// tensor built from the returned storage shape, GetWorkspaceSize, a workspace only when
// it is > 0, the execute call, synchronize, copy back, destroy everything.
// argv[1]: "nd2nz" (fp16 [k,n] -> FRACTAL_NZ and back), "ndc1hwc0" (int32 NCDHW -> NDC1HWC0
// with additionalDtype -1), "fz3d" (fp16 NCDHW -> FRACTAL_Z_3D), and from the newer
// reference's A2/A3 pair table "nchw5hd" (fp32 NCHW <-> NC1HWC0, C0 8) and "hwcnfz" (int8
// HWCN <-> FRACTAL_Z).
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/aclnn_npu_format_cast.h"

#define CHECK_RET(cond, expr) \
    do {                      \
        if (!(cond)) {        \
            expr;             \
        }                     \
    } while (0)
#define LOG_PRINT(...) printf(__VA_ARGS__)

static int64_t ShapeSize(const std::vector<int64_t> &s)
{
    int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

static std::vector<int64_t> Strides(const std::vector<int64_t> &s)
{
    std::vector<int64_t> st(s.size(), 1);
    for (int64_t i = (int64_t)s.size() - 2; i >= 0; i--) st[i] = s[i + 1] * st[i + 1];
    return st;
}

template <typename T>
static int MakeTensor(const std::vector<T> &host, const std::vector<int64_t> &view, aclFormat fmt,
                      const int64_t *storage, uint64_t storageNum, size_t bytes, aclDataType dt,
                      void **dev, aclTensor **t)
{
    auto ret = aclrtMalloc(dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    size_t copy = host.size() * sizeof(T) < bytes ? host.size() * sizeof(T) : bytes;
    ret = aclrtMemcpy(*dev, bytes, host.data(), copy, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    auto st = Strides(view);
    *t = aclCreateTensor(view.data(), view.size(), dt, st.data(), 0, fmt, storage, storageNum, *dev);
    CHECK_RET(*t != nullptr, LOG_PRINT("aclCreateTensor failed\n"); return 1);
    return 0;
}

// One conversion src -> dstFormat; returns the private tensor's host copy and storage shape.
template <typename T>
static int Cast(aclrtStream stream, const std::vector<T> &host, const std::vector<int64_t> &shape,
                aclFormat srcFmt, int dstFormat, aclDataType dt, std::vector<int64_t> &outShape,
                int &outFormat, std::vector<T> &out)
{
    void *srcDev = nullptr, *dstDev = nullptr, *ws = nullptr;
    aclTensor *src = nullptr, *dst = nullptr;
    int ret = MakeTensor(host, shape, srcFmt, shape.data(), shape.size(), host.size() * sizeof(T), dt,
                         &srcDev, &src);
    CHECK_RET(ret == 0, return ret);
    int64_t *dstShape = nullptr;
    uint64_t dstShapeSize = 0;
    int actualFormat = -1;
    ret = aclnnNpuFormatCastCalculateSizeAndFormat(src, dstFormat, -1, &dstShape, &dstShapeSize,
                                                    &actualFormat);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnNpuFormatCastCalculateSizeAndFormat failed. ERROR: %d %s\n", ret,
                        aclGetRecentErrMsg());
              return ret);
    outShape.assign(dstShape, dstShape + dstShapeSize);
    outFormat = actualFormat;
    std::vector<T> dstHost(ShapeSize(outShape), (T)0x55);
    ret = MakeTensor(dstHost, shape, (aclFormat)actualFormat, dstShape, dstShapeSize,
                     dstHost.size() * sizeof(T), dt, &dstDev, &dst);
    CHECK_RET(ret == 0, return ret);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnNpuFormatCastGetWorkspaceSize(src, dst, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnNpuFormatCastGetWorkspaceSize failed. ERROR: %d %s\n", ret,
                        aclGetRecentErrMsg());
              return ret);
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&ws, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("workspace malloc failed %d\n", ret); return ret);
    }
    ret = aclnnNpuFormatCast(ws, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnNpuFormatCast failed. ERROR: %d %s\n", ret, aclGetRecentErrMsg());
              return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("sync failed %d\n", ret); return ret);
    out.assign(dstHost.size(), 0);
    ret = aclrtMemcpy(out.data(), out.size() * sizeof(T), dstDev, out.size() * sizeof(T),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy back failed %d\n", ret); return ret);
    delete[] dstShape;
    aclDestroyTensor(src);
    aclDestroyTensor(dst);
    aclrtFree(srcDev);
    aclrtFree(dstDev);
    if (ws) aclrtFree(ws);
    return 0;
}

// The inverse: a private tensor (view = logical shape, storage = its private shape) back to
// the plain format `dstFormat`, returned in `out`.
template <typename T>
static int CastBack(aclrtStream stream, const std::vector<T> &priv, const std::vector<int64_t> &view,
                    const std::vector<int64_t> &privShape, aclFormat privFmt, int dstFormat, aclDataType dt,
                    std::vector<T> &out)
{
    void *srcDev = nullptr, *dstDev = nullptr, *ws = nullptr;
    aclTensor *src = nullptr, *dst = nullptr;
    if (MakeTensor(priv, view, privFmt, privShape.data(), privShape.size(), priv.size() * sizeof(T), dt, &srcDev,
                   &src))
        return 1;
    int64_t *shape = nullptr;
    uint64_t num = 0;
    int fmt = -1;
    int ret = aclnnNpuFormatCastCalculateSizeAndFormat(src, dstFormat, -1, &shape, &num, &fmt);
    CHECK_RET(ret == 0, LOG_PRINT("calc back %d %s\n", ret, aclGetRecentErrMsg()); return 1);
    if (fmt != dstFormat || std::vector<int64_t>(shape, shape + num) != view) {
        fprintf(stderr, "calc back: format %d (want %d), %lu dims\n", fmt, dstFormat, (unsigned long)num);
        return 1;
    }
    std::vector<T> zeros(ShapeSize(view), 0);
    if (MakeTensor(zeros, view, (aclFormat)fmt, shape, num, zeros.size() * sizeof(T), dt, &dstDev, &dst)) return 1;
    uint64_t wsSize = 0;
    aclOpExecutor *ex = nullptr;
    ret = aclnnNpuFormatCastGetWorkspaceSize(src, dst, &wsSize, &ex);
    CHECK_RET(ret == 0, LOG_PRINT("ws back %d %s\n", ret, aclGetRecentErrMsg()); return 1);
    if (wsSize > 0) aclrtMalloc(&ws, wsSize, ACL_MEM_MALLOC_HUGE_FIRST);
    ret = aclnnNpuFormatCast(ws, wsSize, ex, stream);
    CHECK_RET(ret == 0, LOG_PRINT("exec back %d %s\n", ret, aclGetRecentErrMsg()); return 1);
    CHECK_RET(aclrtSynchronizeStream(stream) == 0, return 1);
    out.assign(zeros.size(), 0);
    aclrtMemcpy(out.data(), out.size() * sizeof(T), dstDev, out.size() * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST);
    delete[] shape;
    aclDestroyTensor(src);
    aclDestroyTensor(dst);
    aclrtFree(srcDev);
    aclrtFree(dstDev);
    if (ws) aclrtFree(ws);
    return 0;
}

static int fails = 0;
#define EXPECT(c)                                                         \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "line %d: expectation failed: %s\n", __LINE__, #c); \
            fails++;                                                      \
        }                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "nd2nz";
    int32_t deviceId = 0;
    aclrtStream stream = nullptr;
    auto ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed %d\n", ret); return 1);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed %d\n", ret); return 1);
    ret = aclrtCreateStream(&stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed %d\n", ret); return 1);

    if (strcmp(mode, "nd2nz") == 0) {
        // fp16 [k, n] = [33, 20]: C0 16, storage [ceil(20/16), ceil(33/16), 16, 16] = [2,3,16,16]
        const int64_t k = 33, n = 20;
        std::vector<uint16_t> host(k * n);
        for (int64_t i = 0; i < k * n; i++) host[i] = (uint16_t)(i + 1);
        std::vector<int64_t> shape;
        int fmt = -1;
        std::vector<uint16_t> nz;
        if (Cast(stream, host, {k, n}, ACL_FORMAT_ND, ACL_FORMAT_FRACTAL_NZ, ACL_FLOAT16, shape, fmt, nz))
            return 1;
        EXPECT(fmt == ACL_FORMAT_FRACTAL_NZ);
        EXPECT((shape == std::vector<int64_t>{2, 3, 16, 16}));
        for (int64_t w1 = 0; w1 < 2; w1++)
            for (int64_t r = 0; r < 48; r++)
                for (int64_t w0 = 0; w0 < 16; w0++) {
                    int64_t col = w1 * 16 + w0;
                    uint16_t want = (r < k && col < n) ? host[r * n + col] : 0;
                    uint16_t got = nz[(w1 * 48 + r) * 16 + w0];
                    if (got != want) {
                        fprintf(stderr, "nz[%ld][%ld][%ld] = %u, want %u\n", w1, r, w0, got, want);
                        return 1;
                    }
                }
        // and back: NZ tensor (view [k,n], storage = NZ shape) -> ND
        void *nzDev = nullptr, *ndDev = nullptr;
        aclTensor *nzT = nullptr, *ndT = nullptr;
        std::vector<int64_t> view = {k, n};
        if (MakeTensor(nz, view, ACL_FORMAT_FRACTAL_NZ, shape.data(), shape.size(), nz.size() * 2,
                       ACL_FLOAT16, &nzDev, &nzT))
            return 1;
        int64_t *ndShape = nullptr;
        uint64_t ndNum = 0;
        int ndFmt = -1;
        ret = aclnnNpuFormatCastCalculateSizeAndFormat(nzT, ACL_FORMAT_ND, -1, &ndShape, &ndNum, &ndFmt);
        CHECK_RET(ret == 0, LOG_PRINT("calc NZ->ND %d %s\n", ret, aclGetRecentErrMsg()); return 1);
        EXPECT(ndFmt == ACL_FORMAT_ND);
        EXPECT(ndNum == 2 && ndShape[0] == k && ndShape[1] == n);
        std::vector<uint16_t> zeros(k * n, 0);
        if (MakeTensor(zeros, view, ACL_FORMAT_ND, ndShape, ndNum, k * n * 2, ACL_FLOAT16, &ndDev, &ndT))
            return 1;
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        ret = aclnnNpuFormatCastGetWorkspaceSize(nzT, ndT, &ws, &ex);
        CHECK_RET(ret == 0, LOG_PRINT("ws NZ->ND %d %s\n", ret, aclGetRecentErrMsg()); return 1);
        void *wsp = nullptr;
        if (ws > 0) aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST);
        ret = aclnnNpuFormatCast(wsp, ws, ex, stream);
        CHECK_RET(ret == 0, LOG_PRINT("exec NZ->ND %d %s\n", ret, aclGetRecentErrMsg()); return 1);
        CHECK_RET(aclrtSynchronizeStream(stream) == 0, return 1);
        std::vector<uint16_t> back(k * n);
        aclrtMemcpy(back.data(), k * n * 2, ndDev, k * n * 2, ACL_MEMCPY_DEVICE_TO_HOST);
        EXPECT(back == host);
        delete[] ndShape;
        aclDestroyTensor(nzT);
        aclDestroyTensor(ndT);
        aclrtFree(nzDev);
        aclrtFree(ndDev);
        if (wsp) aclrtFree(wsp);
    } else if (strcmp(mode, "ndc1hwc0") == 0) {
        // int32 NCDHW [1,17,1,2,2], additionalDtype -1: C0 = 32 / 4 = 8, C1 = 3
        const int64_t N = 1, C = 17, D = 1, H = 2, W = 2;
        std::vector<int32_t> host(N * C * D * H * W);
        for (size_t i = 0; i < host.size(); i++) host[i] = (int32_t)i;
        std::vector<int64_t> shape;
        int fmt = -1;
        std::vector<int32_t> out;
        if (Cast(stream, host, {N, C, D, H, W}, ACL_FORMAT_NCDHW, ACL_FORMAT_NDC1HWC0, ACL_INT32, shape, fmt, out))
            return 1;
        EXPECT(fmt == ACL_FORMAT_NDC1HWC0);
        EXPECT((shape == std::vector<int64_t>{1, 1, 3, 2, 2, 8}));
        for (int64_t c1 = 0; c1 < 3; c1++)
            for (int64_t hw = 0; hw < 4; hw++)
                for (int64_t c0 = 0; c0 < 8; c0++) {
                    int64_t c = c1 * 8 + c0;
                    int32_t want = c < C ? host[c * 4 + hw] : 0;
                    EXPECT(out[(c1 * 4 + hw) * 8 + c0] == want);
                }
    } else if (strcmp(mode, "fz3d") == 0) {
        // fp16 NCDHW weight [N=3, C=5, D=2, H=1, W=2]: C0 16, storage [D*C1*H*W, N1, 16, C0] = [4,1,16,16]
        const int64_t N = 3, C = 5, D = 2, H = 1, W = 2;
        std::vector<uint16_t> host(N * C * D * H * W);
        for (size_t i = 0; i < host.size(); i++) host[i] = (uint16_t)(100 + i);
        std::vector<int64_t> shape;
        int fmt = -1;
        std::vector<uint16_t> out;
        if (Cast(stream, host, {N, C, D, H, W}, ACL_FORMAT_NCDHW, ACL_FRACTAL_Z_3D, ACL_FLOAT16, shape, fmt, out))
            return 1;
        EXPECT(fmt == ACL_FRACTAL_Z_3D);
        EXPECT((shape == std::vector<int64_t>{4, 1, 16, 16}));
        for (int64_t d = 0; d < D; d++)
            for (int64_t w = 0; w < W; w++)
                for (int64_t n0 = 0; n0 < 16; n0++)
                    for (int64_t c0 = 0; c0 < 16; c0++) {
                        uint16_t want = (n0 < N && c0 < C) ? host[(((n0 * C + c0) * D + d) * H) * W + w] : 0;
                        EXPECT(out[((d * W + w) * 16 + n0) * 16 + c0] == want);
                    }
    } else if (strcmp(mode, "undersized") == 0) {
        // The reference's A2 example sizes the NDC1HWC0 destination by the logical N*C*D*H*W
        // elements (68 int32) although its storage shape [1,1,3,2,2,8] holds 96: real hardware
        // writes past the allocation unnoticed; here the execute call refuses with a message.
        std::vector<int64_t> shape5 = {1, 17, 1, 2, 2};
        std::vector<int32_t> host(68, 7);
        void *srcDev = nullptr, *dstDev = nullptr;
        aclTensor *src = nullptr, *dst = nullptr;
        if (MakeTensor(host, shape5, ACL_FORMAT_NCDHW, shape5.data(), 5, 68 * 4, ACL_INT32, &srcDev, &src)) return 1;
        int64_t *dstShape = nullptr;
        uint64_t dstShapeSize = 0;
        int actualFormat = -1;
        ret = aclnnNpuFormatCastCalculateSizeAndFormat(src, ACL_FORMAT_NDC1HWC0, -1, &dstShape, &dstShapeSize,
                                                        &actualFormat);
        CHECK_RET(ret == 0, return 1);
        if (MakeTensor(host, shape5, (aclFormat)actualFormat, dstShape, dstShapeSize, 68 * 4, ACL_INT32, &dstDev,
                       &dst))
            return 1;
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        ret = aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex);
        CHECK_RET(ret == 0, return 1);
        ret = aclnnNpuFormatCast(nullptr, ws, ex, stream);
        const char *msg = aclGetRecentErrMsg();
        EXPECT(ret == 161002);
        EXPECT(msg != nullptr && strstr(msg, "storage shape") != nullptr && strstr(msg, "384 bytes") != nullptr);
        if (msg) printf("%s\n", msg);
        delete[] dstShape;
        aclDestroyTensor(src);
        aclDestroyTensor(dst);
        aclrtFree(srcDev);
        aclrtFree(dstDev);
    } else if (strcmp(mode, "nchw5hd") == 0) {
        // fp32 NCHW [2,19,3,5] -> NC1HWC0 with the 32-byte C0 = 8: [2,3,3,5,8], and back
        const int64_t N = 2, C = 19, H = 3, W = 5, C0 = 8, C1 = 3;
        std::vector<float> host(N * C * H * W);
        for (size_t i = 0; i < host.size(); i++) host[i] = 0.25f * (float)i - 7.0f;
        std::vector<int64_t> shape;
        int fmt = -1;
        std::vector<float> out;
        if (Cast(stream, host, {N, C, H, W}, ACL_FORMAT_NCHW, ACL_FORMAT_NC1HWC0, ACL_FLOAT, shape, fmt, out))
            return 1;
        EXPECT(fmt == ACL_FORMAT_NC1HWC0);
        EXPECT((shape == std::vector<int64_t>{N, C1, H, W, C0}));
        for (int64_t n = 0; n < N; n++)
            for (int64_t c1 = 0; c1 < C1; c1++)
                for (int64_t hw = 0; hw < H * W; hw++)
                    for (int64_t c0 = 0; c0 < C0; c0++) {
                        int64_t c = c1 * C0 + c0;
                        float want = c < C ? host[(n * C + c) * H * W + hw] : 0.0f;
                        EXPECT(out[((n * C1 + c1) * H * W + hw) * C0 + c0] == want);
                    }
        std::vector<float> back;
        if (CastBack(stream, out, {N, C, H, W}, shape, ACL_FORMAT_NC1HWC0, ACL_FORMAT_NCHW, ACL_FLOAT, back))
            return 1;
        EXPECT(back == host);
    } else if (strcmp(mode, "hwcnfz") == 0) {
        // int8 HWCN weight [H=2, W=1, C=33, N=17] -> FRACTAL_Z, C0 32: [C1*H*W, N1, 16, C0] = [4,2,16,32]
        const int64_t H = 2, W = 1, C = 33, N = 17;
        std::vector<int8_t> host(H * W * C * N);
        for (size_t i = 0; i < host.size(); i++) host[i] = (int8_t)(i % 251 - 120);
        std::vector<int64_t> shape;
        int fmt = -1;
        std::vector<int8_t> out;
        if (Cast(stream, host, {H, W, C, N}, ACL_FORMAT_HWCN, ACL_FORMAT_FRACTAL_Z, ACL_INT8, shape, fmt, out))
            return 1;
        EXPECT(fmt == ACL_FORMAT_FRACTAL_Z);
        EXPECT((shape == std::vector<int64_t>{4, 2, 16, 32}));
        for (int64_t c1 = 0; c1 < 2; c1++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t n = 0; n < 32; n++)
                    for (int64_t c0 = 0; c0 < 32; c0++) {
                        int64_t c = c1 * 32 + c0;
                        int8_t want = (c < C && n < N) ? host[((h * W) * C + c) * N + n] : 0;
                        EXPECT(out[(((c1 * H + h) * W) * 32 + n) * 32 + c0] == want);
                    }
        std::vector<int8_t> back;
        if (CastBack(stream, out, {H, W, C, N}, shape, ACL_FORMAT_FRACTAL_Z, ACL_FORMAT_HWCN, ACL_INT8, back))
            return 1;
        EXPECT(back == host);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    if (fails) return 1;
    printf("%s ok\n", mode);
    return 0;
}
