// Every tensor-descriptor function of acl_base_mdl.h against the headers: values, sizes,
// the storage/origin split, aclTransTensorDescFormat shapes, and the documented codes and
// messages for bad input. CANN's rules: the getters read the shape and format given at
// creation (or by aclSetTensorOrigin*); aclSetTensorFormat/Shape set the storage side.
#include <cstdint>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "common.h"

#define GE_FORMAT_INVALID 145020
#define GE_SHAPE_INVALID 145021

static void expect_msg(const char *sub) {
    const char *m = aclGetRecentErrMsg();
    if (m == NULL || strstr(m, sub) == NULL) {
        fprintf(stderr, "FAIL: recent message %s does not contain \"%s\"\n", m ? m : "(none)", sub);
        exit(1);
    }
    printf("ok message: %s\n", m);
}

static std::vector<int64_t> shape_of(const aclTensorDesc *d) {
    std::vector<int64_t> s;
    size_t n = aclGetTensorDescNumDims(d);
    for (size_t i = 0; i < n; ++i) {
        int64_t v = -99;
        CHECK(aclGetTensorDescDimV2(d, i, &v));
        s.push_back(v);
    }
    return s;
}

static void expect_shape(const aclTensorDesc *d, std::vector<int64_t> want) {
    std::vector<int64_t> got = shape_of(d);
    if (got != want) {
        fprintf(stderr, "FAIL: shape [");
        for (auto v : got) fprintf(stderr, "%lld ", (long long)v);
        fprintf(stderr, "] expected [");
        for (auto v : want) fprintf(stderr, "%lld ", (long long)v);
        fprintf(stderr, "]\n");
        exit(1);
    }
}

static void trans_case(aclDataType dt, aclFormat from, std::vector<int64_t> shape, aclFormat to,
                       std::vector<int64_t> want) {
    aclTensorDesc *s = aclCreateTensorDesc(dt, (int)shape.size(), shape.data(), from);
    EXPECT(s != NULL);
    aclTensorDesc *d = NULL;
    CHECK(aclTransTensorDescFormat(s, to, &d));
    EXPECT(d != NULL && d != s);
    EXPECT(aclGetTensorDescFormat(d) == to);
    EXPECT(aclGetTensorDescType(d) == dt);
    expect_shape(d, want);
    size_t n = 1;
    for (auto v : want) n *= (size_t)v;
    EXPECT(aclGetTensorDescElementCount(d) == n);
    EXPECT(aclGetTensorDescSize(d) == n * aclDataTypeSize(dt));
    // The source is untouched.
    EXPECT(aclGetTensorDescFormat(s) == from);
    expect_shape(s, shape);
    aclDestroyTensorDesc(d);
    aclDestroyTensorDesc(s);
    printf("ok trans %d -> %d\n", (int)from, (int)to);
}

