// The return codes the aclnnNpuFormatCast reference lists for its first-phase calls:
// ACLNN_ERR_PARAM_NULLPTR (161001) for NULL tensors, ACLNN_ERR_PARAM_INVALID (161002) for a
// dtype or format outside the lists, a view shape outside [2, 6] dims, an empty tensor, a
// non-contiguous one or one with a negative offset, ACLNN_ERR_RUNTIME_ERROR (361001) for a conversion it does not offer.
// Each error must also leave a message naming the function in aclGetRecentErrMsg.
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "aclnnop/aclnn_npu_format_cast.h"

static int fails = 0;

static void Expect(int line, aclnnStatus got, aclnnStatus want, const char *fn)
{
    const char *msg = aclGetRecentErrMsg();  // read once: reading clears it
    if (got != want) {
        fprintf(stderr, "line %d: got %d, want %d (%s)\n", line, got, want, msg ? msg : "no message");
        fails++;
    } else if (want != 0 && (msg == nullptr || strstr(msg, fn) == nullptr)) {
        fprintf(stderr, "line %d: code %d but the message does not name %s: %s\n", line, got, fn,
                msg ? msg : "(null)");
        fails++;
    }
}
#define CALC(...) Expect(__LINE__, aclnnNpuFormatCastCalculateSizeAndFormat(__VA_ARGS__), want, \
                         "aclnnNpuFormatCastCalculateSizeAndFormat")
#define WS(...) Expect(__LINE__, aclnnNpuFormatCastGetWorkspaceSize(__VA_ARGS__), want, \
                       "aclnnNpuFormatCastGetWorkspaceSize")

static aclTensor *Make(std::vector<int64_t> shape, aclDataType dt, aclFormat fmt, void *data,
                       const int64_t *strides = nullptr)
{
    std::vector<int64_t> st(shape.size(), 1);
    for (int64_t i = (int64_t)shape.size() - 2; i >= 0; i--) st[i] = shape[i + 1] * st[i + 1];
    return aclCreateTensor(shape.data(), shape.size(), dt, strides ? strides : st.data(), 0, fmt, shape.data(),
                           shape.size(), data);
}

int main()
{
    if (aclInit(nullptr) || aclrtSetDevice(0)) return 1;
    void *dev = nullptr;
    if (aclrtMalloc(&dev, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST)) return 1;
    int64_t *shape = nullptr;
    uint64_t n = 0;
    int fmt = -1;
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    aclnnStatus want;

    aclTensor *nd = Make({32, 48}, ACL_FLOAT16, ACL_FORMAT_ND, dev);
    aclTensor *nzLike = Make({32, 48}, ACL_FLOAT16, ACL_FORMAT_ND, dev);
    want = 161001;
    CALC(nullptr, ACL_FORMAT_FRACTAL_NZ, -1, &shape, &n, &fmt);
    WS(nullptr, nzLike, &ws, &ex);
    WS(nd, nullptr, &ws, &ex);

    want = 161002;
    CALC(nd, 999, -1, &shape, &n, &fmt);                      // dstFormat not in the list
    CALC(nd, ACL_FORMAT_NC1HWC0_C04, -1, &shape, &n, &fmt);   // nor is NC1HWC0_C04
    aclTensor *dbl = Make({32, 48}, ACL_DOUBLE, ACL_FORMAT_ND, dev);
    CALC(dbl, ACL_FORMAT_FRACTAL_NZ, -1, &shape, &n, &fmt);   // dtype not in the list
    aclTensor *oneD = Make({48}, ACL_FLOAT16, ACL_FORMAT_ND, dev);
    CALC(oneD, ACL_FORMAT_FRACTAL_NZ, -1, &shape, &n, &fmt);  // view shape outside [2, 6]
    aclTensor *empty = Make({0, 48}, ACL_FLOAT16, ACL_FORMAT_ND, dev);
    CALC(empty, ACL_FORMAT_FRACTAL_NZ, -1, &shape, &n, &fmt); // empty tensor

    want = 361001;
    aclTensor *nd5 = Make({1, 2, 3, 4, 5}, ACL_FLOAT16, ACL_FORMAT_ND, dev);
    CALC(nd5, ACL_FORMAT_NDC1HWC0, -1, &shape, &n, &fmt);     // ND -> NDC1HWC0 is not offered

    // Non-contiguous source: a transposed view of [48, 32]; then the contiguous one runs.
    want = 0;
    CALC(nd, ACL_FORMAT_FRACTAL_NZ, -1, &shape, &n, &fmt);
    void *out = nullptr;
    if (aclrtMalloc(&out, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST)) return 1;
    std::vector<int64_t> view = {32, 48}, strides = {48, 1};
    aclTensor *nz = aclCreateTensor(view.data(), 2, ACL_FLOAT16, strides.data(), 0, (aclFormat)fmt, shape, n, out);
    int64_t tstr[2] = {1, 32};
    aclTensor *trans = Make({32, 48}, ACL_FLOAT16, ACL_FORMAT_ND, dev, tstr);
    want = 161002;
    WS(trans, nz, &ws, &ex);
    // a negative offset ("取值不支持负数")
    aclTensor *negOff = aclCreateTensor(view.data(), 2, ACL_FLOAT16, strides.data(), -5, ACL_FORMAT_ND, view.data(),
                                        2, dev);
    WS(negOff, nz, &ws, &ex);
    want = 0;
    WS(nd, nz, &ws, &ex);
    if (ex == nullptr || aclnnNpuFormatCast(nullptr, ws, ex, nullptr) != 0 || aclrtSynchronizeDevice() != 0) {
        fprintf(stderr, "the valid conversion failed: %s\n", aclGetRecentErrMsg());
        fails++;
    }
    delete[] shape;
    for (aclTensor *t : {nd, nzLike, dbl, oneD, empty, nd5, nz, trans, negOff}) aclDestroyTensor(t);
    aclrtFree(dev);
    aclrtFree(out);
    aclrtResetDevice(0);
    aclFinalize();
    if (fails) return 1;
    printf("cast errors ok\n");
    return 0;
}
