/* aclnnNpuFormatCast end to end through the real entry points, against a host reference:
 * ND <-> FRACTAL_NZ (fp16, fp32 with C0 = 8, int8 with C0 = 32, bf16, int32),
 * NCDHW <-> NDC1HWC0 and NCDHW <-> FRACTAL_Z_3D, at shapes that are not multiples of 16 or
 * C0; padding must be zero although the destination starts out as 0xAB bytes; forward then
 * inverse must give back the source. Also: dstShape and the getters' arrays are freed with
 * delete[] (this program replaces operator new[]/delete[] and checks every delete[] gets a
 * block its new[] made), repeatable executors with aclSetInputTensorAddr, and the tensor
 * getters. Every buffer comes from aclrtMalloc and every stream from aclrtCreateStream:
 * libnnopbase.so must use libascendcl's runtime, not one of its own. */
#include <cstdlib>
#include <new>
#include <link.h>
#include "aclnn_common.h"

/* ---- operator new[] / delete[] replacements that tag their blocks ---- */
static const uint64_t TAG = 0x4e4e4f5042415345ull; /* "NNOPBASE" */
static long g_live_arrays = 0;
static long g_foreign_deletes = 0;

static void *tagged_alloc(std::size_t n) {
    uint64_t *p = static_cast<uint64_t *>(std::malloc(n + 16));
    if (p == nullptr) return nullptr;
    p[0] = TAG;
    g_live_arrays++;
    return p + 2;
}

void *operator new[](std::size_t n) {
    void *p = tagged_alloc(n);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return tagged_alloc(n); }
void operator delete[](void *p) noexcept {
    if (p == nullptr) return;
    uint64_t *b = static_cast<uint64_t *>(p) - 2;
    if (b[0] != TAG) {
        /* Not from our new[]: count it and leak it (freeing would be wrong either way). */
        g_foreign_deletes++;
        return;
    }
    b[0] = 0;
    g_live_arrays--;
    std::free(b);
}
void operator delete[](void *p, std::size_t) noexcept { operator delete[](p); }

/* ---- one conversion and its inverse ---- */
static const char *dt_name(aclDataType t) {
    switch (t) {
    case ACL_FLOAT: return "fp32";
    case ACL_FLOAT16: return "fp16";
    case ACL_BF16: return "bf16";
    case ACL_INT8: return "int8";
    case ACL_INT32: return "int32";
    case ACL_UINT8: return "uint8";
    default: return "?";
    }
}

static void print_shape(const char *what, const int64_t *s, uint64_t n) {
    printf("%s [", what);
    for (uint64_t i = 0; i < n; i++) printf("%s%lld", i ? "," : "", static_cast<long long>(s[i]));
    printf("]");
}

