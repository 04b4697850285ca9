/* Overflow status fed by aclnn operators (issue 12): on Atlas A2/A3 an operator whose result
 * is ±inf or NaN sets the process-level overflow status that aclrtGetOverflowStatus reads
 * (runtime API reference: aclrtGetOverflowStatus, aclrtResetOverflowStatus). Here aclnnAdd
 * of FLT_MAX + FLT_MAX on a small tensor (computed by one thread) and on a large one (split
 * across threads), each after a reset; finite sums leave the status 0. Then aclnnMatmul of
 * 512 x 512 matrices whose last row overflows (the product is computed on several threads,
 * and the row may be any thread's part). */
#include <float.h>
#include <stdint.h>
#include <string.h>
#include <vector>
#include "common.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_matmul.h"

static uint32_t status_of(void *out, aclrtStream s) {
    uint32_t w = 0xeeeeeeee;
    CHECK(aclrtGetOverflowStatus(out, 64, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(&w, 4, out, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    return w;
}

/* out = a + b over n floats all equal to v; returns the first element of the result. */
static float add(aclrtStream s, int64_t n, float v) {
    std::vector<float> host((size_t)n, v);
    size_t bytes = (size_t)n * sizeof(float);
    void *da = NULL, *db = NULL, *dc = NULL;
    CHECK(aclrtMalloc(&da, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dc, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(da, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t shape[1] = {n}, strides[1] = {1};
    aclTensor *a = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, da);
    aclTensor *b = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, db);
    aclTensor *c = aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, dc);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    EXPECT(a && b && c && alpha);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnAddGetWorkspaceSize(a, b, alpha, c, &ws, &ex));
    void *w = NULL;
    if (ws) CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclnnAdd(w, ws, ex, s));
    CHECK(aclrtSynchronizeStream(s));
    float last = 0;
    CHECK(aclrtMemcpy(&last, 4, (char *)dc + bytes - 4, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    aclDestroyTensor(c);
    aclDestroyScalar(alpha);
    if (w) aclrtFree(w);
    aclrtFree(da);
    aclrtFree(db);
    aclrtFree(dc);
    return last;
}

/* c = a @ b for n x n float matrices: a all 1 but its last row `big`, b all 1. Returns c's
 * last element. */
static float matmul_last(aclrtStream s, int64_t n, float big) {
    std::vector<float> ha((size_t)(n * n), 1.0f), hb((size_t)(n * n), 1.0f);
    for (int64_t j = 0; j < n; j++) ha[(size_t)((n - 1) * n + j)] = big;
    size_t bytes = (size_t)(n * n) * sizeof(float);
    void *da = NULL, *db = NULL, *dc = NULL;
    CHECK(aclrtMalloc(&da, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dc, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(da, bytes, ha.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, bytes, hb.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t shape[2] = {n, n}, strides[2] = {n, 1};
    aclTensor *a = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, da);
    aclTensor *b = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, db);
    aclTensor *c = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, dc);
    EXPECT(a && b && c);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnMatmulGetWorkspaceSize(a, b, c, 1, &ws, &ex));
    void *w = NULL;
    if (ws) CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclnnMatmul(w, ws, ex, s));
    CHECK(aclrtSynchronizeStream(s));
    float last = 0;
    CHECK(aclrtMemcpy(&last, 4, (char *)dc + bytes - 4, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    aclDestroyTensor(c);
    if (w) aclrtFree(w);
    aclrtFree(da);
    aclrtFree(db);
    aclrtFree(dc);
    return last;
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    void *out = NULL;
    CHECK(aclrtMalloc(&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));

    const int64_t sizes[2] = {256, 1 << 20};
    for (int i = 0; i < 2; i++) {
        CHECK(aclrtResetOverflowStatus(s));
        EXPECT(status_of(out, s) == 0);
        EXPECT(add(s, sizes[i], 1.5f) == 3.0f);
        EXPECT(status_of(out, s) == 0); /* finite: no overflow */
        float r = add(s, sizes[i], FLT_MAX);
        EXPECT(r > FLT_MAX); /* +inf, in the last element (a helper thread's part when split) */
        EXPECT(status_of(out, s) == 1);
        printf("%lld elements: overflow status set by aclnnAdd\n", (long long)sizes[i]);
    }
    CHECK(aclrtResetOverflowStatus(s));
    EXPECT(status_of(out, s) == 0);
    EXPECT(matmul_last(s, 512, 2.0f) == 1024.0f);
    EXPECT(status_of(out, s) == 0);
    EXPECT(matmul_last(s, 512, 1e37f) > FLT_MAX); /* 512 x 1e37 overflows float */
    EXPECT(status_of(out, s) == 1);
    printf("512 x 512: overflow status set by aclnnMatmul\n");
    CHECK(aclrtResetOverflowStatus(s));
    EXPECT(status_of(out, s) == 0);

    CHECK(aclrtFree(out));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_overflow_aclnn passed\n");
    return 0;
}
