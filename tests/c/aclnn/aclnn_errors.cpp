/* Bad input to aclnnNpuFormatCast and the nnopbase functions: each call gives the code CANN
 * documents and a message in aclGetRecentErrMsg naming the function and what is wrong.
 * `aclnn_errors soc` runs only the checks of an unsupported SoC (NPU_EMU_SOC set by the
 * test harness). */
#include "aclnn_common.h"

static void soc_checks() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Shape shape{4, 4};
    int64_t fake = 0;
    aclTensor *src = tensor(shape, ACL_FLOAT16, ACL_FORMAT_ND, shape, &fake);
    int64_t *dims = nullptr;
    uint64_t n = 0;
    int actual = 0;
    EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(src, ACL_FORMAT_FRACTAL_NZ, -1, &dims, &n, &actual),
              ACLNN_ERR_RUNTIME_ERROR, "Ascend310P3");
    EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(src, src, &ws, &ex), ACLNN_ERR_RUNTIME_ERROR,
              "aclnnNpuFormatCastGetWorkspaceSize: aclnnNpuFormatCast is supported on Ascend910B");
    aclDestroyTensor(src);
    /* Atlas inference (310P) has the matmul weight API, 2-D and without BFLOAT16. */
    Shape w{32, 16};
    aclIntArray *wa = aclCreateIntArray(w.data(), 2);
    uint64_t elems = 0;
    CHECK_NN(aclnnCalculateMatmulWeightSizeV2(wa, ACL_FLOAT16, &elems));
    EXPECT(elems == 512);
    Shape w3{2, 32, 16};
    aclIntArray *wa3 = aclCreateIntArray(w3.data(), 3);
    EXPECT_NN(aclnnCalculateMatmulWeightSize(wa3, &elems), ACLNN_ERR_PARAM_INVALID, "must have 2 dimensions");
    aclTensor *bf = tensor(w, ACL_BF16, ACL_FORMAT_ND, w, &fake);
    EXPECT_NN(aclnnTransMatmulWeightGetWorkspaceSize(bf, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
              "mmWeightRef has data type BFLOAT16, which is not supported; supported: FLOAT16, INT8");
    aclDestroyTensor(bf);
    aclDestroyIntArray(wa);
    aclDestroyIntArray(wa3);
}