/* plain -> private (dstFormat) -> plain, checked against `ref` and `want_shape`. */
static void round_trip(aclrtStream stream, aclDataType dt, aclFormat plain_fmt, const Shape &shape,
                       int dst_format, int want_actual, const Shape &want_shape,
                       std::vector<uint8_t> (*ref)(const Shape &, const std::vector<uint8_t> &, size_t)) {
    size_t es = esize(dt);
    std::vector<uint8_t> host = pattern(numel(shape), es, static_cast<unsigned>(numel(shape)));
    void *src_dev = dev_alloc(host.size(), &host, 0);
    aclTensor *src = tensor(shape, dt, plain_fmt, shape, src_dev);

    int64_t *dst_shape = nullptr;
    uint64_t dst_dims = 0;
    int actual = -1;
    long live_before = g_live_arrays;
    CHECK_NN(aclnnNpuFormatCastCalculateSizeAndFormat(src, dst_format, -1, &dst_shape, &dst_dims, &actual));
    EXPECT(g_live_arrays == live_before + 1); /* dstShape came from this program's new[] */
    EXPECT(actual == want_actual);
    EXPECT(dst_dims == want_shape.size());
    for (uint64_t i = 0; i < dst_dims; i++) EXPECT(dst_shape[i] == want_shape[i]);
    Shape storage(dst_shape, dst_shape + dst_dims);
    delete[] dst_shape;
    EXPECT(g_live_arrays == live_before && g_foreign_deletes == 0);

    size_t dst_bytes = static_cast<size_t>(numel(storage)) * es;
    void *dst_dev = dev_alloc(dst_bytes, nullptr, 0xAB);
    aclTensor *dst = tensor(shape, dt, static_cast<aclFormat>(actual), storage, dst_dev);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    void *ws_dev = ws > 0 ? dev_alloc(ws, nullptr, 0) : nullptr;
    CHECK_NN(aclnnNpuFormatCast(ws_dev, ws, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    std::vector<uint8_t> got = dev_read(dst_dev, dst_bytes);
    std::vector<uint8_t> want = ref(shape, host, es);
    EXPECT(want.size() == got.size());
    for (size_t i = 0; i < got.size(); i++) {
        if (got[i] != want[i]) {
            fprintf(stderr, "FAIL %s forward: byte %zu is %u, expected %u (%s)\n", dt_name(dt), i, got[i],
                    want[i], want[i] == 0 ? "padding" : "data");
            exit(1);
        }
    }

    /* Inverse: the private tensor as the source. */
    int64_t *back_shape = nullptr;
    uint64_t back_dims = 0;
    int back_fmt = -1;
    CHECK_NN(aclnnNpuFormatCastCalculateSizeAndFormat(dst, plain_fmt == ACL_FORMAT_NCDHW ? ACL_FORMAT_NCDHW : ACL_FORMAT_ND,
                                                      -1, &back_shape, &back_dims, &back_fmt));
    EXPECT(back_fmt == (plain_fmt == ACL_FORMAT_NCDHW ? ACL_FORMAT_NCDHW : ACL_FORMAT_ND));
    EXPECT(back_dims == shape.size());
    for (uint64_t i = 0; i < back_dims; i++) EXPECT(back_shape[i] == shape[i]);
    delete[] back_shape;
    void *back_dev = dev_alloc(host.size(), nullptr, 0xAB);
    aclTensor *back = tensor(shape, dt, static_cast<aclFormat>(back_fmt), shape, back_dev);
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(dst, back, &ws, &ex));
    EXPECT(ws == 0);
    CHECK_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(dev_read(back_dev, host.size()) == host);

    printf("ok %-5s ", dt_name(dt));
    print_shape(plain_fmt == ACL_FORMAT_NCDHW ? "NCDHW" : "ND", shape.data(), shape.size());
    printf(" -> format %d ", actual);
    print_shape("", storage.data(), storage.size());
    printf(" -> back\n");
    CHECK_NN(aclDestroyTensor(src));
    CHECK_NN(aclDestroyTensor(dst));
    CHECK_NN(aclDestroyTensor(back));
    CHECK(aclrtFree(src_dev));
    CHECK(aclrtFree(dst_dev));
    CHECK(aclrtFree(back_dev));
    if (ws_dev) CHECK(aclrtFree(ws_dev));
}

static void nz(aclrtStream s, aclDataType dt, const Shape &shape) {
    round_trip(s, dt, ACL_FORMAT_ND, shape, ACL_FORMAT_FRACTAL_NZ, ACL_FORMAT_FRACTAL_NZ, nz_shape(shape, esize(dt)), ref_nz);
}
static void ndc1hwc0(aclrtStream s, aclDataType dt, const Shape &shape) {
    round_trip(s, dt, ACL_FORMAT_NCDHW, shape, ACL_FORMAT_NDC1HWC0, ACL_FORMAT_NDC1HWC0, ndc1hwc0_shape(shape, esize(dt)),
               ref_ndc1hwc0);
}
static void fz3d(aclrtStream s, aclDataType dt, const Shape &shape) {
    round_trip(s, dt, ACL_FORMAT_NCDHW, shape, ACL_FRACTAL_Z_3D, ACL_FRACTAL_Z_3D, fz3d_shape(shape, esize(dt)), ref_fz3d);
}

/* Fixed values: fp32 ND [2, 9] -> NZ with C0 = 8 is [2, 1, 16, 8]; element (r, c) = 100r + c
 * lands at (c / 8) * 128 + r * 8 + c % 8. Written out, so a transposed mapping cannot pass. */
static void fixed_nz_fp32(aclrtStream stream) {
    float host[18];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 9; c++) host[r * 9 + c] = static_cast<float>(100 * r + c);
    void *src_dev = nullptr, *dst_dev = nullptr;
    CHECK(aclrtMalloc(&src_dev, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(src_dev, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE));
    Shape shape{2, 9}, storage{2, 1, 16, 8};
    CHECK(aclrtMalloc(&dst_dev, 256 * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(dst_dev, 256 * 4, 0x7f, 256 * 4));
    aclTensor *src = tensor(shape, ACL_FLOAT, ACL_FORMAT_ND, shape, src_dev);
    aclTensor *dst = tensor(shape, ACL_FLOAT, ACL_FORMAT_FRACTAL_NZ, storage, dst_dev);
    uint64_t ws = 1;
    aclOpExecutor *ex = nullptr;
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    CHECK_NN(aclnnNpuFormatCast(nullptr, ws, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    float got[256];
    CHECK(aclrtMemcpy(got, sizeof(got), dst_dev, sizeof(got), ACL_MEMCPY_DEVICE_TO_HOST));
    float want[256] = {0};
    want[0] = 0;   want[1] = 1;   want[2] = 2;   want[3] = 3;
    want[4] = 4;   want[5] = 5;   want[6] = 6;   want[7] = 7;     /* row 0, c 0..7 */
    want[8] = 100; want[9] = 101; want[10] = 102; want[11] = 103;
    want[12] = 104; want[13] = 105; want[14] = 106; want[15] = 107; /* row 1, c 0..7 */
    want[128] = 8;                                                 /* row 0, c 8 */
    want[136] = 108;                                               /* row 1, c 8 */
    for (int i = 0; i < 256; i++) {
        if (got[i] != want[i]) {
            fprintf(stderr, "FAIL fixed fp32 NZ: element %d is %g, expected %g\n", i, static_cast<double>(got[i]),
                    static_cast<double>(want[i]));
            exit(1);
        }
    }
    printf("ok fixed fp32 ND [2,9] -> FRACTAL_NZ [2,1,16,8]\n");
    aclDestroyTensor(src);
    aclDestroyTensor(dst);
    CHECK(aclrtFree(src_dev));
    CHECK(aclrtFree(dst_dev));
}

/* A repeatable executor runs twice; aclSetInputTensorAddr points it at another source. */
static void repeatable(aclrtStream stream) {
    aclDataType dt = ACL_FLOAT16;
    Shape shape{20, 17};
    std::vector<uint8_t> a = pattern(numel(shape), 2, 1), b = pattern(numel(shape), 2, 2);
    void *a_dev = dev_alloc(a.size(), &a, 0), *b_dev = dev_alloc(b.size(), &b, 0);
    Shape storage = nz_shape(shape, 2);
    size_t dst_bytes = static_cast<size_t>(numel(storage)) * 2;
    void *dst_dev = dev_alloc(dst_bytes, nullptr, 0xAB);
    aclTensor *src = tensor(shape, dt, ACL_FORMAT_ND, shape, a_dev);
    aclTensor *dst = tensor(shape, dt, ACL_FORMAT_FRACTAL_NZ, storage, dst_dev);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    CHECK_NN(aclSetAclOpExecutorRepeatable(ex));
    CHECK_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(dev_read(dst_dev, dst_bytes) == ref_nz(shape, a, 2));
    CHECK_NN(aclSetInputTensorAddr(ex, 0, src, b_dev));
    void *raw = nullptr;
    CHECK_NN(aclGetRawTensorAddr(src, &raw));
    EXPECT(raw == b_dev);
    CHECK_NN(aclnnNpuFormatCast(nullptr, 0, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(dev_read(dst_dev, dst_bytes) == ref_nz(shape, b, 2));
    CHECK_NN(aclDestroyAclOpExecutor(ex));
    printf("ok repeatable executor: two runs, second with aclSetInputTensorAddr\n");
    aclDestroyTensor(src);
    aclDestroyTensor(dst);
    CHECK(aclrtFree(a_dev));
    CHECK(aclrtFree(b_dev));
    CHECK(aclrtFree(dst_dev));
}

/* aclnnTransMatmulWeight: an ND weight converted in place to FRACTAL_NZ (C0 16 for 2-byte
 * types, 32 for INT8), in a buffer of aclnnCalculateMatmulWeightSizeV2 elements. With
 * `transposed` the 2-D weight is a strided view (strides {1, K}) of its transpose. */
static void trans_weight(aclrtStream stream, aclDataType dt, const Shape &shape, bool transposed) {
    size_t es = esize(dt);
    int64_t c0 = dt == ACL_INT8 ? 32 : 16;
    aclIntArray *sa = aclCreateIntArray(shape.data(), shape.size());
    uint64_t elems = 0;
    CHECK_NN(aclnnCalculateMatmulWeightSizeV2(sa, dt, &elems));
    CHECK_NN(aclDestroyIntArray(sa));
    Shape nz = nz_shape_c0(shape, c0);
    EXPECT(static_cast<int64_t>(elems) == numel(nz));
    std::vector<uint8_t> host = pattern(numel(shape), es, 9);
    size_t bytes = static_cast<size_t>(elems) * es;
    void *w_dev = dev_alloc(bytes, nullptr, 0xAB);
    Shape strides = strides_of(shape);
    if (transposed) {
        /* Stored as the row-major [N, K] transpose; the view [K, N] has strides {1, K}. */
        int64_t K = shape[0], N = shape[1];
        std::vector<uint8_t> t(host.size());
        for (int64_t k = 0; k < K; k++)
            for (int64_t n = 0; n < N; n++) put(t, n * K + k, host, k * N + n, es);
        CHECK(aclrtMemcpy(w_dev, bytes, t.data(), t.size(), ACL_MEMCPY_HOST_TO_DEVICE));
        strides = Shape{1, K};
    } else {
        CHECK(aclrtMemcpy(w_dev, bytes, host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE));
    }
    Shape flat{numel(shape)};
    aclTensor *w = aclCreateTensor(shape.data(), shape.size(), dt, strides.data(), 0, ACL_FORMAT_ND, flat.data(), 1,
                                   w_dev);
    EXPECT(w != nullptr);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CHECK_NN(aclnnTransMatmulWeightGetWorkspaceSize(w, &ws, &ex));
    EXPECT(ws >= bytes);
    int64_t *dims = nullptr;
    uint64_t n = 0;
    CHECK_NN(aclGetStorageShape(w, &dims, &n));
    EXPECT(Shape(dims, dims + n) == nz);
    delete[] dims;
    void *ws_dev = dev_alloc(ws, nullptr, 0);
    CHECK_NN(aclnnTransMatmulWeight(ws_dev, ws, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(dev_read(w_dev, bytes) == ref_nz_c0(shape, host, es, c0));
    printf("ok TransMatmulWeight %s%s", dt_name(dt), transposed ? " (strided view)" : "");
    print_shape("", shape.data(), shape.size());
    print_shape(" -> FRACTAL_NZ", nz.data(), nz.size());
    printf(" workspace %llu\n", static_cast<unsigned long long>(ws));
    aclDestroyTensor(w);
    CHECK(aclrtFree(w_dev));
    CHECK(aclrtFree(ws_dev));
}

/* The acl_meta.h getters. */
static void getters() {
    Shape view{3, 4, 5}, storage{60};
    Shape st{20, 5, 1};
    int64_t fake = 0;
    aclTensor *t = aclCreateTensor(view.data(), 3, ACL_BF16, st.data(), 7, ACL_FORMAT_NCL, storage.data(), 1, &fake);
    EXPECT(t != nullptr);
    int64_t *dims = nullptr;
    uint64_t n = 0;
    CHECK_NN(aclGetViewShape(t, &dims, &n));
    EXPECT(n == 3 && dims[0] == 3 && dims[1] == 4 && dims[2] == 5);
    delete[] dims;
    CHECK_NN(aclGetStorageShape(t, &dims, &n));
    EXPECT(n == 1 && dims[0] == 60);
    delete[] dims;
    CHECK_NN(aclGetViewStrides(t, &dims, &n));
    EXPECT(n == 3 && dims[0] == 20 && dims[1] == 5 && dims[2] == 1);
    delete[] dims;
    int64_t off = 0;
    CHECK_NN(aclGetViewOffset(t, &off));
    EXPECT(off == 7);
    aclFormat f = ACL_FORMAT_ND;
    CHECK_NN(aclGetFormat(t, &f));
    EXPECT(f == ACL_FORMAT_NCL);
    aclDataType d = ACL_FLOAT;
    CHECK_NN(aclGetDataType(t, &d));
    EXPECT(d == ACL_BF16);
    EXPECT(g_foreign_deletes == 0);
    int64_t vals[3] = {1, 2, 3};
    aclIntArray *ia = aclCreateIntArray(vals, 3);
    uint64_t sz = 0;
    CHECK_NN(aclGetIntArraySize(ia, &sz));
    EXPECT(sz == 3);
    CHECK_NN(aclDestroyIntArray(ia));
    const aclTensor *list[1] = {t};
    aclTensorList *tl = aclCreateTensorList(list, 1);
    CHECK_NN(aclGetTensorListSize(tl, &sz));
    EXPECT(sz == 1);
    CHECK_NN(aclDestroyTensorList(tl)); /* destroys t too */
    CHECK_NN(aclDestroyTensor(nullptr));
    printf("ok acl_meta.h getters; arrays freed with delete[]\n");
}

/* Ascend 950: C0 from additionalDtype (fp32 weights for an fp16 matmul: FRACTAL_NZ_C0_16). */
static void a5_case(aclrtStream stream, aclDataType dt, int additional, const Shape &shape, int want_fmt,
                    int64_t c0) {
    size_t es = esize(dt);
    std::vector<uint8_t> host = pattern(numel(shape), es, 7);
    void *src_dev = dev_alloc(host.size(), &host, 0);
    aclTensor *src = tensor(shape, dt, ACL_FORMAT_ND, shape, src_dev);
    int64_t *dims = nullptr;
    uint64_t n = 0;
    int actual = -1;
    CHECK_NN(aclnnNpuFormatCastCalculateSizeAndFormat(src, ACL_FORMAT_FRACTAL_NZ, additional, &dims, &n, &actual));
    Shape storage(dims, dims + n);
    delete[] dims;
    EXPECT(actual == want_fmt);
    EXPECT(storage == nz_shape_c0(shape, c0));
    size_t bytes = static_cast<size_t>(numel(storage)) * es;
    void *dst_dev = dev_alloc(bytes, nullptr, 0xAB);
    aclTensor *dst = tensor(shape, dt, static_cast<aclFormat>(actual), storage, dst_dev);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    CHECK_NN(aclnnNpuFormatCast(nullptr, ws, ex, stream));
    CHECK(aclrtSynchronizeStream(stream));
    EXPECT(dev_read(dst_dev, bytes) == ref_nz_c0(shape, host, es, c0));
    printf("ok 950 %s additionalDtype %d -> format %d, C0 %lld\n", dt_name(dt), additional, actual,
           static_cast<long long>(c0));
    aclDestroyTensor(src);
    aclDestroyTensor(dst);
    CHECK(aclrtFree(src_dev));
    CHECK(aclrtFree(dst_dev));
}

static void a5(aclrtStream stream) {
    a5_case(stream, ACL_FLOAT, ACL_FLOAT16, Shape{40, 24}, ACL_FORMAT_FRACTAL_NZ_C0_16, 16);
    a5_case(stream, ACL_INT32, ACL_INT8, Shape{2, 17, 33}, ACL_FORMAT_FRACTAL_NZ_C0_32, 32);
    a5_case(stream, ACL_INT8, ACL_INT8, Shape{3, 40, 70}, ACL_FORMAT_FRACTAL_NZ, 32);
    a5_case(stream, ACL_FLOAT16, ACL_FLOAT16, Shape{18, 20}, ACL_FORMAT_FRACTAL_NZ, 16);
    int64_t fake = 0;
    Shape k1{1, 64};
    aclTensor *t = tensor(k1, ACL_FLOAT16, ACL_FORMAT_ND, k1, &fake);
    int64_t *dims = nullptr;
    uint64_t n = 0;
    int actual = 0;
    EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(t, ACL_FORMAT_FRACTAL_NZ, -1, &dims, &n, &actual),
              ACLNN_ERR_PARAM_INVALID, "additionalDtype -1 is not supported on Ascend950");
    EXPECT_NN(aclnnNpuFormatCastCalculateSizeAndFormat(t, ACL_FORMAT_FRACTAL_NZ, ACL_FLOAT16, &dims, &n, &actual),
              ACLNN_ERR_PARAM_INVALID, "K (the second-last dimension) = 1");
    aclDestroyTensor(t);
}

/* How many loaded objects are libnnopbase.so / libopapi.so: one (libopapi.so is a symlink
 * to libnnopbase.so, so a binary that needs both loads one object). */
static int nnopbase_copies() {
    int n = 0;
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t, void *data) -> int {
            const char *name = info->dlpi_name;
            if (name != nullptr && (strstr(name, "libnnopbase.so") || strstr(name, "libopapi.so")))
                ++*static_cast<int *>(data);
            return 0;
        },
        &n);
    return n;
}

int main(int argc, char **argv) {
    aclrtStream stream = nullptr;
    init_device(&stream);
    if (argc > 1 && strcmp(argv[1], "950") == 0) {
        a5(stream);
        printf("PASS\n");
        return 0;
    }
    CHECK_NN(aclnnInit(nullptr));
    if (nnopbase_copies() != 1) {
        fprintf(stderr, "FAIL libnnopbase.so/libopapi.so loaded %d times\n", nnopbase_copies());
        return 1;
    }
    getters();
    fixed_nz_fp32(stream);
    nz(stream, ACL_FLOAT16, Shape{3, 37, 45});
    nz(stream, ACL_FLOAT, Shape{33, 20});
    nz(stream, ACL_INT8, Shape{17, 70});
    nz(stream, ACL_BF16, Shape{2, 19, 33});
    nz(stream, ACL_INT32, Shape{5, 9});
    nz(stream, ACL_UINT8, Shape{2, 2, 3, 40});
    ndc1hwc0(stream, ACL_FLOAT16, Shape{2, 19, 3, 4, 5});
    ndc1hwc0(stream, ACL_FLOAT, Shape{1, 17, 2, 3, 3});
    ndc1hwc0(stream, ACL_INT8, Shape{2, 40, 1, 3, 2});
    ndc1hwc0(stream, ACL_BF16, Shape{1, 5, 2, 2, 3});
    fz3d(stream, ACL_FLOAT16, Shape{18, 19, 2, 3, 2});
    fz3d(stream, ACL_FLOAT, Shape{17, 9, 1, 2, 3});
    fz3d(stream, ACL_INT8, Shape{3, 33, 2, 2, 2});
    fz3d(stream, ACL_BF16, Shape{20, 3, 1, 1, 2});
    repeatable(stream);
    trans_weight(stream, ACL_FLOAT16, Shape{37, 45}, false);
    trans_weight(stream, ACL_BF16, Shape{2, 20, 33}, false);
    trans_weight(stream, ACL_INT8, Shape{3, 20, 70}, false);
    trans_weight(stream, ACL_FLOAT16, Shape{37, 45}, true);
    EXPECT(g_foreign_deletes == 0);
    CHECK_NN(aclnnFinalize());
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS\n");
    return 0;
}