int main() {
    // No aclInit needed for descriptors (as in CANN).
    int64_t dims[4] = {2, 3, 5, 7};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT16, 4, dims, ACL_FORMAT_NCHW);
    EXPECT(d != NULL);
    EXPECT(aclGetTensorDescType(d) == ACL_FLOAT16);
    EXPECT(aclGetTensorDescFormat(d) == ACL_FORMAT_NCHW);
    EXPECT(aclGetTensorDescNumDims(d) == 4);
    expect_shape(d, {2, 3, 5, 7});
    EXPECT(aclGetTensorDescElementCount(d) == 210);
    EXPECT(aclGetTensorDescSize(d) == 420);
    EXPECT(aclGetTensorDescDim(d, 2) == 5);
    EXPECT(aclGetTensorDescDim(d, 4) == -1);
    expect_msg("index = 4");
    int64_t v = 0;
    EXPECT_CODE(aclGetTensorDescDimV2(d, 4, &v), ACL_ERROR_INVALID_PARAM, "aclGetTensorDescDimV2");
    EXPECT_CODE(aclGetTensorDescDimV2(d, 0, NULL), ACL_ERROR_INVALID_PARAM, "dimSize");
    EXPECT_CODE(aclGetTensorDescDimV2(NULL, 0, &v), ACL_ERROR_INVALID_PARAM, "desc");

    // The address of a descriptor of aclCreateTensorDesc is NULL; index 0 is itself.
    EXPECT(aclGetTensorDescAddress(d) == NULL);
    EXPECT(aclGetTensorDescByIndex(d, 0) == d);
    EXPECT(aclGetTensorDescByIndex(d, 1) == NULL);
    expect_msg("index = 1");

    // Name.
    EXPECT(strcmp(aclGetTensorDescName(d), "") == 0);
    aclSetTensorDescName(d, "x");
    EXPECT(strcmp(aclGetTensorDescName(d), "x") == 0);
    aclSetTensorDescName(d, NULL);
    EXPECT(strcmp(aclGetTensorDescName(d), "") == 0);
    EXPECT(strcmp(aclGetTensorDescName(NULL), "") == 0);
    aclSetTensorDescName(NULL, "y");
    expect_msg("aclSetTensorDescName");

    // Storage format and shape do not change what the getters report (CANN).
    int64_t st[5] = {2, 1, 5, 7, 16};
    CHECK(aclSetTensorFormat(d, ACL_FORMAT_NC1HWC0));
    CHECK(aclSetTensorShape(d, 5, st));
    CHECK(aclSetTensorStorageFormat(d, ACL_FORMAT_NC1HWC0));
    CHECK(aclSetTensorStorageShape(d, 5, st));
    EXPECT(aclGetTensorDescFormat(d) == ACL_FORMAT_NCHW);
    EXPECT(aclGetTensorDescSize(d) == 420);
    expect_shape(d, {2, 3, 5, 7});
    EXPECT_CODE(aclSetTensorShape(d, 5, NULL), ACL_ERROR_INVALID_PARAM, "dims");
    EXPECT_CODE(aclSetTensorShape(NULL, 5, st), ACL_ERROR_INVALID_PARAM, "desc");
    EXPECT_CODE(aclSetTensorStorageShape(NULL, 5, st), ACL_ERROR_INVALID_PARAM, "desc");
    // CANN lets the format setters succeed on NULL (a no-op); a message says so.
    EXPECT_CODE(aclSetTensorFormat(NULL, ACL_FORMAT_NCHW), ACL_SUCCESS, "NULL");
    EXPECT_CODE(aclSetTensorStorageFormat(NULL, ACL_FORMAT_NCHW), ACL_SUCCESS, "NULL");
    EXPECT_CODE(aclSetTensorOriginFormat(NULL, ACL_FORMAT_NCHW), ACL_SUCCESS, "NULL");

    // Origin format and shape are what the getters report.
    int64_t o[2] = {6, 35};
    CHECK(aclSetTensorOriginFormat(d, ACL_FORMAT_ND));
    CHECK(aclSetTensorOriginShape(d, 2, o));
    EXPECT(aclGetTensorDescFormat(d) == ACL_FORMAT_ND);
    expect_shape(d, {6, 35});
    EXPECT(aclGetTensorDescSize(d) == 6 * 35 * 2);
    EXPECT_CODE(aclSetTensorOriginShape(NULL, 2, o), ACL_ERROR_INVALID_PARAM, "desc");
    EXPECT_CODE(aclSetTensorOriginShape(d, 2, NULL), ACL_ERROR_INVALID_PARAM, "dims");

    // Shape and value ranges.
    int64_t ranges[2][ACL_TENSOR_SHAPE_RANGE_NUM] = {{1, 8}, {35, 35}};
    CHECK(aclSetTensorShapeRange(d, 2, ranges));
    int64_t r[2] = {0, 0};
    CHECK(aclGetTensorDescDimRange(d, 1, 2, r));
    EXPECT(r[0] == 35 && r[1] == 35);
    CHECK(aclGetTensorDescDimRange(d, 0, 2, r));
    EXPECT(r[0] == 1 && r[1] == 8);
    EXPECT_CODE(aclGetTensorDescDimRange(d, 2, 2, r), ACL_ERROR_INVALID_PARAM, "index = 2");
    EXPECT_CODE(aclGetTensorDescDimRange(d, 0, 1, r), ACL_ERROR_INVALID_PARAM, "dimRangeNum");
    EXPECT_CODE(aclGetTensorDescDimRange(d, 0, 2, NULL), ACL_ERROR_INVALID_PARAM, "dimRange");
    EXPECT_CODE(aclGetTensorDescDimRange(NULL, 0, 2, r), ACL_ERROR_INVALID_PARAM, "desc");
    EXPECT_CODE(aclSetTensorShapeRange(NULL, 2, ranges), ACL_ERROR_INVALID_PARAM, "desc");
    int64_t vr[1][ACL_TENSOR_VALUE_RANGE_NUM] = {{0, 10}};
    CHECK(aclSetTensorValueRange(d, 1, vr));
    EXPECT_CODE(aclSetTensorValueRange(NULL, 1, vr), ACL_ERROR_INVALID_PARAM, "desc");

    // Const data, placement, dynamic input.
    int32_t cdata[3] = {1, 2, 3};
    CHECK(aclSetTensorConst(d, cdata, sizeof cdata));
    EXPECT_CODE(aclSetTensorConst(d, cdata, 0), ACL_ERROR_INVALID_PARAM, "length");
    EXPECT_CODE(aclSetTensorConst(d, NULL, 4), ACL_ERROR_INVALID_PARAM, "dataBuffer");
    EXPECT_CODE(aclSetTensorConst(NULL, cdata, 4), ACL_ERROR_INVALID_PARAM, "desc");
    CHECK(aclSetTensorPlaceMent(d, ACL_MEMTYPE_HOST));
    EXPECT_CODE(aclSetTensorPlaceMent(NULL, ACL_MEMTYPE_HOST), ACL_ERROR_INVALID_PARAM, "desc");
    CHECK(aclSetTensorDynamicInput(d, "x"));
    EXPECT_CODE(aclSetTensorDynamicInput(d, NULL), ACL_ERROR_INVALID_PARAM, "dynamicInputName");
    EXPECT_CODE(aclSetTensorDynamicInput(NULL, "x"), ACL_ERROR_INVALID_PARAM, "desc");
    aclDestroyTensorDesc(d);

    // NULL fallbacks of the value getters, each with a message.
    EXPECT(aclGetTensorDescType(NULL) == ACL_DT_UNDEFINED);
    expect_msg("aclGetTensorDescType");
    EXPECT(aclGetTensorDescFormat(NULL) == ACL_FORMAT_UNDEFINED);
    expect_msg("aclGetTensorDescFormat");
    EXPECT(aclGetTensorDescSize(NULL) == 0);
    expect_msg("aclGetTensorDescSize");
    EXPECT(aclGetTensorDescElementCount(NULL) == 0);
    EXPECT(aclGetTensorDescNumDims(NULL) == 0);
    EXPECT(aclGetTensorDescDim(NULL, 0) == -1);
    EXPECT(aclGetTensorDescAddress(NULL) == NULL);
    EXPECT(aclGetTensorDescByIndex(NULL, 0) == NULL);
    aclDestroyTensorDesc(NULL);

    // Scalar, dynamic, empty and unknown-rank shapes; undefined format/type.
    aclTensorDesc *sc = aclCreateTensorDesc(ACL_FLOAT, 0, NULL, ACL_FORMAT_ND);
    EXPECT(sc != NULL);
    EXPECT(aclGetTensorDescNumDims(sc) == 0);
    EXPECT(aclGetTensorDescElementCount(sc) == 1);
    EXPECT(aclGetTensorDescSize(sc) == 4);
    aclDestroyTensorDesc(sc);
    int64_t dyn[2] = {-1, 16};
    aclTensorDesc *dy = aclCreateTensorDesc(ACL_FLOAT, 2, dyn, ACL_FORMAT_ND);
    EXPECT(aclGetTensorDescNumDims(dy) == 2);
    EXPECT(aclGetTensorDescSize(dy) == 0);
    EXPECT(aclGetTensorDescElementCount(dy) == 0);
    aclDestroyTensorDesc(dy);
    int64_t zero[3] = {4, 0, 5};
    aclTensorDesc *z = aclCreateTensorDesc(ACL_INT8, 3, zero, ACL_FORMAT_UNDEFINED);
    EXPECT(aclGetTensorDescFormat(z) == ACL_FORMAT_UNDEFINED);
    EXPECT(aclGetTensorDescSize(z) == 0);
    aclDestroyTensorDesc(z);
    int64_t ur[1] = {-2};
    aclTensorDesc *u = aclCreateTensorDesc(ACL_FLOAT, 1, ur, ACL_FORMAT_ND);
    EXPECT(aclGetTensorDescNumDims(u) == ACL_UNKNOWN_RANK);
    aclDestroyTensorDesc(u);
    int64_t two[2] = {3, 5};
    aclTensorDesc *ud = aclCreateTensorDesc(ACL_DT_UNDEFINED, 2, two, ACL_FORMAT_ND);
    EXPECT(aclGetTensorDescSize(ud) == 0);
    EXPECT(aclGetTensorDescElementCount(ud) == 15);
    aclDestroyTensorDesc(ud);
    aclTensorDesc *i64 = aclCreateTensorDesc(ACL_INT64, 2, two, ACL_FORMAT_ND);
    EXPECT(aclGetTensorDescSize(i64) == 120);
    aclDestroyTensorDesc(i64);

    // Bad creation arguments.
    EXPECT(aclCreateTensorDesc(ACL_FLOAT, -1, dims, ACL_FORMAT_ND) == NULL);
    expect_msg("numDims = -1");
    EXPECT(aclCreateTensorDesc(ACL_FLOAT, 2, NULL, ACL_FORMAT_ND) == NULL);
    expect_msg("dims is NULL");

    // aclTransTensorDescFormat: shapes per abi.md §5.2 with GE's C0 (fp16/fp32 16, int8 32).
    trans_case(ACL_FLOAT16, ACL_FORMAT_NCHW, {2, 3, 5, 7}, ACL_FORMAT_NC1HWC0, {2, 1, 5, 7, 16});
    trans_case(ACL_FLOAT, ACL_FORMAT_NCHW, {2, 19, 5, 7}, ACL_FORMAT_NC1HWC0, {2, 2, 5, 7, 16});
    trans_case(ACL_INT8, ACL_FORMAT_NCHW, {2, 33, 5, 7}, ACL_FORMAT_NC1HWC0, {2, 2, 5, 7, 32});
    trans_case(ACL_FLOAT16, ACL_FORMAT_ND, {3, 17, 35}, ACL_FORMAT_FRACTAL_NZ, {3, 3, 2, 16, 16});
    trans_case(ACL_INT8, ACL_FORMAT_ND, {17, 35}, ACL_FORMAT_FRACTAL_NZ, {2, 2, 16, 32});
    trans_case(ACL_FLOAT16, ACL_FORMAT_NCHW, {2, 3, 5, 7}, ACL_FORMAT_NCHW, {2, 3, 5, 7});
    if (getenv("DESC_ALL_FORMATS")) {
        trans_case(ACL_FLOAT16, ACL_FORMAT_NHWC, {2, 5, 7, 3}, ACL_FORMAT_NC1HWC0, {2, 1, 5, 7, 16});
        trans_case(ACL_FLOAT16, ACL_FORMAT_NCHW, {17, 19, 2, 3}, ACL_FORMAT_FRACTAL_Z, {12, 2, 16, 16});
        trans_case(ACL_FLOAT16, ACL_FORMAT_NCHW, {2, 3, 5, 7}, ACL_FORMAT_NC1HWC0_C04, {2, 1, 5, 7, 4});
        trans_case(ACL_FLOAT16, ACL_FORMAT_NCDHW, {2, 19, 3, 5, 7}, ACL_FORMAT_NDC1HWC0, {2, 3, 2, 5, 7, 16});
        trans_case(ACL_FLOAT, ACL_FORMAT_ND, {17, 35}, ACL_FORMAT_FRACTAL_NZ_C0_8, {5, 2, 16, 8});
        // FRACTAL_Z with the group count 2 packed as its sub-format: Cin 5, Cout 2 per group,
        // e = min(lcm(16, 8), 2) = 2, C1 = 1, N1 = 1 -> [1*1*2*3, 1, 16, 16].
        trans_case(ACL_FLOAT16, ACL_FORMAT_NCHW, {4, 5, 2, 3},
                   (aclFormat)(ACL_FORMAT_FRACTAL_Z | (2 << 8)), {6, 1, 16, 16});
    }

    aclTensorDesc *s = aclCreateTensorDesc(ACL_FLOAT16, 4, dims, ACL_FORMAT_NCHW);
    aclTensorDesc *out = NULL;
    EXPECT_CODE(aclTransTensorDescFormat(NULL, ACL_FORMAT_NC1HWC0, &out), ACL_ERROR_INVALID_PARAM, "srcDesc");
    EXPECT_CODE(aclTransTensorDescFormat(s, ACL_FORMAT_NC1HWC0, NULL), ACL_ERROR_INVALID_PARAM, "dstDesc");
    aclTensorDesc *nz = aclCreateTensorDesc(ACL_FLOAT16, 4, dims, ACL_FORMAT_FRACTAL_NZ);
    EXPECT_CODE(aclTransTensorDescFormat(nz, ACL_FORMAT_NC1HWC0, &out), GE_FORMAT_INVALID, "FRACTAL_NZ");
    EXPECT(out == NULL);
    int64_t three[3] = {2, 3, 5};
    aclTensorDesc *bad = aclCreateTensorDesc(ACL_FLOAT16, 3, three, ACL_FORMAT_NCHW);
    EXPECT_CODE(aclTransTensorDescFormat(bad, ACL_FORMAT_NC1HWC0, &out), GE_SHAPE_INVALID, "[2, 3, 5]");
    aclDestroyTensorDesc(bad);
    aclDestroyTensorDesc(nz);
    aclDestroyTensorDesc(s);
    // A destroyed descriptor is caught, not dereferenced.
    EXPECT(aclGetTensorDescType(s) == ACL_DT_UNDEFINED);
    expect_msg("not a live aclTensorDesc");
    printf("PASS\n");
    return 0;
}
