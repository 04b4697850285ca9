/* Data checks for every copy kind, 2-D copies, memsets and async copies ordered with events
 * across several streams. Uses devices 0 and 1. */
#include "mem_check.h"
#include <stdint.h>

#define N 4099 /* odd on purpose */

static void d2h_verify(void *dev, size_t n, unsigned seed, const char *what)
{
    unsigned char *h = malloc(n);
    memset(h, 0, n);
    CHECK_OK(aclrtMemcpy(h, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST));
    long bad = mc_verify(h, n, seed);
    if (bad >= 0) {
        fprintf(stderr, "%s: byte %ld differs\n", what, bad);
        exit(1);
    }
    free(h);
}

static void every_kind(void)
{
    unsigned char *h1 = malloc(N), *h2 = malloc(N), *pinned = NULL;
    void *d1 = NULL, *d2 = NULL, *d3 = NULL;
    CHECK_OK(aclrtMallocHost((void **)&pinned, N));
    CHECK_OK(aclrtMalloc(&d1, N, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtMalloc(&d2, N, ACL_MEM_MALLOC_NORMAL_ONLY));
    CHECK_OK(aclrtSetDevice(1));
    CHECK_OK(aclrtMalloc(&d3, N, ACL_MEM_MALLOC_HUGE_ONLY));
    CHECK_OK(aclrtSetDevice(0));

    /* 0: host to host */
    mc_fill(h1, N, 1);
    memset(h2, 0, N);
    CHECK_OK(aclrtMemcpy(h2, N, h1, N, ACL_MEMCPY_HOST_TO_HOST));
    CHECK(mc_verify(h2, N, 1) < 0);
    /* 1, 2: host to device and back */
    CHECK_OK(aclrtMemcpy(d1, N, h1, N, ACL_MEMCPY_HOST_TO_DEVICE));
    d2h_verify(d1, N, 1, "H2D");
    /* 3: device to device */
    CHECK_OK(aclrtMemcpy(d2, N, d1, N, ACL_MEMCPY_DEVICE_TO_DEVICE));
    d2h_verify(d2, N, 1, "D2D");
    /* 5: host to device through a staging buffer */
    mc_fill(pinned, N, 2);
    CHECK_OK(aclrtMemcpy(d1, N, pinned, N, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE));
    d2h_verify(d1, N, 2, "H2BUF2D");
    /* 6: inside one device; 7: across devices, which needs peer access (as on hardware) */
    CHECK_OK(aclrtMemcpy(d2, N, d1, N, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE));
    d2h_verify(d2, N, 2, "INNER D2D");
    CHECK_ERR(aclrtMemcpy(d3, N, d2, N, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE), ACL_ERROR_RT_NO_PERMISSION, "aclrtMemcpy", "device 0", "device 1", "aclrtDeviceEnablePeerAccess");
    CHECK_ERR(aclrtMemcpyAsync(d2, N, d3, N, ACL_MEMCPY_DEFAULT, NULL), ACL_ERROR_RT_NO_PERMISSION, "aclrtMemcpyAsync", "aclrtDeviceEnablePeerAccess");
    CHECK_OK(aclrtDeviceEnablePeerAccess(1, 0));
    CHECK_OK(aclrtMemcpy(d3, N, d2, N, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE));
    d2h_verify(d3, N, 2, "INTER D2D");
    /* 4: default, every direction inferred from the pointers */
    mc_fill(h1, N, 3);
    CHECK_OK(aclrtMemcpy(d1, N, h1, N, ACL_MEMCPY_DEFAULT));
    CHECK_OK(aclrtMemcpy(d3, N, d1, N, ACL_MEMCPY_DEFAULT));
    memset(h2, 0, N);
    CHECK_OK(aclrtMemcpy(h2, N, d3, N, ACL_MEMCPY_DEFAULT));
    CHECK(mc_verify(h2, N, 3) < 0);
    memset(pinned, 0, N);
    CHECK_OK(aclrtMemcpy(pinned, N, h2, N, ACL_MEMCPY_DEFAULT));
    CHECK(mc_verify(pinned, N, 3) < 0);
    /* Odd offsets and lengths inside allocations; destMax larger than count. */
    mc_fill(h1, N, 4);
    CHECK_OK(aclrtMemcpy(d1, N, h1, N, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_OK(aclrtMemcpy((char *)d2 + 7, N - 7, (char *)d1 + 3, 333, ACL_MEMCPY_DEVICE_TO_DEVICE));
    memset(h2, 0xEE, N);
    CHECK_OK(aclrtMemcpy(h2 + 1, N - 1, (char *)d2 + 7, 333, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(h2[0] == 0xEE && h2[334] == 0xEE);
    for (int i = 0; i < 333; i++) CHECK(h2[1 + i] == mc_pat(3 + i, 4));
    /* Overlapping copy inside one allocation (memmove semantics). */
    CHECK_OK(aclrtMemcpy((char *)d1 + 1, N - 1, d1, 1000, ACL_MEMCPY_DEVICE_TO_DEVICE));
    CHECK_OK(aclrtMemcpy(h2, N, d1, N, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 1000; i++) CHECK(h2[1 + i] == mc_pat(i, 4));
    /* count 0 succeeds and touches nothing. */
    CHECK_OK(aclrtMemcpy(d1, N, h1, 0, ACL_MEMCPY_HOST_TO_DEVICE));

    CHECK_OK(aclrtFree(d1));
    CHECK_OK(aclrtFree(d2));
    CHECK_OK(aclrtFree(d3));
    CHECK_OK(aclrtFreeHost(pinned));
    free(h1);
    free(h2);
    printf("every kind ok\n");
}

static void copies_2d(void)
{
    enum { W = 37, H = 11, SP = 53, DP = 41, HP = 45 };
    unsigned char src[SP * H + 3], back[HP * H + 5];
    void *d = NULL;
    size_t dsize = DP * H + 16;
    CHECK_OK(aclrtMalloc(&d, dsize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtMemset(d, dsize, 0x5A, dsize));
    mc_fill(src, sizeof(src), 7);
    /* host (offset 3, pitch 53) -> device (offset 5, pitch 41) */
    CHECK_OK(aclrtMemcpy2d((char *)d + 5, DP, src + 3, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE));
    unsigned char *whole = malloc(dsize);
    CHECK_OK(aclrtMemcpy(whole, dsize, d, dsize, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < dsize; i++) {
        long off = (long)i - 5;
        int in = off >= 0 && off / DP < H && off % DP < W;
        unsigned char want = in ? src[3 + (off / DP) * SP + off % DP] : 0x5A;
        if (whole[i] != want) {
            fprintf(stderr, "2d H2D: device byte %zu is %#x, expected %#x\n", i, whole[i], want);
            exit(1);
        }
    }
    /* device -> host (pitch 45, offset 2), ACL_MEMCPY_DEFAULT */
    memset(back, 0xC3, sizeof(back));
    CHECK_OK(aclrtMemcpy2d(back + 2, HP, (char *)d + 5, DP, W, H, ACL_MEMCPY_DEFAULT));
    for (size_t i = 0; i < sizeof(back); i++) {
        long off = (long)i - 2;
        int in = off >= 0 && off / HP < H && off % HP < W;
        unsigned char want = in ? src[3 + (off / HP) * SP + off % HP] : 0xC3;
        if (back[i] != want) {
            fprintf(stderr, "2d D2H: host byte %zu is %#x, expected %#x\n", i, back[i], want);
            exit(1);
        }
    }
    /* width 0 / height 0 are refused (CANN: ACL_REQUIRES_POSITIVE) */
    CHECK_ERR(aclrtMemcpy2d(d, DP, src, SP, 0, H, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "width is 0");
    CHECK_ERR(aclrtMemcpy2d(d, DP, src, SP, W, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "height is 0");
    free(whole);
    CHECK_OK(aclrtFree(d));
    printf("2d ok\n");
}

static void memsets(void)
{
    void *d = NULL;
    unsigned char *h = malloc(N), *pinned = NULL;
    CHECK_OK(aclrtMalloc(&d, N, ACL_MEM_MALLOC_HUGE_FIRST));
    mc_fill(h, N, 9);
    CHECK_OK(aclrtMemcpy(d, N, h, N, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_OK(aclrtMemset((char *)d + 3, N - 3, 0xAB, 501));
    CHECK_OK(aclrtMemset((char *)d + 1000, N - 1000, 0x1FF, 7)); /* int value → low byte */
    CHECK_OK(aclrtMemset(d, N, 0x11, 0));
    CHECK_OK(aclrtMemcpy(h, N, d, N, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < N; i++) {
        unsigned char want = mc_pat(i, 9);
        if (i >= 3 && i < 504) want = 0xAB;
        if (i >= 1000 && i < 1007) want = 0xFF;
        if (h[i] != want) {
            fprintf(stderr, "memset: byte %zu is %#x, expected %#x\n", i, h[i], want);
            exit(1);
        }
    }
    /* Host memory from aclrtMallocHost. */
    CHECK_OK(aclrtMallocHost((void **)&pinned, 100));
    memset(pinned, 0, 100);
    CHECK_OK(aclrtMemset(pinned + 1, 99, 0x77, 98));
    CHECK(pinned[0] == 0 && pinned[1] == 0x77 && pinned[98] == 0x77 && pinned[99] == 0);
    CHECK_OK(aclrtFreeHost(pinned));
    CHECK_OK(aclrtFree(d));
    free(h);
    printf("memset ok\n");
}

static void async_streams(void)
{
    enum { BIG = 8 << 20, ROUNDS = 6 };
    aclrtStream s[3];
    aclrtEvent e1, e2;
    for (int i = 0; i < 3; i++) CHECK_OK(aclrtCreateStream(&s[i]));
    CHECK_OK(aclrtCreateEvent(&e1));
    CHECK_OK(aclrtCreateEvent(&e2));
    unsigned char *in = NULL, *outb = NULL;
    void *da = NULL, *db = NULL;
    CHECK_OK(aclrtMallocHost((void **)&in, BIG));
    CHECK_OK(aclrtMallocHost((void **)&outb, BIG));
    CHECK_OK(aclrtMalloc(&da, BIG, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtMalloc(&db, BIG, ACL_MEM_MALLOC_HUGE_FIRST));
    for (unsigned r = 0; r < ROUNDS; r++) {
        mc_fill(in, BIG, 100 + r);
        memset(outb, 0, BIG);
        /* s0: upload, then clobber the tail of db must wait: record e1 */
        CHECK_OK(aclrtMemcpyAsync(da, BIG, in, BIG, ACL_MEMCPY_HOST_TO_DEVICE, s[0]));
        CHECK_OK(aclrtRecordEvent(e1, s[0]));
        /* s1: after e1, device to device, plus a memset of the last 64 bytes */
        CHECK_OK(aclrtStreamWaitEvent(s[1], e1));
        CHECK_OK(aclrtMemcpyAsync(db, BIG, da, BIG, ACL_MEMCPY_DEVICE_TO_DEVICE, s[1]));
        CHECK_OK(aclrtMemsetAsync((char *)db + BIG - 64, 64, (int)r, 64, s[1]));
        CHECK_OK(aclrtRecordEvent(e2, s[1]));
        /* s2: after e2, download */
        CHECK_OK(aclrtStreamWaitEvent(s[2], e2));
        CHECK_OK(aclrtMemcpyAsync(outb, BIG, db, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s[2]));
        CHECK_OK(aclrtSynchronizeStream(s[2]));
        long bad = mc_verify(outb, BIG - 64, 100 + r);
        if (bad >= 0) {
            fprintf(stderr, "async round %u: byte %ld differs\n", r, bad);
            exit(1);
        }
        for (int i = 0; i < 64; i++) CHECK(outb[BIG - 64 + i] == r);
        CHECK_OK(aclrtSynchronizeStream(s[0]));
        CHECK_OK(aclrtSynchronizeStream(s[1]));
    }
    /* Pageable host memory: aclrtMemcpyAsync completes before it returns (CANN). */
    unsigned char *pageable = malloc(4096);
    memset(pageable, 0, 4096);
    CHECK_OK(aclrtMemcpyAsync(pageable, 4096, db, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s[0]));
    CHECK(mc_verify(pageable, 4096, 100 + ROUNDS - 1) < 0); /* no synchronize needed */
    free(pageable);
    /* 2-D async device to device (supported asynchronously only). */
    CHECK_OK(aclrtMemset(da, BIG, 0, 4096));
    CHECK_OK(aclrtMemcpy2dAsync(da, 16, db, 32, 10, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s[1]));
    CHECK_OK(aclrtSynchronizeStream(s[1]));
    CHECK_OK(aclrtMemcpy(outb, 64, da, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 16; c++)
            CHECK(outb[r * 16 + c] == (c < 10 ? mc_pat(r * 32 + c, 100 + ROUNDS - 1) : 0));
    /* 2-D async on the default stream. */
    unsigned char src2[64 * 9];
    mc_fill(src2, sizeof(src2), 55);
    CHECK_OK(aclrtMemcpy2dAsync(da, 33, src2, 64, 31, 9, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    CHECK_OK(aclrtMemcpy2dAsync(outb, 31, da, 33, 31, 9, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    CHECK_OK(aclrtSynchronizeStream(NULL));
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 31; c++) CHECK(outb[r * 31 + c] == src2[r * 64 + c]);

    CHECK_OK(aclrtFree(da));
    CHECK_OK(aclrtFree(db));
    CHECK_OK(aclrtFreeHost(in));
    CHECK_OK(aclrtFreeHost(outb));
    CHECK_OK(aclrtDestroyEvent(e1));
    CHECK_OK(aclrtDestroyEvent(e2));
    for (int i = 0; i < 3; i++) CHECK_OK(aclrtDestroyStream(s[i]));
    printf("async ok\n");
}

static void attributes(void)
{
    void *d = NULL, *h = NULL;
    CHECK_OK(aclrtSetDevice(1));
    CHECK_OK(aclrtMalloc(&d, 10, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtSetDevice(0));
    CHECK_OK(aclrtMallocHost(&h, 10));
    aclrtPtrAttributes a;
    CHECK_OK(aclrtPointerGetAttributes(d, &a));
    CHECK(a.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && a.location.id == 1);
    CHECK_OK(aclrtPointerGetAttributes(h, &a));
    CHECK(a.location.type == ACL_MEM_LOCATION_TYPE_HOST);
    int local = 0;
    CHECK_OK(aclrtPointerGetAttributes(&local, &a));
    CHECK(a.location.type == ACL_MEM_LOCATION_TYPE_UNREGISTERED);
    CHECK_OK(aclrtMemFlush(d, 10));
    CHECK_OK(aclrtMemInvalidate(d, 10));
    size_t fr = 0, tot = 0;
    CHECK_OK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
    CHECK(tot > 0 && fr <= tot);
    /* An HBM SoC (Ascend910B1) reports nothing for the DDR attributes, as in CANN. */
    fr = tot = 1;
    CHECK_OK(aclrtGetMemInfo(ACL_DDR_MEM, &fr, &tot));
    CHECK(tot == 0 && fr == 0);
    CHECK_OK(aclrtGetMemInfo(ACL_MEM_NORMAL, &fr, &tot));
    CHECK(tot > 0 && fr <= tot);
    /* aclrtHostRegister: ordinary host memory registered for the device. */
    unsigned char *reg = aligned_alloc(4096, 8192); /* page aligned, as the API requires */
    void *regdev = NULL;
    CHECK_OK(aclrtHostRegister(reg, 8192, ACL_HOST_REGISTER_MAPPED, &regdev));
    CHECK(regdev != NULL);
    CHECK_OK(aclrtMemset(reg, 8192, 0x3C, 8192)); /* registered: memset may target it */
    CHECK(reg[0] == 0x3C && reg[8191] == 0x3C);
    CHECK_OK(aclrtMemcpy(d, 10, regdev, 10, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ERR(aclrtHostRegister(reg + 4096, 10, ACL_HOST_REGISTER_MAPPED, &regdev), ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "aclrtHostRegister", "overlaps");
    CHECK_OK(aclrtHostUnregister(reg));
    CHECK_ERR(aclrtHostUnregister(reg), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, "aclrtHostUnregister");
    /* aclrtHostRegisterV2 + aclrtHostGetDevicePointer. */
    CHECK_OK(aclrtHostRegisterV2(reg, 8192, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED));
    CHECK_OK(aclrtHostGetDevicePointer(reg + 10, &regdev, 0));
    CHECK(regdev != reg + 10); /* a device address of the same memory */
    CHECK_OK(aclrtMemcpy(d, 10, regdev, 10, ACL_MEMCPY_DEVICE_TO_DEVICE));
    CHECK_ERR(aclrtHostRegisterV2(reg, 8192, 0x4), ACL_ERROR_INVALID_PARAM, "aclrtHostRegisterV2", "flag 0x4");
    CHECK_OK(aclrtHostUnregister(reg));
    CHECK_ERR(aclrtHostGetDevicePointer(reg, &regdev, 0), ACL_ERROR_INVALID_PARAM, "aclrtHostGetDevicePointer", "not inside host memory registered");
    free(reg);

    /* aclrtFreeHostWithDevSync waits for the device's streams, then frees. */
    void *pend = NULL;
    CHECK_OK(aclrtMallocHost(&pend, 4096));
    CHECK_OK(aclrtMemcpyAsync(pend, 4096, d, 10, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
    CHECK_OK(aclrtFreeHostWithDevSync(pend));
    CHECK_ERR(aclrtFreeHostWithDevSync(pend), ACL_ERROR_INVALID_PARAM, "aclrtFreeHostWithDevSync", "not a live allocation");

    CHECK_OK(aclrtFree(d));
    CHECK_OK(aclrtFreeHost(h));
    printf("attributes ok\n");
}

int main(void)
{
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(0));
    every_kind();
    copies_2d();
    memsets();
    async_streams();
    attributes();
    CHECK_OK(aclrtResetDevice(1));
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    printf("mem_copy ok\n");
    return 0;
}
