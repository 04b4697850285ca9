/* Throughput of aclnnNpuFormatCast against a plain device-to-device aclrtMemcpyAsync of the
 * same size, in the same run, timed with events on one stream (median of REPS runs).
 *   aclnn_bench [MiB=64] [REPS=5]
 * Cases: ND -> FRACTAL_NZ fp16 [rows, 1000] (W not a multiple of C0: padded), and
 * NCDHW -> NDC1HWC0 fp16 [4, 30, 2, H, 64]. Prints one line per case with GB/s and the
 * ratio to the copy. */
#include <algorithm>
#include <cstdlib>
#include "aclnn_common.h"

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static float time_copy(aclrtStream s, void *dst, const void *src, size_t bytes, int reps) {
    aclrtEvent a, b;
    CHECK(aclrtCreateEvent(&a));
    CHECK(aclrtCreateEvent(&b));
    std::vector<float> ms;
    for (int i = 0; i < reps; i++) {
        CHECK(aclrtRecordEvent(a, s));
        CHECK(aclrtMemcpyAsync(dst, bytes, src, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
        CHECK(aclrtRecordEvent(b, s));
        CHECK(aclrtSynchronizeEvent(b));
        float t = 0;
        CHECK(aclrtEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    CHECK(aclrtDestroyEvent(a));
    CHECK(aclrtDestroyEvent(b));
    return median(ms);
}

static void bench(aclrtStream s, const char *name, aclFormat plain_fmt, const Shape &shape, int dst_format,
                  int reps) {
    size_t es = 2;
    size_t bytes = static_cast<size_t>(numel(shape)) * es;
    void *src_dev = dev_alloc(bytes, nullptr, 0x11);
    aclTensor *src = tensor(shape, ACL_FLOAT16, plain_fmt, shape, src_dev);
    int64_t *dims = nullptr;
    uint64_t n = 0;
    int actual = 0;
    CHECK_NN(aclnnNpuFormatCastCalculateSizeAndFormat(src, dst_format, -1, &dims, &n, &actual));
    Shape storage(dims, dims + n);
    delete[] dims;
    size_t dst_bytes = static_cast<size_t>(numel(storage)) * es;
    void *dst_dev = dev_alloc(dst_bytes, nullptr, 0);
    void *copy_dev = dev_alloc(bytes, nullptr, 0);
    aclTensor *dst = tensor(shape, ACL_FLOAT16, static_cast<aclFormat>(actual), storage, dst_dev);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CHECK_NN(aclnnNpuFormatCastGetWorkspaceSize(src, dst, &ws, &ex));
    CHECK_NN(aclSetAclOpExecutorRepeatable(ex));
    aclrtEvent a, b;
    CHECK(aclrtCreateEvent(&a));
    CHECK(aclrtCreateEvent(&b));
    /* Warm up both (first touch of the destination pages). */
    CHECK_NN(aclnnNpuFormatCast(nullptr, 0, ex, s));
    float copy_ms = time_copy(s, copy_dev, src_dev, bytes, 1);
    std::vector<float> ms;
    for (int i = 0; i < reps; i++) {
        CHECK(aclrtRecordEvent(a, s));
        CHECK_NN(aclnnNpuFormatCast(nullptr, 0, ex, s));
        CHECK(aclrtRecordEvent(b, s));
        CHECK(aclrtSynchronizeEvent(b));
        float t = 0;
        CHECK(aclrtEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    float cast_ms = median(ms);
    copy_ms = time_copy(s, copy_dev, src_dev, bytes, reps);
    double gb = static_cast<double>(bytes) / 1e9;
    printf("%-22s %8.1f MiB  cast %8.3f ms %7.2f GB/s   memcpy %8.3f ms %7.2f GB/s   ratio %.2f\n", name,
           static_cast<double>(bytes) / (1 << 20), static_cast<double>(cast_ms), gb / (cast_ms / 1e3),
           static_cast<double>(copy_ms), gb / (copy_ms / 1e3), static_cast<double>(copy_ms / cast_ms));
    CHECK_NN(aclDestroyAclOpExecutor(ex));
    CHECK(aclrtDestroyEvent(a));
    CHECK(aclrtDestroyEvent(b));
    aclDestroyTensor(src);
    aclDestroyTensor(dst);
    CHECK(aclrtFree(src_dev));
    CHECK(aclrtFree(dst_dev));
    CHECK(aclrtFree(copy_dev));
}

int main(int argc, char **argv) {
    double mib = argc > 1 ? atof(argv[1]) : 64.0;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    aclrtStream s = nullptr;
    init_device(&s);
    int64_t elems = static_cast<int64_t>(mib * (1 << 20) / 2);
    bench(s, "ND->FRACTAL_NZ fp16", ACL_FORMAT_ND, Shape{std::max<int64_t>(1, elems / 1000), 1000},
          ACL_FORMAT_FRACTAL_NZ, reps);
    bench(s, "NCDHW->NDC1HWC0 fp16", ACL_FORMAT_NCDHW,
          Shape{4, 30, 2, std::max<int64_t>(1, elems / (4 * 30 * 2 * 64)), 64}, ACL_FORMAT_NDC1HWC0, reps);
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS\n");
    return 0;
}
