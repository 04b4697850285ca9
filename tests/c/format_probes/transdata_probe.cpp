// TransData as the single-operator API reference describes it: descriptors from
// aclCreateTensorDesc (the private side built three ways: its own shape and format, via
// aclTransTensorDescFormat, and as origin shape + aclSetTensorFormat/aclSetTensorShape; and
// the plain side as an ND descriptor whose src_format/dst_format attr says NCHW),
// buffers from aclCreateDataBuffer, string attrs src_format/dst_format, run through
// aclopCompileAndExecute(ACL_ENGINE_SYS, ACL_COMPILE_SYS, NULL) and aclopExecuteV2, then the
// documented argument errors. Every conversion is checked against a host reference.
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"

static int fails = 0;
#define EXPECT(c)                                                               \
    do {                                                                        \
        if (!(c)) {                                                             \
            fprintf(stderr, "line %d: expectation failed: %s\n", __LINE__, #c); \
            fails++;                                                            \
        }                                                                       \
    } while (0)
#define OK(call)                                                                            \
    do {                                                                                    \
        aclError e_ = (call);                                                               \
        if (e_ != ACL_SUCCESS) {                                                            \
            fprintf(stderr, "line %d: %s = %d (%s)\n", __LINE__, #call, e_, aclGetRecentErrMsg()); \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

static aclrtStream stream;

// Runs TransData src -> dst on device buffers; returns the error of the call.
static aclError RunTransData(bool compile, aclTensorDesc *in, void *inDev, size_t inBytes, aclTensorDesc *out,
                             void *outDev, size_t outBytes, const char *srcFmt, const char *dstFmt)
{
    aclDataBuffer *ib = aclCreateDataBuffer(inDev, inBytes);
    aclDataBuffer *ob = aclCreateDataBuffer(outDev, outBytes);
    aclopAttr *attr = aclopCreateAttr();
    aclopSetAttrString(attr, "src_format", srcFmt);
    aclopSetAttrString(attr, "dst_format", dstFmt);
    aclTensorDesc *inDesc[1] = {in};
    aclTensorDesc *outDesc[1] = {out};
    aclDataBuffer *inputs[1] = {ib};
    aclDataBuffer *outputs[1] = {ob};
    aclError ret;
    if (compile)
        ret = aclopCompileAndExecute("TransData", 1, inDesc, inputs, 1, outDesc, outputs, attr, ACL_ENGINE_SYS,
                                     ACL_COMPILE_SYS, nullptr, stream);
    else
        ret = aclopExecuteV2("TransData", 1, inDesc, inputs, 1, outDesc, outputs, attr, stream);
    if (ret == ACL_SUCCESS) ret = aclrtSynchronizeStream(stream);
    aclopDestroyAttr(attr);
    aclDestroyDataBuffer(ib);
    aclDestroyDataBuffer(ob);
    return ret;
}

static void *ToDevice(const void *host, size_t bytes)
{
    void *p = nullptr;
    if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return nullptr;
    if (host) aclrtMemcpy(p, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    else aclrtMemset(p, bytes, 0x7f, bytes);
    return p;
}

int main()
{
    OK(aclInit(nullptr));
    OK(aclrtSetDevice(0));
    OK(aclrtCreateStream(&stream));

    // NCHW fp16 [2,19,3,5] -> NC1HWC0 [2,2,3,5,16], output desc built three ways.
    const int64_t N = 2, C = 19, H = 3, W = 5, C1 = 2;
    int64_t nchw[4] = {N, C, H, W};
    int64_t nc1hwc0[5] = {N, C1, H, W, 16};
    std::vector<uint16_t> src(N * C * H * W);
    for (size_t i = 0; i < src.size(); i++) src[i] = (uint16_t)(0x3c00 + i);
    std::vector<uint16_t> want(N * C1 * H * W * 16, 0);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++)
                    want[(((n * C1 + c / 16) * H + h) * W + w) * 16 + c % 16] = src[((n * C + c) * H + h) * W + w];
    aclTensorDesc *in = aclCreateTensorDesc(ACL_FLOAT16, 4, nchw, ACL_FORMAT_NCHW);
    EXPECT(aclGetTensorDescSize(in) == src.size() * 2);
    void *inDev = ToDevice(src.data(), src.size() * 2);
    size_t outBytes = want.size() * 2;
    // way 3: the plain side is an ND descriptor; the attrs say it is NCHW.
    aclTensorDesc *inNd = aclCreateTensorDesc(ACL_FLOAT16, 4, nchw, ACL_FORMAT_ND);
    for (int way = 0; way < 4; way++) {
        aclTensorDesc *out = nullptr;
        if (way == 0) {
            out = aclCreateTensorDesc(ACL_FLOAT16, 5, nc1hwc0, ACL_FORMAT_NC1HWC0);
        } else if (way == 1) {
            OK(aclTransTensorDescFormat(in, ACL_FORMAT_NC1HWC0, &out));
            EXPECT(aclGetTensorDescFormat(out) == ACL_FORMAT_NC1HWC0);
            EXPECT(aclGetTensorDescNumDims(out) == 5);
            EXPECT(aclGetTensorDescSize(out) == outBytes);
        } else if (way == 2) {
            out = aclCreateTensorDesc(ACL_FLOAT16, 4, nchw, ACL_FORMAT_NCHW);
            OK(aclSetTensorFormat(out, ACL_FORMAT_NC1HWC0));
            OK(aclSetTensorShape(out, 5, nc1hwc0));
        } else {
            out = aclCreateTensorDesc(ACL_FLOAT16, 5, nc1hwc0, ACL_FORMAT_NC1HWC0);
        }
        aclTensorDesc *plain = way == 3 ? inNd : in;
        void *outDev = ToDevice(nullptr, outBytes);
        aclError e = RunTransData(way != 1, plain, inDev, src.size() * 2, out, outDev, outBytes, "NCHW", "NC1HWC0");
        if (e != ACL_SUCCESS) {
            fprintf(stderr, "way %d: TransData NCHW->NC1HWC0 = %d (%s)\n", way, e, aclGetRecentErrMsg());
            return 1;
        }
        std::vector<uint16_t> got(want.size());
        OK(aclrtMemcpy(got.data(), outBytes, outDev, outBytes, ACL_MEMCPY_DEVICE_TO_HOST));
        EXPECT(got == want);
        // and back to NCHW
        void *backDev = ToDevice(nullptr, src.size() * 2);
        aclTensorDesc *back = aclCreateTensorDesc(ACL_FLOAT16, 4, nchw, way == 3 ? ACL_FORMAT_ND : ACL_FORMAT_NCHW);
        e = RunTransData(way == 1, out, outDev, outBytes, back, backDev, src.size() * 2, "NC1HWC0", "NCHW");
        if (e != ACL_SUCCESS) {
            fprintf(stderr, "way %d: TransData NC1HWC0->NCHW = %d (%s)\n", way, e, aclGetRecentErrMsg());
            return 1;
        }
        std::vector<uint16_t> round(src.size());
        OK(aclrtMemcpy(round.data(), src.size() * 2, backDev, src.size() * 2, ACL_MEMCPY_DEVICE_TO_HOST));
        EXPECT(round == src);
        aclDestroyTensorDesc(out);
        aclDestroyTensorDesc(back);
        aclrtFree(outDev);
        aclrtFree(backDev);
    }

    // ND fp32 [3,33,20] -> FRACTAL_NZ: GE's C0 for fp32 is 16: [3, 2, 3, 16, 16]
    {
        const int64_t B = 3, R = 33, K = 20;
        int64_t nd[3] = {B, R, K};
        int64_t nz[5] = {B, 2, 3, 16, 16};
        std::vector<float> a(B * R * K);
        for (size_t i = 0; i < a.size(); i++) a[i] = (float)i * 0.5f + 1.0f;
        std::vector<float> ref(B * 2 * 3 * 16 * 16, 0.0f);
        for (int64_t b = 0; b < B; b++)
            for (int64_t r = 0; r < R; r++)
                for (int64_t k = 0; k < K; k++)
                    ref[((b * 2 + k / 16) * 48 + r) * 16 + k % 16] = a[(b * R + r) * K + k];
        aclTensorDesc *ndDesc = aclCreateTensorDesc(ACL_FLOAT, 3, nd, ACL_FORMAT_ND);
        aclTensorDesc *nzDesc = nullptr;
        OK(aclTransTensorDescFormat(ndDesc, ACL_FORMAT_FRACTAL_NZ, &nzDesc));
        EXPECT(aclGetTensorDescNumDims(nzDesc) == 5);
        for (size_t i = 0; i < 5; i++) {
            int64_t d = -1;
            OK(aclGetTensorDescDimV2(nzDesc, i, &d));
            EXPECT(d == nz[i]);
        }
        EXPECT(aclGetTensorDescSize(nzDesc) == ref.size() * 4);
        void *aDev = ToDevice(a.data(), a.size() * 4);
        void *nzDev = ToDevice(nullptr, ref.size() * 4);
        aclError e = RunTransData(true, ndDesc, aDev, a.size() * 4, nzDesc, nzDev, ref.size() * 4, "ND", "FRACTAL_NZ");
        if (e != ACL_SUCCESS) {
            fprintf(stderr, "TransData ND->FRACTAL_NZ = %d (%s)\n", e, aclGetRecentErrMsg());
            return 1;
        }
        std::vector<float> got(ref.size());
        OK(aclrtMemcpy(got.data(), got.size() * 4, nzDev, got.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST));
        EXPECT(memcmp(got.data(), ref.data(), got.size() * 4) == 0);
        std::vector<float> zero(a.size(), 0.0f);
        void *backDev = ToDevice(zero.data(), a.size() * 4);
        e = RunTransData(false, nzDesc, nzDev, ref.size() * 4, ndDesc, backDev, a.size() * 4, "FRACTAL_NZ", "ND");
        if (e != ACL_SUCCESS) {
            fprintf(stderr, "TransData FRACTAL_NZ->ND = %d (%s)\n", e, aclGetRecentErrMsg());
            return 1;
        }
        OK(aclrtMemcpy(zero.data(), a.size() * 4, backDev, a.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST));
        EXPECT(zero == a);
        aclDestroyTensorDesc(ndDesc);
        aclDestroyTensorDesc(nzDesc);
        aclrtFree(aDev);
        aclrtFree(nzDev);
        aclrtFree(backDev);
    }

    // Documented argument errors.
    {
        aclTensorDesc *out = aclCreateTensorDesc(ACL_FLOAT16, 5, nc1hwc0, ACL_FORMAT_NC1HWC0);
        void *outDev = ToDevice(nullptr, outBytes);
        aclDataBuffer *ib = aclCreateDataBuffer(inDev, src.size() * 2);
        aclDataBuffer *ob = aclCreateDataBuffer(outDev, outBytes);
        aclopAttr *attr = aclopCreateAttr();
        EXPECT(attr != nullptr);
        EXPECT(aclopSetAttrString(attr, "src_format", "NCHW") == ACL_SUCCESS);
        EXPECT(aclopSetAttrString(attr, "dst_format", "NC1HWC0") == ACL_SUCCESS);
        EXPECT(aclopSetAttrString(attr, nullptr, "NCHW") == ACL_ERROR_INVALID_PARAM);
        EXPECT(aclopSetAttrString(nullptr, "src_format", "NCHW") == ACL_ERROR_INVALID_PARAM);
        EXPECT(aclopSetAttrInt(attr, nullptr, 1) == ACL_ERROR_INVALID_PARAM);
        EXPECT(aclopSetAttrBool(attr, nullptr, 1) == ACL_ERROR_INVALID_PARAM);
        EXPECT(aclopSetAttrFloat(attr, nullptr, 1.0f) == ACL_ERROR_INVALID_PARAM);
        aclTensorDesc *inDesc[1] = {in};
        aclTensorDesc *outDesc[1] = {out};
        aclDataBuffer *inputs[1] = {ib};
        aclDataBuffer *outputs[1] = {ob};
        EXPECT(aclopExecuteV2(nullptr, 1, inDesc, inputs, 1, outDesc, outputs, attr, stream) ==
               ACL_ERROR_INVALID_PARAM);
        EXPECT(aclopExecuteV2("TransData", 1, nullptr, inputs, 1, outDesc, outputs, attr, stream) ==
               ACL_ERROR_INVALID_PARAM);
        aclError e = aclopExecuteV2("TransData", 2, inDesc, inputs, 1, outDesc, outputs, attr, stream);
        EXPECT(e != ACL_SUCCESS);
        const char *msg = aclGetRecentErrMsg();  // read once: reading clears it
        EXPECT(msg != nullptr && strstr(msg, "numInputs") != nullptr);
        e = aclopExecuteV2("NoSuchOp", 1, inDesc, inputs, 1, outDesc, outputs, attr, stream);
        EXPECT(e == ACL_ERROR_OP_NOT_FOUND);
        msg = aclGetRecentErrMsg();
        EXPECT(msg != nullptr && strstr(msg, "NoSuchOp") != nullptr);
        // the default stream (NULL) is valid
        EXPECT(aclopExecuteV2("TransData", 1, inDesc, inputs, 1, outDesc, outputs, attr, nullptr) == ACL_SUCCESS);
        EXPECT(aclrtSynchronizeDevice() == ACL_SUCCESS);
        aclopDestroyAttr(attr);
        aclopDestroyAttr(nullptr);
        aclDestroyDataBuffer(ib);
        aclDestroyDataBuffer(ob);
        aclDestroyTensorDesc(out);
        aclDestroyTensorDesc(nullptr);
        aclrtFree(outDev);
    }

    aclDestroyTensorDesc(in);
    aclDestroyTensorDesc(inNd);
    aclrtFree(inDev);
    OK(aclrtDestroyStream(stream));
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
    if (fails) return 1;
    printf("transdata probe ok\n");
    return 0;
}
