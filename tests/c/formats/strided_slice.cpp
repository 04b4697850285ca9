// The "StridedSlice" operator of the single-operator API (torch_npu's npu_indexing), from
// CANN's op prototype: inputs x, begin, end, strides (integer lists, here constant host
// tensors as torch_npu passes them), attrs begin_mask, end_mask, ellipsis_mask,
// new_axis_mask, shrink_axis_mask (TensorFlow's strided slice). Each case is checked
// element by element against the slice computed here; a y whose shape is not the slice's is
// ACL_ERROR_OP_OUTPUT_NOT_MATCH, a zero stride ACL_ERROR_OP_INPUT_NOT_MATCH.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "common.h"

static aclrtStream s;
static void *xd;
static const int64_t XD[3] = {4, 5, 6};

// x[i][j][k] = 100 i + 10 j + k (float)
static float xv(int64_t i, int64_t j, int64_t k) { return (float)(100 * i + 10 * j + k); }

static aclError run(const std::vector<int64_t> &b, const std::vector<int64_t> &e, const std::vector<int64_t> &st,
                    const int64_t masks[5], const std::vector<int64_t> &yshape, std::vector<float> *out) {
    aclTensorDesc *xdsc = aclCreateTensorDesc(ACL_FLOAT, 3, XD, ACL_FORMAT_ND);
    const int64_t n[1] = {(int64_t)b.size()};
    aclTensorDesc *ld[3];
    aclDataBuffer *lb[3];
    const std::vector<int64_t> *lists[3] = {&b, &e, &st};
    for (int i = 0; i < 3; i++) {
        ld[i] = aclCreateTensorDesc(ACL_INT64, 1, n, ACL_FORMAT_ND);
        CHECK(aclSetTensorConst(ld[i], (void *)lists[i]->data(), lists[i]->size() * 8));
        lb[i] = aclCreateDataBuffer(nullptr, 0);
    }
    int64_t numel = 1;
    for (int64_t d : yshape) numel *= d;
    void *yd = nullptr;
    CHECK(aclrtMalloc(&yd, numel * 4 + 4, ACL_MEM_MALLOC_HUGE_FIRST));
    aclTensorDesc *ydsc = aclCreateTensorDesc(ACL_FLOAT, (int)yshape.size(), yshape.data(), ACL_FORMAT_ND);
    aclDataBuffer *xb = aclCreateDataBuffer(xd, 4 * 5 * 6 * 4), *yb = aclCreateDataBuffer(yd, numel * 4);
    aclTensorDesc *ind[4] = {xdsc, ld[0], ld[1], ld[2]}, *outd[1] = {ydsc};
    aclDataBuffer *inb[4] = {xb, lb[0], lb[1], lb[2]}, *outb[1] = {yb};
    aclopAttr *a = aclopCreateAttr();
    const char *names[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
    for (int i = 0; i < 5; i++) CHECK(aclopSetAttrInt(a, names[i], masks[i]));
    aclError r = aclopCompileAndExecute("StridedSlice", 4, ind, inb, 1, outd, outb, a, ACL_ENGINE_SYS,
                                        ACL_COMPILE_SYS, nullptr, s);
    if (r == ACL_SUCCESS) {
        CHECK(aclrtSynchronizeStream(s));
        out->resize(numel);
        CHECK(aclrtMemcpy(out->data(), numel * 4, yd, numel * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    }
    aclopDestroyAttr(a);
    for (int i = 0; i < 3; i++) {
        aclDestroyTensorDesc(ld[i]);
        aclDestroyDataBuffer(lb[i]);
    }
    aclDestroyTensorDesc(xdsc);
    aclDestroyTensorDesc(ydsc);
    aclDestroyDataBuffer(xb);
    aclDestroyDataBuffer(yb);
    aclrtFree(yd);
    return r;
}

static void expect(const char *what, const std::vector<float> &got, const std::vector<float> &want) {
    EXPECT(got.size() == want.size());
    for (size_t i = 0; i < want.size(); i++) {
        if (got[i] != want[i]) {
            printf("FAIL %s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
            exit(1);
        }
    }
    printf("ok %s\n", what);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&s));
    std::vector<float> x;
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < 5; j++)
            for (int64_t k = 0; k < 6; k++) x.push_back(xv(i, j, k));
    CHECK(aclrtMalloc(&xd, x.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(xd, x.size() * 4, x.data(), x.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    std::vector<float> got, want;
    const int64_t none[5] = {0, 0, 0, 0, 0};

    // x[1:4:2, 0:5:3, 1:6:2] -> [2, 2, 3]
    CHECK(run({1, 0, 1}, {4, 5, 6}, {2, 3, 2}, none, {2, 2, 3}, &got));
    want.clear();
    for (int64_t i : {1, 3})
        for (int64_t j : {0, 3})
            for (int64_t k : {1, 3, 5}) want.push_back(xv(i, j, k));
    expect("steps", got, want);

    // negative begin and a negative stride: x[-1:0:-2, 4:0:-3] (the last axis whole) -> [2, 2, 6]
    CHECK(run({-1, 4}, {0, 0}, {-2, -3}, none, {2, 2, 6}, &got));
    want.clear();
    for (int64_t i : {3, 1})
        for (int64_t j : {4, 1})
            for (int64_t k = 0; k < 6; k++) want.push_back(xv(i, j, k));
    expect("negative begin and strides, an implicit last axis", got, want);

    // begin_mask bit 0 and end_mask bit 1: x[:2, 3:, 2] (shrink bit 2) -> [2, 2]
    const int64_t m1[5] = {1, 2, 0, 0, 4};
    CHECK(run({3, 3, 2}, {2, 1, 3}, {1, 1, 1}, m1, {2, 2}, &got));
    want.clear();
    for (int64_t i : {0, 1})
        for (int64_t j : {3, 4}) want.push_back(xv(i, j, 2));
    expect("begin/end masks and a shrunk axis", got, want);

    // ellipsis then a new axis: x[..., None, 1:3] -> [4, 5, 1, 2]
    const int64_t m2[5] = {0, 0, 1, 2, 0};
    CHECK(run({0, 0, 1}, {0, 0, 3}, {1, 1, 1}, m2, {4, 5, 1, 2}, &got));
    want.clear();
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < 5; j++)
            for (int64_t k : {1, 2}) want.push_back(xv(i, j, k));
    expect("ellipsis and a new axis", got, want);

    // a y that is not the slice's shape, a zero stride
    EXPECT_CODE(run({1, 0, 1}, {4, 5, 6}, {2, 3, 2}, none, {2, 2, 2}, &got), ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                "is not the slice's shape");
    EXPECT_CODE(run({1, 0, 1}, {4, 5, 6}, {1, 0, 2}, none, {2, 2, 3}, &got), ACL_ERROR_OP_INPUT_NOT_MATCH,
                "strides must not contain 0");
    CHECK(aclrtFree(xd));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS strided_slice\n");
    return 0;
}
