/* aclrtMemcpyBatch / aclrtMemcpyBatchAsync: data, attribute checks and failIndex. */
#include "mem_check.h"
#include <stdint.h>

static aclrtMemcpyBatchAttr attr(int dtype, uint32_t did, int stype, uint32_t sid)
{
    aclrtMemcpyBatchAttr a;
    memset(&a, 0, sizeof(a));
    a.dstLoc.type = (aclrtMemLocationType)dtype;
    a.dstLoc.id = did;
    a.srcLoc.type = (aclrtMemLocationType)stype;
    a.srcLoc.id = sid;
    return a;
}

int main(void)
{
    enum { N = 3001 };
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(1));
    void *d1 = NULL;
    CHECK_OK(aclrtMalloc(&d1, N, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtSetDevice(0));
    void *d0 = NULL;
    CHECK_OK(aclrtMalloc(&d0, N, ACL_MEM_MALLOC_HUGE_FIRST));
    static unsigned char h0[N], h1[N], o0[N], o1[N];
    mc_fill(h0, N, 1);
    mc_fill(h1, N, 2);
    const int H = ACL_MEM_LOCATION_TYPE_HOST, D = ACL_MEM_LOCATION_TYPE_DEVICE;

    /* Upload to two devices (two attributes), then download (one attribute). */
    void *dsts[2] = {d0, d1}, *srcs[2] = {h0, h1};
    size_t maxs[2] = {N, N}, sizes[2] = {N, N - 1};
    aclrtMemcpyBatchAttr up[2] = {attr(D, 0, H, 0), attr(D, 1, H, 0)};
    size_t upIdx[2] = {0, 1};
    size_t fail = 7;
    CHECK_OK(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, up, upIdx, 2, &fail));
    void *dsts2[2] = {o0, o1}, *srcs2[2] = {d0, d1};
    aclrtMemcpyBatchAttr down[2] = {attr(H, 0, D, 0), attr(H, 0, D, 1)};
    memset(o0, 0, N);
    memset(o1, 0, N);
    CHECK_OK(aclrtMemcpyBatch(dsts2, maxs, srcs2, sizes, 2, down, upIdx, 2, &fail));
    CHECK(mc_verify(o0, N, 1) < 0);
    CHECK(mc_verify(o1, N - 1, 2) < 0 && o1[N - 1] == 0);

    /* Async on a stream: queued with ACL host memory, completed at once with pageable. */
    aclrtStream s;
    CHECK_OK(aclrtCreateStream(&s));
    size_t one = 0;
    aclrtMemcpyBatchAttr up0 = attr(D, 0, H, 0), down0 = attr(H, 0, D, 0);
    unsigned char *ph = NULL, *po = NULL;
    CHECK_OK(aclrtMallocHost((void **)&ph, N));
    CHECK_OK(aclrtMallocHost((void **)&po, N));
    mc_fill(ph, N, 3);
    memset(po, 0, N);
    void *pdst[1] = {d0}, *psrc[1] = {ph}, *pdst2[1] = {po}, *psrc2[1] = {d0};
    CHECK_OK(aclrtMemcpyBatchAsync(pdst, maxs, psrc, sizes, 1, &up0, &one, 1, &fail, s));
    CHECK_OK(aclrtMemcpyBatchAsync(pdst2, maxs, psrc2, sizes, 1, &down0, &one, 1, &fail, s));
    CHECK_OK(aclrtSynchronizeStream(s));
    CHECK(mc_verify(po, N, 3) < 0);
    mc_fill(h0, N, 4);
    CHECK_OK(aclrtMemcpyBatchAsync(dsts, maxs, srcs, sizes, 1, &up0, &one, 1, &fail, s));
    CHECK_OK(aclrtMemcpyBatchAsync(dsts2, maxs, srcs2, sizes, 1, &down0, &one, 1, &fail, s));
    CHECK(mc_verify(o0, N, 4) < 0); /* pageable: done before returning */
    CHECK_OK(aclrtFreeHost(ph));
    CHECK_OK(aclrtFreeHost(po));

    /* Bad input: failIndex names the copy, or SIZE_MAX when no single copy is at fault. */
    aclrtMemcpyBatchAttr wrongDev[2] = {attr(D, 0, H, 0), attr(D, 0, H, 0)};
    CHECK_ERR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, wrongDev, upIdx, 2, &fail), ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatch", "copy 1", "attrs[1].dstLoc", "device 1");
    CHECK(fail == 1);
    void *dd[1] = {d0}, *ds[1] = {d1};
    CHECK_ERR(aclrtMemcpyBatch(dd, maxs, ds, sizes, 1, up, upIdx, 1, &fail), ACL_ERROR_INVALID_PARAM, "copy 0", "host-to-device and device-to-host");
    CHECK(fail == 0);
    size_t badIdx[2] = {1, 1};
    CHECK_ERR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, up, badIdx, 2, &fail), ACL_ERROR_INVALID_PARAM, "attrsIndexes[0]");
    CHECK(fail == SIZE_MAX);
    size_t small[2] = {N, 10};
    CHECK_ERR(aclrtMemcpyBatch(dsts, small, srcs, sizes, 2, up, upIdx, 2, &fail), ACL_ERROR_INVALID_PARAM, "copy 1", "destMaxs[1]");
    CHECK(fail == 1);
    size_t big[2] = {N, 100000};
    size_t bigMax[2] = {N, 100000};
    CHECK_ERR(aclrtMemcpyBatch(dsts, bigMax, srcs, big, 2, up, upIdx, 2, &fail), ACL_ERROR_INVALID_PARAM, "copy 1", "runs past the end");
    CHECK(fail == 1);
    CHECK_ERR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 0, up, upIdx, 1, &fail), ACL_ERROR_INVALID_PARAM, "numBatches is 0");
    CHECK_ERR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, up, upIdx, 3, &fail), ACL_ERROR_INVALID_PARAM, "numAttrs 3");

    CHECK_OK(aclrtDestroyStream(s));
    CHECK_OK(aclrtFree(d0));
    CHECK_OK(aclrtFree(d1));
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclrtResetDevice(1));
    CHECK_OK(aclFinalize());
    printf("batch ok\n");
    return 0;
}
