// An AclNNInvocation-style program for the two operators of tests/c/opp: it includes the
// generated aclnn_<op>.h headers, links cust_opapi, and checks results and error codes.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn_add_custom.h"
#include "aclnn_scale_add_custom.h"

static int failures = 0;
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        auto r_ = (x);                                                                             \
        if (r_ != 0) {                                                                             \
            printf("FAIL %s = %d: %s\n", #x, (int)r_, aclGetRecentErrMsg());                       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static uint16_t f2h(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t s = (x >> 16) & 0x8000;
    int e = ((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = (x >> 13) & 0x3ff;
    return e <= 0 ? s : (s | (e << 10) | m);
}
static float h2f(uint16_t h)
{
    uint32_t s = (h & 0x8000) << 16;
    int e = (h >> 10) & 0x1f;
    uint32_t m = h & 0x3ff;
    if (e == 0) {
        return 0.0f;
    }
    uint32_t x = s | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

struct Dev {
    void *p = nullptr;
    aclTensor *t = nullptr;
    size_t bytes = 0;
};

static Dev make(const std::vector<int64_t> &shape, aclDataType dt, const void *host)
{
    Dev d;
    int64_t n = 1;
    for (auto s : shape) n *= s;
    d.bytes = n * (dt == ACL_FLOAT ? 4 : 2);
    aclrtMalloc(&d.p, d.bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (host) aclrtMemcpy(d.p, d.bytes, host, d.bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int i = (int)shape.size() - 2; i >= 0; i--) strides[i] = strides[i + 1] * shape[i + 1];
    d.t = aclCreateTensor(shape.data(), shape.size(), dt, strides.data(), 0, ACL_FORMAT_ND, shape.data(), shape.size(), d.p);
    return d;
}

static void expect_code(const char *what, int got, int want, const char *must_name)
{
    const char *m = aclGetRecentErrMsg();
    std::string msg = m ? m : "";
    bool ok = got == want && (must_name == nullptr || msg.find(must_name) != std::string::npos);
    printf("%s %s: %d (want %d) %s\n", ok ? "PASS" : "FAIL", what, got, want, msg.c_str());
    failures += !ok;
}

static int scale_add(aclrtStream stream, aclDataType dt, bool with_bias, int64_t rows, int64_t cols, float alpha,
                     const std::vector<int64_t> &shift)
{
    float shiftSum = 0.0f;
    for (auto v : shift) shiftSum += (float)v;
    aclIntArray *sh = shift.empty() ? nullptr : aclCreateIntArray(shift.data(), shift.size());
    int64_t n = rows * cols;
    std::vector<float> x(n), b(n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)((i * 7) % 23) - 11.0f;
        b[i] = (float)(i % 5) * 0.5f;
    }
    std::vector<uint16_t> xh(n), bh(n);
    for (int64_t i = 0; i < n; i++) {
        xh[i] = f2h(x[i]);
        bh[i] = f2h(b[i]);
    }
    const void *xs = dt == ACL_FLOAT ? (const void *)x.data() : (const void *)xh.data();
    const void *bs = dt == ACL_FLOAT ? (const void *)b.data() : (const void *)bh.data();
    Dev dx = make({rows, cols}, dt, xs), db = make({rows, cols}, dt, bs), dz = make({rows, cols}, dt, nullptr);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CHECK(aclnnScaleAddCustomGetWorkspaceSize(dx.t, with_bias ? db.t : nullptr, dz.t, alpha, sh, &ws, &ex));
    void *w = nullptr;
    if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK(aclnnScaleAddCustom(w, ws, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    std::vector<uint8_t> out(dz.bytes);
    CHECK(aclrtMemcpy(out.data(), dz.bytes, dz.p, dz.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float want = alpha * x[i] + (with_bias ? b[i] : 0.0f) + shiftSum;
        float got;
        if (dt == ACL_FLOAT) {
            memcpy(&got, out.data() + 4 * i, 4);
        } else {
            uint16_t h;
            memcpy(&h, out.data() + 2 * i, 2);
            got = h2f(h);
        }
        float tol = dt == ACL_FLOAT ? 1e-5f : 0.02f * (1.0f + fabsf(want));
        if (fabsf(got - want) > tol && bad++ < 3) printf("  z[%lld] = %g, want %g\n", (long long)i, got, want);
    }
    printf("%s ScaleAddCustom %s %s %lldx%lld alpha %g shift %g\n", bad ? "FAIL" : "PASS", dt == ACL_FLOAT ? "float" : "half",
           with_bias ? "bias" : "no-bias", (long long)rows, (long long)cols, alpha, shiftSum);
    if (sh) aclDestroyIntArray(sh);
    failures += bad != 0;
    if (w) aclrtFree(w);
    for (Dev *d : {&dx, &db, &dz}) {
        aclDestroyTensor(d->t);
        aclrtFree(d->p);
    }
    return 0;
}

int main()
{
    setvbuf(stdout, nullptr, _IONBF, 0);
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));

    // AddCustom: fp16 z = x + y.
    const int64_t n = 8 * 2048;
    std::vector<uint16_t> hx(n), hy(n), hz(n);
    for (int64_t i = 0; i < n; i++) {
        hx[i] = f2h((i % 100) * 0.5f);
        hy[i] = f2h((float)(i % 7));
    }
    Dev x = make({8, 2048}, ACL_FLOAT16, hx.data()), y = make({8, 2048}, ACL_FLOAT16, hy.data()),
        z = make({8, 2048}, ACL_FLOAT16, nullptr);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CHECK(aclnnAddCustomGetWorkspaceSize(x.t, y.t, z.t, &ws, &ex));
    printf("%s AddCustom workspace %llu\n", ws == 1024 ? "PASS" : "FAIL", (unsigned long long)ws);
    failures += ws != 1024;
    void *w = nullptr;
    CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclnnAddCustom(w, ws, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(hz.data(), n * 2, z.p, n * 2, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (h2f(hz[i]) != (i % 100) * 0.5f + (i % 7) && bad++ < 3) printf("  z[%lld] = %g\n", (long long)i, h2f(hz[i]));
    }
    printf("%s AddCustom result\n", bad ? "FAIL" : "PASS");
    failures += bad != 0;

    // Error cases of the generated API.
    expect_code("AddCustom executor used twice", aclnnAddCustom(w, ws, ex, stream), 161002, "once");
    {
        std::vector<int64_t> shape = {2048, 8}, strides = {1, 2048};
        aclTensor *xt = aclCreateTensor(shape.data(), 2, ACL_FLOAT16, strides.data(), 0, ACL_FORMAT_ND, shape.data(), 2, x.p);
        aclTensor *yt = aclCreateTensor(shape.data(), 2, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, shape.data(), 2, y.p);
        aclTensor *zt = aclCreateTensor(shape.data(), 2, ACL_FLOAT16, nullptr, 0, ACL_FORMAT_ND, shape.data(), 2, z.p);
        expect_code("AddCustom transposed x", aclnnAddCustomGetWorkspaceSize(xt, yt, zt, &ws, &ex), 161002, "contiguous");
        aclDestroyTensor(xt);
        aclDestroyTensor(yt);
        aclDestroyTensor(zt);
    }
    Dev xf = make({8, 2048}, ACL_FLOAT, nullptr);
    expect_code("AddCustom float x", aclnnAddCustomGetWorkspaceSize(xf.t, y.t, z.t, &ws, &ex), 161002, "x");
    expect_code("AddCustom null x", aclnnAddCustomGetWorkspaceSize(nullptr, y.t, z.t, &ws, &ex), 161001, "x");
    expect_code("AddCustom null z", aclnnAddCustomGetWorkspaceSize(x.t, y.t, nullptr, &ws, &ex), 161001, "z");
    Dev small = make({3, 5}, ACL_FLOAT16, nullptr);
    expect_code("AddCustom tiling failure", aclnnAddCustomGetWorkspaceSize(small.t, small.t, small.t, &ws, &ex), 561000,
                "tiling");
    expect_code("AddCustom null executor", aclnnAddCustom(w, ws, nullptr, stream), 161001, nullptr);

    // ScaleAddCustom: two data-type columns, an optional input, an attribute, four tiling keys.
    if (scale_add(stream, ACL_FLOAT, true, 64, 192, 2.5f, {})) return 1;
    if (scale_add(stream, ACL_FLOAT, false, 64, 192, -1.5f, {1, 2})) return 1;
    if (scale_add(stream, ACL_FLOAT16, true, 16, 128, 0.5f, {4})) return 1;
    if (scale_add(stream, ACL_FLOAT16, false, 3, 128, 3.0f, {})) return 1;
    if (scale_add(stream, ACL_FLOAT, true, 1, 64, 1.0f, {-3, 1, 1})) return 1;
    Dev bh = make({8, 2048}, ACL_FLOAT16, nullptr), zf = make({8, 2048}, ACL_FLOAT, nullptr);
    expect_code("ScaleAddCustom float x with half bias",
                aclnnScaleAddCustomGetWorkspaceSize(xf.t, bh.t, zf.t, 1.0, nullptr, &ws, &ex), 161002, "bias");
    expect_code("ScaleAddCustom half x, float z", aclnnScaleAddCustomGetWorkspaceSize(bh.t, nullptr, zf.t, 1.0, nullptr, &ws, &ex),
                161002, "z");
    Dev xi = make({8, 2048}, ACL_INT32, nullptr);
    expect_code("ScaleAddCustom int32 x", aclnnScaleAddCustomGetWorkspaceSize(xi.t, nullptr, xi.t, 1.0, nullptr, &ws, &ex),
                161002, "DT_INT32");

    aclrtFree(w);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