/* aclnnTransMatmulWeight and the weight sizes. */
static void weight_errors(aclrtStream stream) {
    int64_t fake = 0;
    uint64_t ws = 0, elems = 0;
    aclOpExecutor *ex = nullptr;
    EXPECT_NN(aclnnTransMatmulWeightGetWorkspaceSize(nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR,
              "aclnnTransMatmulWeightGetWorkspaceSize: mmWeightRef is nullptr");
    Shape s2{40, 24}, s4{2, 2, 40, 24}, s0{0, 24};
    aclTensor *f32 = tensor(s2, ACL_FLOAT, ACL_FORMAT_ND, s2, &fake);
    EXPECT_NN(aclnnTransMatmulWeightGetWorkspaceSize(f32, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
              "mmWeightRef has data type FLOAT, which is not supported");
    aclTensor *h4 = tensor(s4, ACL_FLOAT16, ACL_FORMAT_ND, s4, &fake);
    EXPECT_NN(aclnnTransMatmulWeightGetWorkspaceSize(h4, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
              "mmWeightRef shape must have 2 to 3 dimensions");
    aclTensor *nz = tensor(s2, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ, nz_shape(s2, 2), &fake);
    EXPECT_NN(aclnnTransMatmulWeightGetWorkspaceSize(nz, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
              "the format of mmWeightRef should be ND, but it is FRACTAL_NZ(29)");
    aclTensor *e0 = tensor(s0, ACL_FLOAT16, ACL_FORMAT_ND, s0, &fake);
    EXPECT_NN(aclnnTransMatmulWeightGetWorkspaceSize(e0, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "empty tensor");
    aclIntArray *a4 = aclCreateIntArray(s4.data(), 4);
    EXPECT_NN(aclnnCalculateMatmulWeightSize(a4, &elems), ACLNN_ERR_PARAM_INVALID,
              "aclnnCalculateMatmulWeightSize: tensorShape shape must have 2 to 3 dimensions");
    aclIntArray *a0 = aclCreateIntArray(s0.data(), 2);
    EXPECT_NN(aclnnCalculateMatmulWeightSizeV2(a0, ACL_INT8, &elems), ACLNN_ERR_PARAM_INVALID,
              "zero or negative dimension");
    EXPECT_NN(aclnnCalculateMatmulWeightSizeV2(nullptr, ACL_INT8, &elems), ACLNN_ERR_PARAM_NULLPTR,
              "tensorShape is nullptr");
    CHECK_NN(aclnnCalculateMatmulWeightSizeV2(a4, ACL_INT8, &elems));
    EXPECT(elems == 2 * 2 * 48 * 32);

    /* A too-small workspace, and a NULL one. */
    size_t bytes = 48 * 32 * 2;
    void *w_dev = dev_alloc(bytes, nullptr, 0);
    aclTensor *w = tensor(s2, ACL_FLOAT16, ACL_FORMAT_ND, s2, w_dev);
    CHECK_NN(aclnnTransMatmulWeightGetWorkspaceSize(w, &ws, &ex));
    EXPECT(ws >= bytes);
    void *ws_dev = dev_alloc(ws, nullptr, 0);
    char want[160];
    snprintf(want, sizeof(want), "workspaceSize %llu is smaller than the %llu bytes aclnnTransMatmulWeightGetWorkspaceSize returned",
             static_cast<unsigned long long>(ws - 1), static_cast<unsigned long long>(ws));
    EXPECT_NN(aclnnTransMatmulWeight(ws_dev, ws - 1, ex, stream), ACLNN_ERR_PARAM_INVALID, want);
    /* A weight buffer smaller than the private layout (K 40 -> 48 rows). */
    aclTensor *w2 = tensor(s2, ACL_FLOAT16, ACL_FORMAT_ND, s2, w_dev);
    void *small = dev_alloc(40 * 24 * 2, nullptr, 0);
    CHECK_NN(aclSetRawTensorAddr(w2, small));
    CHECK_NN(aclnnTransMatmulWeightGetWorkspaceSize(w2, &ws, &ex));
    EXPECT_NN(aclnnTransMatmulWeight(ws_dev, ws, ex, stream), ACLNN_ERR_PARAM_INVALID,
              "mmWeightRef data (its private-format size)");
    aclTensor *w3 = tensor(s2, ACL_FLOAT16, ACL_FORMAT_ND, s2, w_dev);
    CHECK_NN(aclnnTransMatmulWeightGetWorkspaceSize(w3, &ws, &ex));
    EXPECT_NN(aclnnTransMatmulWeight(nullptr, ws, ex, stream), ACLNN_ERR_PARAM_NULLPTR, "workspace is nullptr");
    CHECK(aclrtSynchronizeStream(stream));
    for (aclTensor *t : {f32, h4, nz, e0, w, w2, w3}) aclDestroyTensor(t);
    aclDestroyIntArray(a4);
    aclDestroyIntArray(a0);
    CHECK(aclrtFree(w_dev));
    CHECK(aclrtFree(ws_dev));
    CHECK(aclrtFree(small));
}

int main(int argc, char **argv) {
    aclrtStream stream = nullptr;
    init_device(&stream);
    if (argc > 1 && strcmp(argv[1], "soc") == 0) {
        soc_checks();
        printf("PASS\n");
        return 0;
    }
    Shape shape{17, 33};
    std::vector<uint8_t> host = pattern(numel(shape), 2, 3);
    void *src_dev = dev_alloc(host.size(), &host, 0);
    aclTensor *src = tensor(shape, ACL_FLOAT16, ACL_FORMAT_ND, shape, src_dev);
    Shape storage = nz_shape(shape, 2);
    size_t dst_bytes = static_cast<size_t>(numel(storage)) * 2;
    void *dst_dev = dev_alloc(dst_bytes, nullptr, 0);
    aclTensor *dst = tensor(shape, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ, storage, dst_dev);
    int64_t *dims = nullptr;
    uint64_t n = 0;
    int actual = 0;
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;

    /* ---- aclnnNpuFormatCastCalculateSizeAndFormat ---- */
    EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(nullptr, ACL_FORMAT_FRACTAL_NZ, -1, &dims, &n, &actual),
              ACLNN_ERR_PARAM_NULLPTR, "aclnnNpuFormatCastCalculateSizeAndFormat: srcTensor is nullptr");
    EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(src, ACL_FORMAT_FRACTAL_NZ, -1, nullptr, &n, &actual),
              ACLNN_ERR_PARAM_NULLPTR, "dstShape is nullptr");
    /* ND -> NDC1HWC0 is not a conversion aclnnNpuFormatCast knows. */
    EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(src, ACL_FORMAT_NDC1HWC0, -1, &dims, &n, &actual),
              ACLNN_ERR_RUNTIME_ERROR, "unsupported format transformation: srcTensor ND(2) to dstFormat NDC1HWC0(32)");
    EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(src, ACL_FORMAT_FRACTAL_NZ, ACL_FLOAT, &dims, &n, &actual),
              ACLNN_ERR_PARAM_INVALID, "additionalDtype 0");
    {
        int64_t fake = 0;
        Shape s64{8, 8};
        aclTensor *t64 = tensor(s64, ACL_INT64, ACL_FORMAT_ND, s64, &fake);
        EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(t64, ACL_FORMAT_FRACTAL_NZ, -1, &dims, &n, &actual),
                  ACLNN_ERR_PARAM_INVALID, "srcTensor has data type INT64, which is not supported");
        Shape s1{40};
        aclTensor *t1 = tensor(s1, ACL_FLOAT16, ACL_FORMAT_ND, s1, &fake);
        EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(t1, ACL_FORMAT_FRACTAL_NZ, -1, &dims, &n, &actual),
                  ACLNN_ERR_PARAM_INVALID, "must have 2 to 6 dimensions");
        Shape s0{0, 8};
        aclTensor *t0 = tensor(s0, ACL_FLOAT16, ACL_FORMAT_ND, s0, &fake);
        EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(t0, ACL_FORMAT_FRACTAL_NZ, -1, &dims, &n, &actual),
                  ACLNN_ERR_PARAM_INVALID, "empty tensor");
        aclDestroyTensor(t64);
        aclDestroyTensor(t1);
        aclDestroyTensor(t0);
    }

    /* ---- aclnnNpuFormatCastGetWorkspaceSize ---- */
    EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(nullptr, dst, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR,
              "aclnnNpuFormatCastGetWorkspaceSize: srcTensor is nullptr");
    EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(src, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR,
              "dstTensor is nullptr");
    EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, nullptr), ACLNN_ERR_PARAM_NULLPTR,
              "executor is nullptr");
    {
        /* An unsupported pair: ND -> NC1HWC0. */
        Shape s5{1, 2, 17, 33, 16};
        aclTensor *bad = tensor(shape, ACL_FLOAT16, ACL_FORMAT_NC1HWC0, s5, dst_dev);
        EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(src, bad, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
                  "converting srcTensor format ND(2) to dstTensor format NC1HWC0(3) is not supported");
        aclDestroyTensor(bad);
        /* A dst storage shape that is not the computed one (C0 of fp32 used for fp16). */
        Shape wrong{5, 2, 16, 8};
        aclTensor *mis = tensor(shape, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ, wrong, dst_dev);
        EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(src, mis, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
                  "dstTensor storage shape [5, 2, 16, 8] does not match srcTensor shape [17, 33]");
        aclDestroyTensor(mis);
        /* Data types: different, unsupported. */
        Shape s32 = nz_shape(shape, 4);
        aclTensor *f32 = tensor(shape, ACL_FLOAT, ACL_FORMAT_FRACTAL_NZ, s32, dst_dev);
        EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(src, f32, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
                  "srcTensor data type FLOAT16 and dstTensor data type FLOAT differ");
        aclDestroyTensor(f32);
        int64_t fake = 0;
        aclTensor *d64 = tensor(shape, ACL_DOUBLE, ACL_FORMAT_ND, shape, &fake);
        aclTensor *d64nz = tensor(shape, ACL_DOUBLE, ACL_FORMAT_FRACTAL_NZ, nz_shape(shape, 8), &fake);
        EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(d64, d64nz, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
                  "srcTensor has data type DOUBLE, which is not supported");
        aclDestroyTensor(d64);
        aclDestroyTensor(d64nz);
        /* A non-contiguous (transposed) source. */
        Shape tshape{33, 17}, tstrides{1, 33};
        aclTensor *tr = aclCreateTensor(tshape.data(), 2, ACL_FLOAT16, tstrides.data(), 0, ACL_FORMAT_ND,
                                        shape.data(), 2, src_dev);
        aclTensor *trdst = tensor(tshape, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ, nz_shape(tshape, 2), dst_dev);
        EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(tr, trdst, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
                  "only contiguous tensors are supported: srcTensor");
        aclDestroyTensor(tr);
        aclDestroyTensor(trdst);
        /* A destroyed tensor. */
        aclTensor *gone = tensor(shape, ACL_FLOAT16, ACL_FORMAT_ND, shape, src_dev);
        CHECK_NN(aclDestroyTensor(gone));
        EXPECT_NN(aclnnNpuFormatCastGetWorkspaceSize(gone, dst, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
                  "is not a live aclTensor");
    }

    /* ---- aclnnNpuFormatCast ---- */
    EXPECT_NN(aclnnNpuFormatCast(nullptr, 0, nullptr, stream), ACLNN_ERR_PARAM_NULLPTR,
              "aclnnNpuFormatCast: executor is nullptr");
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    EXPECT(ws == 0);
    /* workspaceSize > 0 with a NULL workspace: rejected, and the executor is gone (CANN). */
    EXPECT_NN(aclnnNpuFormatCast(nullptr, 64, ex, stream), ACLNN_ERR_PARAM_NULLPTR,
              "workspace is nullptr but workspaceSize is 64");
    EXPECT_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream), ACLNN_ERR_PARAM_INVALID, "is not a live aclOpExecutor");
    /* A workspace that is not device memory. */
    char host_ws[64];
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    EXPECT_NN(aclnnNpuFormatCast(host_ws, sizeof(host_ws), ex, stream), ACLNN_ERR_PARAM_INVALID,
              "workspace");
    /* Single use: the second run of the same executor fails. */
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    CHECK_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(dev_read(dst_dev, dst_bytes) == ref_nz(shape, host, 2));
    EXPECT_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream), ACLNN_ERR_PARAM_INVALID, "is not a live aclOpExecutor");
    {
        /* A destination allocation smaller than the storage shape. */
        void *small = nullptr;
        CHECK(aclrtMalloc(&small, 256, ACL_MEM_MALLOC_HUGE_FIRST));
        aclTensor *sdst = tensor(shape, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ, storage, small);
        CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, sdst, &ws, &ex));
        EXPECT_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream), ACLNN_ERR_PARAM_INVALID,
                  "dstTensor data");
        aclDestroyTensor(sdst);
        CHECK(aclrtFree(small));
        /* Host memory as tensor data. */
        std::vector<uint8_t> hbuf(dst_bytes);
        aclTensor *hdst = tensor(shape, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ, storage, hbuf.data());
        CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, hdst, &ws, &ex));
        EXPECT_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream), ACLNN_ERR_PARAM_INVALID,
                  "is not inside one device allocation of this process");
        aclDestroyTensor(hdst);
        /* Source and destination overlapping. */
        aclTensor *odst = tensor(shape, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ, storage, src_dev);
        CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, odst, &ws, &ex));
        EXPECT_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream), ACLNN_ERR_PARAM_INVALID, "overlap");
        aclDestroyTensor(odst);
    }

    weight_errors(stream);

    /* ---- nnopbase ---- */
    EXPECT(aclCreateTensor(nullptr, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, nullptr) == nullptr);
    EXPECT(strstr(test_msg(), "aclCreateTensor: viewDims is nullptr") != nullptr);
    EXPECT_NN(aclGetViewShape(nullptr, &dims, &n), ACLNN_ERR_PARAM_NULLPTR, "aclGetViewShape: tensor is nullptr");
    EXPECT_NN(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_INNER_NULLPTR, "executor is nullptr");
    EXPECT_NN(aclSetRawTensorAddr(nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR, "tensor is nullptr");

    aclDestroyTensor(src);
    aclDestroyTensor(dst);
    CHECK(aclrtFree(src_dev));
    CHECK(aclrtFree(dst_dev));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS\n");
    return 0;
}
