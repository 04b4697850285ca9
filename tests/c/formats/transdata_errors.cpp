// Bad input to the single-operator API: each case gives the documented code and a message
// that names the op type and what is wrong; nothing runs, and the stream stays usable.
#include <cstdint>
#include <cstring>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "common.h"

static aclopAttr *attrs(const char *src, const char *dst) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT(a != NULL);
    if (src) CHECK(aclopSetAttrString(a, "src_format", src));
    if (dst) CHECK(aclopSetAttrString(a, "dst_format", dst));
    return a;
}

int main() {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));

    // A valid NCHW fp16 [2,19,3,5] -> NC1HWC0 [2,2,3,5,16] setup to break one piece at a time.
    int64_t ps[4] = {2, 19, 3, 5}, qs[5] = {2, 2, 3, 5, 16};
    size_t pbytes = 2 * 19 * 3 * 5 * 2, qbytes = 2 * 2 * 3 * 5 * 16 * 2;
    aclTensorDesc *pd = aclCreateTensorDesc(ACL_FLOAT16, 4, ps, ACL_FORMAT_NCHW);
    aclTensorDesc *qd = aclCreateTensorDesc(ACL_FLOAT16, 5, qs, ACL_FORMAT_NC1HWC0);
    void *a = NULL, *b = NULL;
    CHECK(aclrtMalloc(&a, pbytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, qbytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(b, qbytes, 0x77, qbytes));
    aclDataBuffer *ab = aclCreateDataBuffer(a, pbytes), *bb = aclCreateDataBuffer(b, qbytes);
    aclopAttr *ok = attrs("NCHW", "NC1HWC0");
    aclTensorDesc *in[1] = {pd}, *out[1] = {qd};
    aclDataBuffer *ib[1] = {ab}, *ob[1] = {bb};

    // Attr API.
    EXPECT_CODE(aclopSetAttrString(NULL, "src_format", "NCHW"), ACL_ERROR_INVALID_PARAM, "attr");
    EXPECT_CODE(aclopSetAttrString(ok, NULL, "NCHW"), ACL_ERROR_INVALID_PARAM, "attrName");
    EXPECT_CODE(aclopSetAttrString(ok, "x", NULL), ACL_ERROR_INVALID_PARAM, "attrValue");
    EXPECT_CODE(aclopSetAttrInt(NULL, "groups", 1), ACL_ERROR_INVALID_PARAM, "attr");
    EXPECT_CODE(aclopSetAttrBool(NULL, "b", 1), ACL_ERROR_INVALID_PARAM, "attr");
    EXPECT_CODE(aclopSetAttrFloat(NULL, "f", 1.0f), ACL_ERROR_INVALID_PARAM, "attr");
    aclopAttr *extra = aclopCreateAttr();
    CHECK(aclopSetAttrBool(extra, "b", 1));
    CHECK(aclopSetAttrFloat(extra, "f", 0.5f));
    CHECK(aclopSetAttrInt(extra, "i", -3));
    aclopDestroyAttr(extra);
    aclopDestroyAttr(NULL);

    // Unknown op type: ACL_ERROR_OP_NOT_FOUND naming it.
    EXPECT_CODE(aclopExecuteV2("Conv2DFoo", 1, in, ib, 1, out, ob, ok, s), ACL_ERROR_OP_NOT_FOUND,
                "Conv2DFoo");
    EXPECT_CODE(aclopCompileAndExecute("Atan2Foo", 1, in, ib, 1, out, ob, ok, ACL_ENGINE_SYS,
                                       ACL_COMPILE_SYS, NULL, s),
                ACL_ERROR_OP_NOT_FOUND, "\"Atan2Foo\"");
    // A modelled operator called with the wrong number of inputs: ACL_ERROR_OP_INPUT_NOT_MATCH.
    EXPECT_CODE(aclopCompileAndExecute("Add", 1, in, ib, 1, out, ob, ok, ACL_ENGINE_SYS,
                                       ACL_COMPILE_SYS, NULL, s),
                ACL_ERROR_OP_INPUT_NOT_MATCH, "\"Add\" has 2 inputs, but numInputs = 1");
    EXPECT_CODE(aclopExecuteV2(NULL, 1, in, ib, 1, out, ob, ok, s), ACL_ERROR_INVALID_PARAM, "opType");

    // Null descriptors and buffers.
    aclTensorDesc *nind[1] = {NULL};
    aclDataBuffer *nb[1] = {NULL};
    EXPECT_CODE(aclopExecuteV2("TransData", 1, nind, ib, 1, out, ob, ok, s), ACL_ERROR_INVALID_PARAM,
                "inputDesc[0] is NULL");
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, nind, ob, ok, s), ACL_ERROR_INVALID_PARAM,
                "outputDesc[0] is NULL");
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, nb, 1, out, ob, ok, s), ACL_ERROR_INVALID_PARAM,
                "inputs[0] is NULL");
    EXPECT_CODE(aclopExecuteV2("TransData", 1, NULL, ib, 1, out, ob, ok, s), ACL_ERROR_INVALID_PARAM,
                "inputDesc");

    // Input/output counts.
    aclTensorDesc *two[2] = {pd, pd};
    aclDataBuffer *twob[2] = {ab, ab};
    EXPECT_CODE(aclopExecuteV2("TransData", 2, two, twob, 1, out, ob, ok, s),
                ACL_ERROR_OP_INPUT_NOT_MATCH, "numInputs = 2");
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 0, out, ob, ok, s),
                ACL_ERROR_OP_OUTPUT_NOT_MATCH, "numOutputs = 0");

    // Attrs: missing, wrong type, disagreeing with the descriptors.
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, NULL, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "src_format");
    aclopAttr *nodst = attrs("NCHW", NULL);
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, nodst, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "dst_format");
    aclopAttr *wrong = attrs("NHWC", "NC1HWC0");
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, wrong, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "NHWC");
    aclopAttr *typed = aclopCreateAttr();
    CHECK(aclopSetAttrInt(typed, "src_format", 0));
    CHECK(aclopSetAttrString(typed, "dst_format", "NC1HWC0"));
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, typed, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "must be a string");

    // groups only applies to FRACTAL_Z.
    aclopAttr *grp = attrs("NCHW", "NC1HWC0");
    CHECK(aclopSetAttrInt(grp, "groups", 2));
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, grp, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "groups = 2");

    // Unsupported pair: FRACTAL_NZ -> NC1HWC0.
    aclTensorDesc *nz = aclCreateTensorDesc(ACL_FLOAT16, 4, ps, ACL_FORMAT_FRACTAL_NZ);
    aclTensorDesc *nzin[1] = {nz};
    aclopAttr *nzattr = attrs("FRACTAL_NZ", "NC1HWC0");
    EXPECT_CODE(aclopExecuteV2("TransData", 1, nzin, ib, 1, out, ob, nzattr, s),
                ACL_ERROR_FORMAT_NOT_MATCH, "FRACTAL_NZ");

    // Mismatched shapes: the output shape is not what the input converts to.
    int64_t badq[5] = {2, 1, 3, 5, 16};
    aclTensorDesc *bq = aclCreateTensorDesc(ACL_FLOAT16, 5, badq, ACL_FORMAT_NC1HWC0);
    aclTensorDesc *bqo[1] = {bq};
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, bqo, ob, ok, s),
                ACL_ERROR_OP_OUTPUT_NOT_MATCH, "[2, 2, 3, 5, 16]");
    // ... and the inverse: the input (private) shape does not fit the output.
    aclopAttr *inv = attrs("NC1HWC0", "NCHW");
    EXPECT_CODE(aclopExecuteV2("TransData", 1, bqo, ob, 1, in, ib, inv, s),
                ACL_ERROR_OP_INPUT_NOT_MATCH, "[2, 1, 3, 5, 16]");
    // Data types must agree.
    aclTensorDesc *q32 = aclCreateTensorDesc(ACL_FLOAT, 5, qs, ACL_FORMAT_NC1HWC0);
    aclTensorDesc *q32o[1] = {q32};
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, q32o, ob, ok, s),
                ACL_ERROR_OP_OUTPUT_NOT_MATCH, "data type");
    // Dynamic dims cannot execute.
    int64_t dyn[4] = {2, -1, 3, 5};
    aclTensorDesc *dd = aclCreateTensorDesc(ACL_FLOAT16, 4, dyn, ACL_FORMAT_NCHW);
    aclTensorDesc *ddi[1] = {dd};
    EXPECT_CODE(aclopExecuteV2("TransData", 1, ddi, ib, 1, out, ob, ok, s), ACL_ERROR_INVALID_PARAM,
                "dynamic");

    // Too-small buffers: the aclDataBuffer size, then the allocation behind it.
    aclDataBuffer *small = aclCreateDataBuffer(b, qbytes - 2);
    aclDataBuffer *smallo[1] = {small};
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, smallo, ok, s), ACL_ERROR_INVALID_PARAM,
                "outputs[0] holds");
    void *tiny = NULL;
    CHECK(aclrtMalloc(&tiny, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    aclDataBuffer *lie = aclCreateDataBuffer(tiny, qbytes);
    aclDataBuffer *lieo[1] = {lie};
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, lieo, ok, s), ACL_ERROR_INVALID_PARAM,
                "outputs[0]");
    // Host memory is not a device buffer.
    static char hostbuf[4096];
    aclDataBuffer *hb = aclCreateDataBuffer(hostbuf, sizeof hostbuf);
    aclDataBuffer *hbi[1] = {hb};
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, hbi, 1, out, ob, ok, s), ACL_ERROR_INVALID_PARAM,
                "inputs[0]");
    // In place is refused.
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ob, 1, out, ob, ok, s), ACL_ERROR_INVALID_PARAM,
                "overlaps");
    // Bad compile arguments.
    EXPECT_CODE(aclopCompileAndExecute("TransData", 1, in, ib, 1, out, ob, ok, (aclopEngineType)7,
                                       ACL_COMPILE_SYS, NULL, s),
                ACL_ERROR_INVALID_PARAM, "engineType");
    EXPECT_CODE(aclopCompileAndExecuteV2("TransData", 1, in, ib, 1, out, ob, ok, ACL_ENGINE_SYS,
                                         (aclopCompileType)5, NULL, s),
                ACL_ERROR_INVALID_PARAM, "compileFlag");

    // Nothing ran: the output still holds its fill.
    CHECK(aclrtSynchronizeStream(s));
    unsigned char first = 0;
    CHECK(aclrtMemcpy(&first, 1, b, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(first == 0x77);
    // And the stream still works.
    CHECK(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, ok, s));
    CHECK(aclrtSynchronizeStream(s));

    // A NULL stream is the default stream.
    CHECK(aclrtMemset(a, pbytes, 0x11, pbytes));
    CHECK(aclrtMemset(b, qbytes, 0x77, qbytes));
    CHECK(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, ok, NULL));
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclrtMemcpy(&first, 1, b, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(first == 0x11);

    printf("all bad-input cases ok\n");
    CHECK(aclrtFree(tiny));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS\n");
    return 0;
}
