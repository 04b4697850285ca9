/* Overflow status (issue 12), written from CANN's API reference (runtime/docs/api_docs:
 * aclrtCtxGetFloatOverflowAddr, aclrtGetOverflowStatus, aclrtResetOverflowStatus,
 * aclrtSetStreamOverflowSwitch, aclrtGetStreamOverflowSwitch): the status is 64 bytes of
 * device memory written by a stream task, process-level on Atlas A2/A3, set by a task
 * whose result overflows (here a float SUM reduction of FLT_MAX + FLT_MAX), cleared by
 * the reset task; the switch is 0/1, set in saturation mode only, and a stream with the
 * switch off records no overflow. */
#include <float.h>
#include <stdint.h>
#include <string.h>
#include "common.h"

#define N 256

/* Overflow status as read back on the host: the first word. */
static uint32_t status_of(void *out, aclrtStream s) {
    uint8_t block[64];
    memset(block, 0xee, sizeof block);
    CHECK(aclrtGetOverflowStatus(out, 64, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(block, 64, out, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 4; i < 64; i++) EXPECT(block[i] == 0);
    uint32_t w;
    memcpy(&w, block, 4);
    return w;
}

static void overflow_on(aclrtStream s, void *da, void *db) {
    CHECK(aclrtReduceAsync(da, db, N * sizeof(float), ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, s, NULL));
    CHECK(aclrtSynchronizeStream(s));
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL, s2 = NULL;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateStream(&s2));

    void *addr = NULL, *addr2 = NULL;
    CHECK(aclrtCtxGetFloatOverflowAddr(&addr));
    EXPECT(addr != NULL);
    CHECK(aclrtCtxGetFloatOverflowAddr(&addr2));
    EXPECT(addr == addr2); /* one per context */
    EXPECT_CODE(aclrtCtxGetFloatOverflowAddr(NULL), ACL_ERROR_RT_PARAM_INVALID, NULL);

    void *out = NULL;
    CHECK(aclrtMalloc(&out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtResetOverflowStatus(s));
    EXPECT(status_of(out, s) == 0);

    float big[N];
    for (int i = 0; i < N; i++) big[i] = FLT_MAX;
    void *da = NULL, *db = NULL;
    CHECK(aclrtMalloc(&da, sizeof big, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, sizeof big, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(da, sizeof big, big, sizeof big, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, sizeof big, big, sizeof big, ACL_MEMCPY_HOST_TO_DEVICE));

    /* An overflow on s2 is seen through s (process-level status). */
    overflow_on(s2, da, db);
    EXPECT(status_of(out, s) != 0);
    /* The context's overflow area holds the same block. */
    uint32_t w = 0;
    CHECK(aclrtMemcpy(&w, 4, addr, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(w != 0);
    CHECK(aclrtResetOverflowStatus(s));
    EXPECT(status_of(out, s) == 0);
    CHECK(aclrtMemcpy(&w, 4, addr, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(w == 0);

    /* The float-overflow and NPU variants. */
    CHECK(aclrtMemcpy(da, sizeof big, big, sizeof big, ACL_MEMCPY_HOST_TO_DEVICE));
    overflow_on(s, da, db);
    uint8_t block[64];
    CHECK(aclrtGetFloatOverflowStatus(out, 64, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(block, 64, out, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(block[0] != 0);
    CHECK(aclrtNpuClearFloatOverFlowStatus(0, s));
    CHECK(aclrtNpuGetFloatOverFlowStatus(out, 64, 0, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(block, 64, out, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(block[0] == 0);
    CHECK(aclrtResetFloatOverflowStatus(NULL)); /* NULL: the default stream */
    CHECK(aclrtSynchronizeStream(NULL));

    /* Parameters: the status block is 64 bytes. */
    EXPECT_CODE(aclrtGetOverflowStatus(out, 32, s), ACL_ERROR_RT_PARAM_INVALID, "64");
    EXPECT_CODE(aclrtGetOverflowStatus(NULL, 64, s), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtGetFloatOverflowStatus(NULL, 64, s), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtNpuGetFloatOverFlowStatus(out, 128, 0, s), ACL_ERROR_RT_PARAM_INVALID, "64");
    EXPECT_CODE(aclrtNpuClearFloatOverFlowStatus(0, NULL), ACL_ERROR_RT_PARAM_INVALID, NULL);

    /* The switch: 0 until set; saturation mode only. */
    uint32_t flag = 7;
    CHECK(aclrtGetStreamOverflowSwitch(s, &flag));
    EXPECT(flag == 0);
    EXPECT_CODE(aclrtGetStreamOverflowSwitch(s, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtSetStreamOverflowSwitch(s, 2), ACL_ERROR_INVALID_PARAM, "flag");
    CHECK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
    EXPECT_CODE(aclrtSetStreamOverflowSwitch(s, 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "saturation");
    CHECK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
    CHECK(aclrtSetStreamOverflowSwitch(s, 1));
    CHECK(aclrtGetStreamOverflowSwitch(s, &flag));
    EXPECT(flag == 1);
    aclrtStreamAttrValue av;
    memset(&av, 0, sizeof av);
    CHECK(aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &av));
    EXPECT(av.overflowSwitch == 1);

    /* Off: the stream's overflows are not recorded; on again: they are. */
    av.overflowSwitch = 0;
    CHECK(aclrtSetStreamAttribute(s2, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &av));
    CHECK(aclrtGetStreamOverflowSwitch(s2, &flag));
    EXPECT(flag == 0);
    CHECK(aclrtMemcpy(da, sizeof big, big, sizeof big, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtResetOverflowStatus(s));
    overflow_on(s2, da, db);
    EXPECT(status_of(out, s) == 0);
    CHECK(aclrtSetStreamOverflowSwitch(s2, 1));
    CHECK(aclrtMemcpy(da, sizeof big, big, sizeof big, ACL_MEMCPY_HOST_TO_DEVICE));
    overflow_on(s2, da, db);
    EXPECT(status_of(out, s) != 0);

    CHECK(aclrtFree(da));
    CHECK(aclrtFree(db));
    CHECK(aclrtFree(out));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtDestroyStream(s2));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_overflow passed\n");
    return 0;
}
