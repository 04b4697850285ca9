// The list / data-type attr setters of acl_op.h (aclopSetAttrList*, aclopSetAttrDataType,
// aclopSetAttrListDataType): each stores a typed value, bad input gives ACL_ERROR_INVALID_PARAM
// with a message naming the function and the argument, and a TransData with extra attrs of
// every kind still runs (TransData reads only its own attrs). The typed storage is checked
// through TransData: an attr it needs, set through a list setter, is reported with its kind.
// Also: the op-model / handle functions of acl_op.h and acl_op_compiler.h link and report
// ACL_ERROR_API_NOT_SUPPORT naming themselves; aclopStartDumpArgs / aclopStopDumpArgs of
// acl_dump.h link and work.
#include <cstdint>
#include <cstring>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "common.h"

// Elements of the NC1HWC0 fp16 result `q` that differ from NCHW `p` (C0 = 16, zero padding).
static size_t mismatches(const uint16_t *p, const uint16_t *q, int N, int C, int H, int W) {
    const int C0 = 16, C1 = (C + C0 - 1) / C0;
    size_t bad = 0;
    for (int n = 0; n < N; ++n)
        for (int c1 = 0; c1 < C1; ++c1)
            for (int h = 0; h < H; ++h)
                for (int w = 0; w < W; ++w)
                    for (int c0 = 0; c0 < C0; ++c0) {
                        int c = c1 * C0 + c0;
                        uint16_t want = c < C ? p[((n * C + c) * H + h) * W + w] : 0;
                        size_t i = (((size_t)(n * C1 + c1) * H + h) * W + w) * C0 + c0;
                        if (q[i] != want) ++bad;
                    }
    return bad;
}

