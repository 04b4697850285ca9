/* CANN's allocation rounding, seen through aclrtGetMemInfo deltas: a multiple of 32 plus 32
 * bytes of padding for aclrtMalloc/aclrtMallocCached, no padding for aclrtMallocAlign32 and
 * the HUGE1G policies; unknown policies behave as the default. */
#include "mem_check.h"

static size_t used(void)
{
    size_t fr = 0, tot = 0;
    CHECK_OK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
    CHECK(fr <= tot);
    return tot - fr;
}

#define EXPECT_DELTA(call, want)                                                         \
    do {                                                                                 \
        size_t before_ = used();                                                         \
        CHECK_OK(call);                                                                  \
        size_t got_ = used() - before_;                                                  \
        if (got_ != (size_t)(want)) {                                                    \
            fprintf(stderr, "%s: used memory grew by %zu, expected %zu\n", #call, got_,   \
                    (size_t)(want));                                                     \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

int main(void)
{
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(0));
    size_t base = used();
    void *p[16];
    int n = 0;
    EXPECT_DELTA(aclrtMalloc(&p[n++], 1, ACL_MEM_MALLOC_HUGE_FIRST), 64);
    EXPECT_DELTA(aclrtMalloc(&p[n++], 32, ACL_MEM_MALLOC_HUGE_ONLY), 64);
    EXPECT_DELTA(aclrtMalloc(&p[n++], 33, ACL_MEM_MALLOC_NORMAL_ONLY), 96);
    EXPECT_DELTA(aclrtMalloc(&p[n++], 1000, ACL_MEM_MALLOC_HUGE_FIRST_P2P), 1056);
    EXPECT_DELTA(aclrtMalloc(&p[n++], 33, ACL_MEM_MALLOC_HUGE1G_ONLY), 64);
    EXPECT_DELTA(aclrtMalloc(&p[n++], 33, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P), 64);
    EXPECT_DELTA(aclrtMalloc(&p[n++], 33, (aclrtMemMallocPolicy)0x55), 96);      /* unknown → default */
    EXPECT_DELTA(aclrtMalloc(&p[n++], 33, (aclrtMemMallocPolicy)(ACL_MEM_MALLOC_HUGE_FIRST | ACL_MEM_TYPE_HIGH_BAND_WIDTH)), 96);
    EXPECT_DELTA(aclrtMallocAlign32(&p[n++], 33, ACL_MEM_MALLOC_HUGE_FIRST), 64);
    EXPECT_DELTA(aclrtMallocAlign32(&p[n++], 64, ACL_MEM_MALLOC_HUGE_FIRST), 64);
    EXPECT_DELTA(aclrtMallocCached(&p[n++], 100, ACL_MEM_MALLOC_HUGE_FIRST), 160);
    EXPECT_DELTA(aclrtMallocWithCfg(&p[n++], 100, ACL_MEM_MALLOC_HUGE_FIRST, NULL), 160);
    /* ACL_RT_MEM_ATTR_DEVICE_ID = 1: the allocation lands on device 1, not the current one. */
    aclrtMallocAttribute attr;
    memset(&attr, 0, sizeof(attr));
    attr.attr = ACL_RT_MEM_ATTR_DEVICE_ID;
    attr.value.deviceId = 1;
    aclrtMallocConfig cfg = {&attr, 1};
    EXPECT_DELTA(aclrtMallocWithCfg(&p[n++], 100, ACL_MEM_MALLOC_HUGE_FIRST, &cfg), 0);
    CHECK_OK(aclrtSetDevice(1));
    size_t on1 = used();
    CHECK(on1 >= 160);
    CHECK_OK(aclrtFree(p[--n]));
    CHECK(on1 - used() == 160);
    CHECK_OK(aclrtSetDevice(0));
    CHECK(used() - base == 64 + 64 + 96 + 1056 + 64 + 64 + 96 + 96 + 64 + 64 + 160 + 160);
    while (n > 0) CHECK_OK(aclrtFree(p[--n]));
    CHECK(used() == base);
    CHECK_OK(aclrtResetDevice(1));
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    printf("rounding ok\n");
    return 0;
}
