// Ascend 950 (run with NPU_EMU_SOC=Ascend950PR): the reference's 950 table. FLOAT ND [33,20]
// with additionalDtype FLOAT16 becomes FRACTAL_NZ_C0_16 (50) [2,3,16,16]; back to ND from
// FRACTAL_NZ_C0_16 with additionalDtype FLOAT; and a FRACTAL_NZ_C0_4 (53) tensor back to ND.
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/aclnn_npu_format_cast.h"

#define OK(call)                                                                                \
    do {                                                                                        \
        int e_ = (call);                                                                        \
        if (e_ != 0) {                                                                          \
            const char *m_ = aclGetRecentErrMsg();                                              \
            fprintf(stderr, "line %d: %s = %d (%s)\n", __LINE__, #call, e_, m_ ? m_ : "");      \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

static aclrtStream stream;

static aclTensor *Make(const std::vector<int64_t> &view, aclFormat fmt, const int64_t *storage, uint64_t n,
                       void *dev)
{
    std::vector<int64_t> st(view.size(), 1);
    for (int64_t i = (int64_t)view.size() - 2; i >= 0; i--) st[i] = view[i + 1] * st[i + 1];
    return aclCreateTensor(view.data(), view.size(), ACL_FLOAT, st.data(), 0, fmt, storage, n, dev);
}

// src (on the device) -> dstFormat with additionalDtype `add`; the result is copied to `out`.
static int Cast(aclTensor *src, const std::vector<int64_t> &view, int dstFormat, int add, int wantFormat,
                const std::vector<int64_t> &wantShape, std::vector<float> &out)
{
    int64_t *shape = nullptr;
    uint64_t n = 0;
    int fmt = -1;
    OK(aclnnNpuFormatCastCalculateSizeAndFormat(src, dstFormat, add, &shape, &n, &fmt));
    if (fmt != wantFormat || std::vector<int64_t>(shape, shape + n) != wantShape) {
        fprintf(stderr, "format %d (want %d), %lu dims\n", fmt, wantFormat, (unsigned long)n);
        return 1;
    }
    size_t count = 1;
    for (uint64_t i = 0; i < n; i++) count *= shape[i];
    void *dev = nullptr;
    OK(aclrtMalloc(&dev, count * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(dev, count * 4, 0xff, count * 4));
    aclTensor *dst = Make(view, (aclFormat)fmt, shape, n, dev);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    OK(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    void *wsp = nullptr;
    if (ws > 0) OK(aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclnnNpuFormatCast(wsp, ws, ex, stream));
    OK(aclrtSynchronizeStream(stream));
    out.assign(count, 0.0f);
    OK(aclrtMemcpy(out.data(), count * 4, dev, count * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    delete[] shape;
    aclDestroyTensor(dst);
    aclrtFree(dev);
    if (wsp) aclrtFree(wsp);
    return 0;
}

int main()
{
    OK(aclInit(nullptr));
    OK(aclrtSetDevice(0));
    OK(aclrtCreateStream(&stream));
    const char *soc = aclrtGetSocName();
    if (soc == nullptr || strncmp(soc, "Ascend950", 9) != 0) {
        fprintf(stderr, "run with NPU_EMU_SOC=Ascend950PR (SoC is %s)\n", soc ? soc : "?");
        return 1;
    }
    const int64_t K = 33, N = 20;
    std::vector<int64_t> view = {K, N};
    std::vector<float> host(K * N);
    for (size_t i = 0; i < host.size(); i++) host[i] = (float)i * 0.5f - 3.0f;
    void *srcDev = nullptr;
    OK(aclrtMalloc(&srcDev, host.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemcpy(srcDev, host.size() * 4, host.data(), host.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    aclTensor *nd = Make(view, ACL_FORMAT_ND, view.data(), 2, srcDev);

    std::vector<float> nz;
    if (Cast(nd, view, ACL_FORMAT_FRACTAL_NZ, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ_C0_16, {2, 3, 16, 16}, nz))
        return 1;
    for (int64_t w1 = 0; w1 < 2; w1++)
        for (int64_t r = 0; r < 48; r++)
            for (int64_t w0 = 0; w0 < 16; w0++) {
                int64_t col = w1 * 16 + w0;
                float want = (r < K && col < N) ? host[r * N + col] : 0.0f;
                if (nz[(w1 * 48 + r) * 16 + w0] != want) {
                    fprintf(stderr, "NZ_C0_16 [%ld][%ld][%ld] wrong\n", w1, r, w0);
                    return 1;
                }
            }
    // back: FRACTAL_NZ_C0_16 -> ND
    void *nzDev = nullptr;
    OK(aclrtMalloc(&nzDev, nz.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemcpy(nzDev, nz.size() * 4, nz.data(), nz.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t nzShape[4] = {2, 3, 16, 16};
    aclTensor *nzT = Make(view, ACL_FORMAT_FRACTAL_NZ_C0_16, nzShape, 4, nzDev);
    std::vector<float> back;
    if (Cast(nzT, view, ACL_FORMAT_ND, ACL_FLOAT, ACL_FORMAT_ND, view, back)) return 1;
    if (back != host) {
        fprintf(stderr, "NZ_C0_16 -> ND differs from the source\n");
        return 1;
    }
    // FRACTAL_NZ_C0_4 [5, 3, 16, 4] built on the host -> ND
    std::vector<float> nz4(5 * 3 * 16 * 4, 0.0f);
    for (int64_t r = 0; r < K; r++)
        for (int64_t c = 0; c < N; c++) nz4[((c / 4) * 48 + r) * 4 + c % 4] = host[r * N + c];
    void *nz4Dev = nullptr;
    OK(aclrtMalloc(&nz4Dev, nz4.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemcpy(nz4Dev, nz4.size() * 4, nz4.data(), nz4.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t nz4Shape[4] = {5, 3, 16, 4};
    aclTensor *nz4T = Make(view, ACL_FORMAT_FRACTAL_NZ_C0_4, nz4Shape, 4, nz4Dev);
    if (Cast(nz4T, view, ACL_FORMAT_ND, ACL_FLOAT, ACL_FORMAT_ND, view, back)) return 1;
    if (back != host) {
        fprintf(stderr, "NZ_C0_4 -> ND differs from the source\n");
        return 1;
    }
    aclDestroyTensor(nd);
    aclDestroyTensor(nzT);
    aclDestroyTensor(nz4T);
    aclrtFree(srcDev);
    aclrtFree(nzDev);
    aclrtFree(nz4Dev);
    OK(aclrtDestroyStream(stream));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
    printf("nz950 ok\n");
    return 0;
}
