/* Asynchronous memory operations (issue 12, group 5), written from CANN's API reference
 * (runtime/docs/api_docs): aclrtValueWrite/aclrtValueWait between two streams,
 * aclrtReduceAsync (SUM/MAX/MIN, types, EQUAL not supported), aclrtRandomNumAsync
 * (uniform, normal, dropout bitmask; same seed and counter give the same numbers),
 * aclrtMemcpyAsyncWithCondition, aclrtMemcpyAsyncWithOffset (pointers read from device
 * memory), memory-copy descriptors, cache prefetch (aclrtCmo*), aclrtFreeWithDevSync,
 * aclrtGetMemUsageInfo, aclrtMallocForTaskScheduler. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <unistd.h>
#include "common.h"

#define N 1024

static uint16_t f16(float f) {
    /* Exact for the small integers used here. */
    return aclFloatToFloat16(f);
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s1 = NULL, s2 = NULL;
    CHECK(aclrtCreateStream(&s1));
    CHECK(aclrtCreateStream(&s2));

    /* Value wait / write: s2 waits for a value s1 writes later. */
    void *flag = NULL, *data = NULL;
    CHECK(aclrtMalloc(&flag, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&data, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(flag, 64, 0, 64));
    CHECK(aclrtMemset(data, 64, 0, 64));
    CHECK(aclrtValueWait(flag, 3, ACL_STREAM_WAIT_VALUE_GEQ, s2));
    CHECK(aclrtValueWrite((char *)data + 8, 42, 0, s2)); /* runs only after the wait */
    usleep(50 * 1000);
    uint64_t got = 1;
    CHECK(aclrtMemcpy(&got, 8, (char *)data + 8, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(got == 0); /* still waiting */
    CHECK(aclrtValueWrite(flag, 2, 0, s1));
    CHECK(aclrtSynchronizeStream(s1));
    usleep(20 * 1000);
    CHECK(aclrtMemcpy(&got, 8, (char *)data + 8, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(got == 0); /* 2 < 3 */
    CHECK(aclrtValueWrite(flag, 3, 0, s1));
    CHECK(aclrtSynchronizeStream(s2));
    CHECK(aclrtMemcpy(&got, 8, (char *)data + 8, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(got == 42);
    EXPECT_CODE(aclrtValueWrite(flag, 1, 1, s1), ACL_ERROR_RT_PARAM_INVALID, "flag");
    EXPECT_CODE(aclrtValueWait(flag, 1, 4, s1), ACL_ERROR_RT_PARAM_INVALID, "flag");
    uint64_t host_word = 0;
    EXPECT_CODE(aclrtValueWrite(&host_word, 1, 0, s1), ACL_ERROR_RT_PARAM_INVALID, "device memory");
    EXPECT_CODE(aclrtValueWrite(NULL, 1, 0, s1), ACL_ERROR_INVALID_PARAM, NULL);

    /* Reduce: dst op= src. */
    float ha[N], hb[N], hr[N];
    for (int i = 0; i < N; i++) { ha[i] = (float)i; hb[i] = (float)(N - i); }
    void *da = NULL, *db = NULL;
    CHECK(aclrtMalloc(&da, sizeof ha, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, sizeof hb, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(da, sizeof ha, ha, sizeof ha, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, sizeof hb, hb, sizeof hb, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtReduceAsync(da, db, sizeof ha, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(hr, sizeof hr, da, sizeof hr, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < N; i++) EXPECT(hr[i] == (float)N);
    CHECK(aclrtMemcpy(da, sizeof ha, ha, sizeof ha, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtReduceAsync(da, db, sizeof ha, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX, ACL_FLOAT, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(hr, sizeof hr, da, sizeof hr, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < N; i++) EXPECT(hr[i] == fmaxf(ha[i], hb[i]));
    uint16_t h16[4] = {f16(1), f16(2), f16(3), f16(4)}, g16[4] = {f16(4), f16(3), f16(2), f16(1)};
    CHECK(aclrtMemcpy(da, 8, h16, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, 8, g16, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtReduceAsync(da, db, 8, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_FLOAT16, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(h16, 8, da, 8, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(aclFloat16ToFloat(h16[0]) == 1 && aclFloat16ToFloat(h16[1]) == 2 &&
           aclFloat16ToFloat(h16[2]) == 2 && aclFloat16ToFloat(h16[3]) == 1);
    EXPECT_CODE(aclrtReduceAsync(da, db, 8, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL, ACL_FLOAT, s1, NULL),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "EQUAL");
    EXPECT_CODE(aclrtReduceAsync(da, db, 8, (aclrtReduceKind)9, ACL_FLOAT, s1, NULL), ACL_ERROR_RT_PARAM_INVALID, "kind");
    EXPECT_CODE(aclrtReduceAsync(da, db, 8, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_DOUBLE, s1, NULL),
                ACL_ERROR_INVALID_PARAM, "type");
    EXPECT_CODE(aclrtReduceAsync(da, db, 0, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, s1, NULL),
                ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtReduceAsync(da, db, 8, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, s1, (void *)1),
                ACL_ERROR_INVALID_PARAM, "reserve");

    /* Random numbers. */
    void *res = NULL, *counter = NULL;
    CHECK(aclrtMalloc(&res, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&counter, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(counter, 16, 0, 16));
    aclrtRandomNumTaskInfo ti;
    memset(&ti, 0, sizeof ti);
    ti.dataType = ACL_FLOAT;
    ti.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
    float lo = -1.0f, hi = 3.0f;
    ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.isAddr = 0;
    memcpy(ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.valueOrAddr, &lo, 4);
    ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min.size = 4;
    memcpy(ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.valueOrAddr, &hi, 4);
    ti.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max.size = 4;
    ti.randomResultAddr = res;
    ti.randomCounterAddr = counter;
    uint64_t seed = 1234, num = N;
    memcpy(ti.randomSeed.valueOrAddr, &seed, 8);
    ti.randomSeed.size = 8;
    memcpy(ti.randomNum.valueOrAddr, &num, 8);
    ti.randomNum.size = 8;
    CHECK(aclrtRandomNumAsync(&ti, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));
    float r1[N], r2[N];
    CHECK(aclrtMemcpy(r1, sizeof r1, res, sizeof r1, ACL_MEMCPY_DEVICE_TO_HOST));
    double mean = 0;
    for (int i = 0; i < N; i++) { EXPECT(r1[i] >= lo && r1[i] < hi); mean += r1[i]; }
    mean /= N;
    EXPECT(fabs(mean - 1.0) < 0.15);
    CHECK(aclrtRandomNumAsync(&ti, s1, NULL)); /* same seed and counter: same numbers */
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(r2, sizeof r2, res, sizeof r2, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(r1, r2, sizeof r1) == 0);
    uint32_t ctr[4] = {7, 0, 0, 0};
    CHECK(aclrtMemcpy(counter, 16, ctr, 16, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtRandomNumAsync(&ti, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(r2, sizeof r2, res, sizeof r2, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(r1, r2, sizeof r1) != 0);
    /* Normal distribution. */
    ti.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS;
    float mu = 5.0f, sd = 0.5f;
    memcpy(ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean.valueOrAddr, &mu, 4);
    memcpy(ti.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev.valueOrAddr, &sd, 4);
    CHECK(aclrtRandomNumAsync(&ti, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(r1, sizeof r1, res, sizeof r1, ACL_MEMCPY_DEVICE_TO_HOST));
    mean = 0;
    for (int i = 0; i < N; i++) mean += r1[i];
    mean /= N;
    EXPECT(fabs(mean - 5.0) < 0.1);
    /* Dropout bitmask: about 3/4 of the bits kept. */
    ti.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK;
    float ratio = 0.25f;
    memset(&ti.randomNumFuncParaInfo.paramInfo, 0, sizeof ti.randomNumFuncParaInfo.paramInfo);
    memcpy(ti.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation.valueOrAddr, &ratio, 4);
    ti.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation.size = 4;
    CHECK(aclrtRandomNumAsync(&ti, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));
    unsigned char bits[N / 8];
    CHECK(aclrtMemcpy(bits, sizeof bits, res, sizeof bits, ACL_MEMCPY_DEVICE_TO_HOST));
    int kept = 0;
    for (int i = 0; i < N / 8; i++) kept += __builtin_popcount(bits[i]);
    EXPECT(kept > N * 0.65 && kept < N * 0.85);
    /* Checks: integers are not a dropout type; a parameter size larger than the type. */
    ti.dataType = ACL_INT32;
    EXPECT_CODE(aclrtRandomNumAsync(&ti, s1, NULL), ACL_ERROR_RT_PARAM_INVALID, NULL);
    ti.dataType = ACL_DOUBLE;
    EXPECT_CODE(aclrtRandomNumAsync(&ti, s1, NULL), ACL_ERROR_INVALID_PARAM, "dataType");
    ti.dataType = ACL_FLOAT16;
    EXPECT_CODE(aclrtRandomNumAsync(&ti, s1, NULL), ACL_ERROR_RT_PARAM_INVALID, "size");

    /* Copies with a condition (64-byte aligned), with offsets, with descriptors. */
    char hostbuf[256] __attribute__((aligned(64)));
    for (int i = 0; i < 256; i++) hostbuf[i] = (char)i;
    CHECK(aclrtMemcpyAsyncWithCondition(da, 256, hostbuf, 256, ACL_MEMCPY_HOST_TO_DEVICE, s1));
    CHECK(aclrtSynchronizeStream(s1));
    char back[256] __attribute__((aligned(64)));
    CHECK(aclrtMemcpy(back, 256, da, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(back, hostbuf, 256) == 0);
    EXPECT_CODE(aclrtMemcpyAsyncWithCondition(back, 8, hostbuf, 8, ACL_MEMCPY_HOST_TO_HOST, s1),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL);
    EXPECT_CODE(aclrtMemcpyAsyncWithCondition((char *)da + 8, 8, db, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s1),
                ACL_ERROR_RT_PARAM_INVALID, "64-byte");
    void *ptrs = NULL;
    CHECK(aclrtMalloc(&ptrs, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    void *pv[2] = {db, da}; /* dst base, src base */
    CHECK(aclrtMemcpy(ptrs, 16, pv, 16, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpyAsyncWithOffset((void **)ptrs, 128, 16, (const void **)((char *)ptrs + 8), 32, 100, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s1));
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(back, 32, (char *)db + 16, 32, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(back, hostbuf + 100, 32) == 0);
    EXPECT_CODE(aclrtMemcpyAsyncWithOffset((void **)ptrs, 128, 0, (const void **)ptrs, 8, 0, ACL_MEMCPY_DEVICE_TO_DEVICE, s1),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL);
    size_t dsz = 0;
    CHECK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &dsz));
    EXPECT(dsz > 0);
    void *desc = NULL;
    CHECK(aclrtMalloc(&desc, dsz, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, da, (char *)db + 64, 48, NULL));
    CHECK(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, s1));
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtMemcpy(back, 48, (char *)db + 64, 48, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(back, hostbuf, 48) == 0);
    EXPECT_CODE(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, da, db, 8, (void *)1), ACL_ERROR_INVALID_PARAM, "config");
    EXPECT_CODE(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM, "stream");

    /* Cache prefetch. */
    CHECK(aclrtCmoAsync(da, 256, ACL_RT_CMO_TYPE_PREFETCH, s1));
    EXPECT_CODE(aclrtCmoAsync(da, 256, ACL_RT_CMO_TYPE_WRITEBACK, s1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "PREFETCH");
    size_t csz = 0;
    CHECK(aclrtCmoGetDescSize(&csz));
    void *cdesc = NULL;
    CHECK(aclrtMalloc(&cdesc, csz, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtCmoSetDesc(cdesc, da, 256));
    CHECK(aclrtCmoAsyncWithDesc(cdesc, ACL_RT_CMO_TYPE_PREFETCH, s1, NULL));
    CHECK(aclrtSynchronizeStream(s1));

    /* Memory usage, free with device sync, memory for the task scheduler. */
    aclrtMemUsageInfo info[4];
    size_t outn = 0;
    CHECK(aclrtGetMemUsageInfo(0, info, 4, &outn));
    EXPECT(outn == 1 && info[0].curMemSize > 0 && info[0].memPeakSize >= info[0].curMemSize);
    uint64_t before = info[0].curMemSize;
    void *big = NULL;
    CHECK(aclrtMallocForTaskScheduler(&big, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST, NULL));
    CHECK(aclrtGetMemUsageInfo(0, info, 4, &outn));
    EXPECT(info[0].curMemSize >= before + (1 << 20));
    CHECK(aclrtMemsetAsync(big, 1 << 20, 1, 1 << 20, s1));
    CHECK(aclrtFreeWithDevSync(big));
    CHECK(aclrtGetMemUsageInfo(0, info, 4, &outn));
    EXPECT(info[0].curMemSize == before && info[0].memPeakSize >= before + (1 << 20));
    EXPECT_CODE(aclrtGetMemUsageInfo(0, info, 0, &outn), ACL_ERROR_RT_PARAM_INVALID, NULL);

    CHECK(aclrtFree(flag));
    CHECK(aclrtFree(data));
    CHECK(aclrtFree(da));
    CHECK(aclrtFree(db));
    CHECK(aclrtFree(res));
    CHECK(aclrtFree(counter));
    CHECK(aclrtFree(ptrs));
    CHECK(aclrtFree(desc));
    CHECK(aclrtFree(cdesc));
    CHECK(aclrtDestroyStream(s1));
    CHECK(aclrtDestroyStream(s2));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_mem_async passed\n");
    return 0;
}