int main() {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));

    // ---- The setters accept good input (and overwrite earlier values of the same name).
    aclopAttr *a = aclopCreateAttr();
    EXPECT(a != NULL);
    const int64_t ints[3] = {1, -2, 3};
    const float floats[2] = {0.5f, -1.25f};
    const uint8_t bools[3] = {0, 1, 7};
    const char *strs[2] = {"NCHW", "ND"};
    const aclDataType dts[2] = {ACL_FLOAT16, ACL_INT8};
    const int64_t l0[2] = {1, 2}, l1[1] = {3};
    const int64_t *const lists[3] = {l0, l1, NULL};
    const int counts[3] = {2, 1, 0};
    CHECK(aclopSetAttrListInt(a, "pads", 3, ints));
    CHECK(aclopSetAttrListFloat(a, "scales", 2, floats));
    CHECK(aclopSetAttrListBool(a, "flags", 3, bools));
    CHECK(aclopSetAttrListString(a, "names", 2, strs));
    CHECK(aclopSetAttrListListInt(a, "ranges", 3, counts, lists));
    CHECK(aclopSetAttrDataType(a, "dtype", ACL_FLOAT));
    CHECK(aclopSetAttrListDataType(a, "dtypes", 2, dts));
    // Empty lists: numValues 0 with NULL values is an empty list.
    CHECK(aclopSetAttrListInt(a, "empty_i", 0, NULL));
    CHECK(aclopSetAttrListFloat(a, "empty_f", 0, NULL));
    CHECK(aclopSetAttrListBool(a, "empty_b", 0, NULL));
    CHECK(aclopSetAttrListString(a, "empty_s", 0, NULL));
    CHECK(aclopSetAttrListListInt(a, "empty_ll", 0, NULL, NULL));
    CHECK(aclopSetAttrListDataType(a, "empty_dt", 0, NULL));
    // Same name again, other kind: the last call wins.
    CHECK(aclopSetAttrListInt(a, "dtype", 1, ints));
    CHECK(aclopSetAttrInt(a, "pads", 4));
    printf("ok setters\n");

    // ---- Bad input: NULL attr / name as the scalar setters, bad counts and arrays.
    EXPECT_CODE(aclopSetAttrListInt(NULL, "x", 3, ints), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrListInt: argument attr is NULL");
    EXPECT_CODE(aclopSetAttrListInt(a, NULL, 3, ints), ACL_ERROR_INVALID_PARAM,
                "argument attrName is NULL");
    EXPECT_CODE(aclopSetAttrListInt(a, "x", -1, ints), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrListInt: argument numValues = -1 is invalid: expected 0 or more");
    EXPECT_CODE(aclopSetAttrListInt(a, "x", 2, NULL), ACL_ERROR_INVALID_PARAM,
                "argument values is NULL but numValues = 2");
    EXPECT_CODE(aclopSetAttrListFloat(NULL, "x", 2, floats), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrListFloat: argument attr is NULL");
    EXPECT_CODE(aclopSetAttrListFloat(a, NULL, 2, floats), ACL_ERROR_INVALID_PARAM, "attrName");
    EXPECT_CODE(aclopSetAttrListFloat(a, "x", -5, floats), ACL_ERROR_INVALID_PARAM,
                "numValues = -5");
    EXPECT_CODE(aclopSetAttrListFloat(a, "x", 1, NULL), ACL_ERROR_INVALID_PARAM,
                "values is NULL");
    EXPECT_CODE(aclopSetAttrListBool(NULL, "x", 3, bools), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrListBool: argument attr is NULL");
    EXPECT_CODE(aclopSetAttrListBool(a, NULL, 3, bools), ACL_ERROR_INVALID_PARAM, "attrName");
    EXPECT_CODE(aclopSetAttrListBool(a, "x", -1, bools), ACL_ERROR_INVALID_PARAM,
                "numValues = -1");
    EXPECT_CODE(aclopSetAttrListBool(a, "x", 3, NULL), ACL_ERROR_INVALID_PARAM,
                "values is NULL");
    EXPECT_CODE(aclopSetAttrListString(NULL, "x", 2, strs), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrListString: argument attr is NULL");
    EXPECT_CODE(aclopSetAttrListString(a, NULL, 2, strs), ACL_ERROR_INVALID_PARAM, "attrName");
    EXPECT_CODE(aclopSetAttrListString(a, "x", -2, strs), ACL_ERROR_INVALID_PARAM,
                "numValues = -2");
    EXPECT_CODE(aclopSetAttrListString(a, "x", 2, NULL), ACL_ERROR_INVALID_PARAM,
                "values is NULL");
    const char *holey[2] = {"a", NULL};
    EXPECT_CODE(aclopSetAttrListString(a, "x", 2, holey), ACL_ERROR_INVALID_PARAM,
                "argument values[1] is NULL");
    EXPECT_CODE(aclopSetAttrListListInt(NULL, "x", 3, counts, lists), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrListListInt: argument attr is NULL");
    EXPECT_CODE(aclopSetAttrListListInt(a, NULL, 3, counts, lists), ACL_ERROR_INVALID_PARAM,
                "attrName");
    EXPECT_CODE(aclopSetAttrListListInt(a, "x", -1, counts, lists), ACL_ERROR_INVALID_PARAM,
                "numLists = -1");
    EXPECT_CODE(aclopSetAttrListListInt(a, "x", 3, NULL, lists), ACL_ERROR_INVALID_PARAM,
                "argument numValues is NULL but numLists = 3");
    EXPECT_CODE(aclopSetAttrListListInt(a, "x", 3, counts, NULL), ACL_ERROR_INVALID_PARAM,
                "argument values is NULL but numLists = 3");
    const int neg[2] = {2, -1};
    EXPECT_CODE(aclopSetAttrListListInt(a, "x", 2, neg, lists), ACL_ERROR_INVALID_PARAM,
                "numValues[1] = -1");
    const int64_t *const nulls[2] = {l0, NULL};
    const int two[2] = {2, 2};
    EXPECT_CODE(aclopSetAttrListListInt(a, "x", 2, two, nulls), ACL_ERROR_INVALID_PARAM,
                "argument values[1] is NULL but numValues[1] = 2");
    EXPECT_CODE(aclopSetAttrDataType(NULL, "x", ACL_FLOAT), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrDataType: argument attr is NULL");
    EXPECT_CODE(aclopSetAttrDataType(a, NULL, ACL_FLOAT), ACL_ERROR_INVALID_PARAM, "attrName");
    EXPECT_CODE(aclopSetAttrListDataType(NULL, "x", 2, dts), ACL_ERROR_INVALID_PARAM,
                "aclopSetAttrListDataType: argument attr is NULL");
    EXPECT_CODE(aclopSetAttrListDataType(a, NULL, 2, dts), ACL_ERROR_INVALID_PARAM, "attrName");
    EXPECT_CODE(aclopSetAttrListDataType(a, "x", -3, dts), ACL_ERROR_INVALID_PARAM,
                "numValues = -3");
    EXPECT_CODE(aclopSetAttrListDataType(a, "x", 2, NULL), ACL_ERROR_INVALID_PARAM,
                "values is NULL");
    // A destroyed attr is rejected, not touched.
    aclopAttr *gone = aclopCreateAttr();
    aclopDestroyAttr(gone);
    EXPECT_CODE(aclopSetAttrListInt(gone, "x", 3, ints), ACL_ERROR_INVALID_PARAM,
                "is not a live aclopAttr");

    // ---- TransData NCHW fp16 [2,19,2,3] -> NC1HWC0 [2,2,2,3,16] with extra attrs of every kind.
    const int N = 2, C = 19, H = 2, W = 3, C1 = 2, C0 = 16;
    const size_t pn = (size_t)N * C * H * W, qn = (size_t)N * C1 * H * W * C0;
    uint16_t *host = new uint16_t[pn], *back = new uint16_t[qn];
    for (size_t i = 0; i < pn; ++i) host[i] = (uint16_t)(i * 7 + 1);
    int64_t ps[4] = {N, C, H, W}, qs[5] = {N, C1, H, W, C0};
    aclTensorDesc *pd = aclCreateTensorDesc(ACL_FLOAT16, 4, ps, ACL_FORMAT_NCHW);
    aclTensorDesc *qd = aclCreateTensorDesc(ACL_FLOAT16, 5, qs, ACL_FORMAT_NC1HWC0);
    void *dp = NULL, *dq = NULL;
    CHECK(aclrtMalloc(&dp, pn * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dq, qn * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dp, pn * 2, host, pn * 2, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemset(dq, qn * 2, 0x77, qn * 2));
    aclDataBuffer *pb = aclCreateDataBuffer(dp, pn * 2), *qb = aclCreateDataBuffer(dq, qn * 2);
    aclTensorDesc *in[1] = {pd}, *out[1] = {qd};
    aclDataBuffer *ib[1] = {pb}, *ob[1] = {qb};
    CHECK(aclopSetAttrString(a, "src_format", "NCHW"));
    CHECK(aclopSetAttrString(a, "dst_format", "NC1HWC0"));
    CHECK(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, a, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(back, qn * 2, dq, qn * 2, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(mismatches(host, back, N, C, H, W) == 0);
    printf("ok transdata with extra attrs\n");

    // The same through aclopCompileAndExecute.
    CHECK(aclrtMemset(dq, qn * 2, 0x55, qn * 2));
    CHECK(aclopCompileAndExecute("TransData", 1, in, ib, 1, out, ob, a, ACL_ENGINE_SYS,
                                 ACL_COMPILE_SYS, NULL, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(back, qn * 2, dq, qn * 2, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(mismatches(host, back, N, C, H, W) == 0);
    printf("ok compile-and-execute with extra attrs\n");

    // Typed storage: an attr TransData needs, set through a list setter, is reported by kind.
    CHECK(aclopSetAttrListString(a, "src_format", 1, strs));
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, a, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH,
                "attr src_format must be a string (aclopSetAttrString), but it was set as a list "
                "of strings (aclopSetAttrListString)");
    CHECK(aclopSetAttrString(a, "src_format", "NCHW"));
    CHECK(aclopSetAttrListInt(a, "groups", 1, ints));
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, a, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "list of ints (aclopSetAttrListInt)");
    CHECK(aclopSetAttrDataType(a, "groups", ACL_INT64));
    EXPECT_CODE(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, a, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "data type (aclopSetAttrDataType)");
    CHECK(aclopSetAttrInt(a, "groups", 1));
    CHECK(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, a, s));
    CHECK(aclrtSynchronizeStream(s));
    printf("ok typed storage\n");

    // ---- Declared, linked, not supported: each names itself.
    EXPECT_CODE(aclopSetModelDir("."), ACL_ERROR_API_NOT_SUPPORT, "aclopSetModelDir");
    EXPECT_CODE(aclopLoad(host, 4), ACL_ERROR_API_NOT_SUPPORT, "aclopLoad");
    aclopHandle *h = NULL;
    const aclTensorDesc *cin[1] = {pd}, *cout[1] = {qd};
    EXPECT_CODE(aclopCreateHandle("TransData", 1, cin, 1, cout, a, &h), ACL_ERROR_API_NOT_SUPPORT,
                "aclopCreateHandle");
    EXPECT_CODE(aclopCompile("TransData", 1, cin, 1, cout, a, ACL_ENGINE_SYS, ACL_COMPILE_SYS,
                             NULL),
                ACL_ERROR_API_NOT_SUPPORT, "aclopCompile");
    // Compile options are kept and reported (api/compile_opt.rs, tests/c/rt_settings.c).
    CHECK(aclSetCompileopt(ACL_OP_JIT_COMPILE, "disable"));
    EXPECT(aclGetCompileoptSize(ACL_OP_JIT_COMPILE) == strlen("disable") + 1);
    // Process settings, kept (npu-emu compiles no operators); a bad flag is refused.
    CHECK(aclopSetCompileFlag(ACL_OP_COMPILE_FUZZ));
    CHECK(aclopSetCompileFlag(ACL_OP_COMPILE_DEFAULT));
    EXPECT_CODE(aclopSetCompileFlag((aclOpCompileFlag)7), ACL_ERROR_INVALID_PARAM, "flag = 7");
    CHECK(aclopSetMaxOpQueueNum(100));
    EXPECT_CODE(aclopRegisterCompileFunc("X", NULL), ACL_ERROR_API_NOT_SUPPORT,
                "aclopRegisterCompileFunc");
    EXPECT(ACL_COMPILE_FLAG_BIN_SELECTOR == 1 && ACL_OP_DEBUG_OPTION == 16);
    // acl_dump.h, which acl_op.h includes in CANN 8.x (operator-information records: see
    // api/dump.rs and tests/c/rest/resources.c).
    CHECK(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, "."));
    CHECK(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS));
    EXPECT(acldumpGetPath(DATA_DUMP) == NULL);

    aclopDestroyAttr(a);
    CHECK(aclDestroyDataBuffer(pb));
    CHECK(aclDestroyDataBuffer(qb));
    aclDestroyTensorDesc(pd);
    aclDestroyTensorDesc(qd);
    CHECK(aclrtFree(dp));
    CHECK(aclrtFree(dq));
    delete[] host;
    delete[] back;
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS attr lists\n");
    return 0;
}
