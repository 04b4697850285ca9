/* Bad input to the memory API: exact codes and aclGetRecentErrMsg text, and no damage to
 * neighbouring allocations. */
#include "mem_check.h"
#include <stdint.h>

static char addr_buf[64];
static const char *hex(const void *p)
{
    snprintf(addr_buf, sizeof(addr_buf), "%p", p);
    return addr_buf;
}

int main(void)
{
    void *p = NULL;
    /* Before aclInit. */
    CHECK_ERR(aclrtMalloc(&p, 10, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE, "aclrtMalloc");
    CHECK_OK(aclInit(NULL));

    /* NULL pointers and size 0. */
    CHECK_ERR(aclrtMalloc(NULL, 10, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "aclrtMalloc", "devPtr is NULL");
    CHECK_OK(aclrtSetDevice(0));
    CHECK_ERR(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "aclrtMalloc", "size is 0");
    CHECK_ERR(aclrtMallocAlign32(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "size is 0");
    CHECK_ERR(aclrtMallocCached(NULL, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
    CHECK_ERR(aclrtMallocHost(NULL, 10), ACL_ERROR_INVALID_PARAM, "aclrtMallocHost", "hostPtr is NULL");
    CHECK_ERR(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM, "size is 0");
    CHECK_ERR(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM, "aclrtFree", "devPtr is NULL");
    CHECK_ERR(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM, "aclrtFreeHost", "hostPtr is NULL");
    size_t fr, tot;
    CHECK_ERR(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &tot), ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo", "free is NULL");
    CHECK_ERR(aclrtGetMemInfo(ACL_HBM_MEM, &fr, NULL), ACL_ERROR_INVALID_PARAM, "total is NULL");
    CHECK_ERR(aclrtGetMemInfo((aclrtMemAttr)99, &fr, &tot), ACL_ERROR_RT_INVALID_MEMORY_TYPE, "attr 99");
    /* Far more than the device has. */
    CHECK_ERR(aclrtMalloc(&p, (size_t)1 << 50, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc");

    /* Two neighbours; a = 64 requested (96 usable with CANN's padding). */
    char host[4096];
    void *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(aclrtMalloc(&a, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtMalloc(&b, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    mc_fill(host, 96, 1);
    CHECK_OK(aclrtMemcpy(a, 96, host, 96, ACL_MEMCPY_HOST_TO_DEVICE));
    mc_fill(host, 96, 2);
    CHECK_OK(aclrtMemcpy(b, 96, host, 96, ACL_MEMCPY_HOST_TO_DEVICE));
    mc_fill(host, sizeof(host), 3);
    /* Past the end of a: fails, touches neither a nor b. */
    CHECK_ERR(aclrtMemcpy(a, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "aclrtMemcpy", "dst", hex(a));
    CHECK_ERR(aclrtMemcpy((char *)a + 90, 100, host, 7, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst");
    CHECK_ERR(aclrtMemcpy(host, 4096, a, 97, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM, "src", hex(a));
    CHECK_ERR(aclrtMemcpy(b, 4096, a, 200, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst", "runs past the end");
    CHECK_ERR(aclrtMemset(a, 4096, 0, 4096), ACL_ERROR_INVALID_PARAM, "aclrtMemset", "devPtr");
    char back[96];
    CHECK_OK(aclrtMemcpy(back, 96, a, 96, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(mc_verify(back, 96, 1) < 0);
    CHECK_OK(aclrtMemcpy(back, 96, b, 96, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(mc_verify(back, 96, 2) < 0);
    /* The padding CANN adds is usable: 96 bytes of a 64-byte request. */
    CHECK_OK(aclrtMemcpy(a, 96, host, 96, ACL_MEMCPY_HOST_TO_DEVICE));

    /* Host memory from aclrtMallocHost is range-checked too. */
    void *pin = NULL;
    CHECK_OK(aclrtMallocHost(&pin, 100));
    CHECK_OK(aclrtMemcpy(a, 96, pin, 96, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ERR(aclrtMemcpy((char *)pin + 50, 96, a, 96, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM, "dst", "host allocation", "by 46 bytes");
    CHECK_OK(aclrtFreeHost(pin));

    /* count > destMax; kinds that do not match the pointers; unknown kinds. */
    CHECK_ERR(aclrtMemcpy(a, 10, host, 20, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, "count 20 is larger than destMax 10");
    CHECK_ERR(aclrtMemcpyAsync(a, 10, host, 20, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_RT_PARAM_INVALID, "aclrtMemcpyAsync", "destMax 10");
    CHECK_ERR(aclrtMemsetAsync(a, 10, 0, 20, NULL), ACL_ERROR_RT_PARAM_INVALID, "aclrtMemsetAsync", "maxCount 10");
    /* The ACL layer checks the pointers and the kind first (CANN 8.5 aclrtMemcpyImpl,
     * aclrtMemsetImpl, ...); then count 0 succeeds before any other check. */
    CHECK_ERR(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst is NULL");
    CHECK_ERR(aclrtMemcpy(a, 0, host, 0, (aclrtMemcpyKind)42), ACL_ERROR_INVALID_PARAM, "kind 42");
    CHECK_ERR(aclrtMemcpyAsync(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM, "dst is NULL");
    CHECK_ERR(aclrtMemset(NULL, 0, 0, 0), ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
    CHECK_ERR(aclrtMemsetAsync(NULL, 0, 0, 0, NULL), ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
    CHECK_OK(aclrtMemcpy(a, 0, host, 0, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_OK(aclrtMemcpyAsync(a, 0, host, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
    CHECK_OK(aclrtMemset(a, 0, 0, 0));
    CHECK_OK(aclrtMemsetAsync(a, 0, 0, 0, NULL));
    /* The direction comes from the pointers; with pageable host memory the kind must fit. */
    CHECK_ERR(aclrtMemcpy(host, 10, a, 10, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, "ACL_MEMCPY_HOST_TO_DEVICE", "pageable host memory", "device 0");
    CHECK_ERR(aclrtMemcpy(a, 10, host, 10, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID, "ACL_MEMCPY_DEVICE_TO_HOST", "pageable host memory");
    CHECK_OK(aclrtMemcpy(host, 10, host + 100, 10, ACL_MEMCPY_HOST_TO_DEVICE)); /* host to host */
    CHECK_OK(aclrtMemcpy(b, 10, a, 10, ACL_MEMCPY_HOST_TO_HOST));               /* forced D2D */
    CHECK_ERR(aclrtMemcpy(a, 10, host, 10, (aclrtMemcpyKind)99), ACL_ERROR_INVALID_PARAM, "kind 99");
    CHECK_ERR(aclrtMemcpy(NULL, 10, host, 10, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst is NULL");
    CHECK_ERR(aclrtMemcpy(a, 10, NULL, 10, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "src is NULL");
    CHECK_ERR(aclrtMemcpyAsync(a, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync", "dst");
    CHECK_ERR(aclrtMemcpyAsync(host, 10, host + 100, 10, ACL_MEMCPY_HOST_TO_HOST, NULL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyAsync", "host-to-host");

    /* memset arguments. */
    CHECK_ERR(aclrtMemset(a, 10, 0, 20), ACL_ERROR_INVALID_PARAM, "count 20 is larger than maxCount 10");
    CHECK_ERR(aclrtMemset(NULL, 10, 0, 1), ACL_ERROR_INVALID_PARAM, "devPtr is NULL");
    CHECK_ERR(aclrtMemset(host, sizeof(host), 0, 16), ACL_ERROR_INVALID_PARAM, "aclrtMallocHost");
    CHECK_ERR(aclrtMemsetAsync(a, 4096, 0, 4096, NULL), ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync", "devPtr");

    /* 2-D copies. */
    CHECK_ERR(aclrtMemcpy2d(a, 10, host, 64, 20, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dpitch 10 is smaller than width 20");
    CHECK_ERR(aclrtMemcpy2d(a, 64, host, 10, 20, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "spitch 10 is smaller than width 20");
    CHECK_ERR(aclrtMemcpy2d(host, 64, host + 1000, 64, 20, 2, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM, "aclrtMemcpy2d", "HOST_TO_DEVICE");
    CHECK_ERR(aclrtMemcpy2d(a, 64, b, 64, 20, 2, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "aclrtMemcpy2d", "device-to-device");
    CHECK_ERR(aclrtMemcpy2d(a, 5000001, host, 5000001, 5000001, 1, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, "width 5000001");
    CHECK_ERR(aclrtMemcpy2dAsync(a, 16, host, 16, 16, 5242881, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_RT_PARAM_INVALID, "height 5242881");
    /* NULL pointers, then a zero height or width: ACL_ERROR_INVALID_PARAM (CheckMemcpy2dParam). */
    CHECK_ERR(aclrtMemcpy2d(NULL, 16, NULL, 16, 0, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst is NULL");
    CHECK_ERR(aclrtMemcpy2d(a, 16, host, 16, 0, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "width is 0");
    CHECK_ERR(aclrtMemcpy2dAsync(a, 16, host, 16, 16, 0, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_INVALID_PARAM, "height is 0");
    /* Row 2 of 3 leaves a (rows at 0, 40, 80; width 20). */
    mc_fill(host, 96, 1);
    CHECK_OK(aclrtMemcpy(a, 96, host, 96, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ERR(aclrtMemcpy2d(a, 40, host + 1000, 64, 20, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "row 2");
    CHECK_OK(aclrtMemcpy(back, 96, a, 96, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(mc_verify(back, 96, 1) < 0); /* rows 0 and 1 were not written either */

    /* Freed memory, double free, interior and foreign pointers. */
    CHECK_OK(aclrtMalloc(&c, 1000, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtFree(c));
    CHECK_ERR(aclrtMemcpy(c, 100, host, 100, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "aclrtMemcpy", "dst", hex(c));
    CHECK_ERR(aclrtMemset(c, 100, 0, 100), ACL_ERROR_INVALID_PARAM, "aclrtMemset");
    CHECK_ERR(aclrtFree(c), ACL_ERROR_INVALID_PARAM, "aclrtFree", hex(c));
    CHECK_ERR(aclrtFree((char *)a + 32), ACL_ERROR_INVALID_PARAM, "aclrtFree");
    CHECK_ERR(aclrtFree(host), ACL_ERROR_INVALID_PARAM, "aclrtFree", "not device memory");
    void *h = NULL;
    CHECK_OK(aclrtMallocHost(&h, 100));
    CHECK_ERR(aclrtFree(h), ACL_ERROR_INVALID_PARAM, "aclrtFreeHost");
    CHECK_ERR(aclrtFreeHost(a), ACL_ERROR_INVALID_PARAM, "aclrtFreeHost", "device memory");
    CHECK_ERR(aclrtFreeHost((char *)h + 1), ACL_ERROR_INVALID_PARAM, "not its start");
    CHECK_OK(aclrtFreeHost(h));
    CHECK_ERR(aclrtFreeHost(h), ACL_ERROR_INVALID_PARAM, "aclrtFreeHost", "freed twice");
    void *m = malloc(16);
    CHECK_ERR(aclrtFreeHost(m), ACL_ERROR_INVALID_PARAM, "not a live allocation of aclrtMallocHost");
    free(m);

    /* aclrtMallocWithCfg attributes. */
    aclrtMallocAttribute at[2];
    memset(at, 0, sizeof(at));
    aclrtMallocConfig cfg = {NULL, 1};
    CHECK_ERR(aclrtMallocWithCfg(&p, 10, ACL_MEM_MALLOC_HUGE_FIRST, &cfg), ACL_ERROR_INVALID_PARAM, "aclrtMallocWithCfg", "attrs is NULL");
    at[0].attr = (aclrtMallocAttrType)42;
    cfg.attrs = at;
    CHECK_ERR(aclrtMallocWithCfg(&p, 10, ACL_MEM_MALLOC_HUGE_FIRST, &cfg), ACL_ERROR_INVALID_PARAM, "attr is 42");
    at[0].attr = ACL_RT_MEM_ATTR_MODULE_ID; /* accepted and ignored */
    at[0].value.moduleId = 7;
    at[1].attr = ACL_RT_MEM_ATTR_DEVICE_ID;
    at[1].value.deviceId = 4242;
    cfg.numAttrs = 2;
    CHECK_ERR(aclrtMallocWithCfg(&p, 10, ACL_MEM_MALLOC_HUGE_FIRST, &cfg), ACL_ERROR_RT_INVALID_DEVICEID, "4242");
    cfg.numAttrs = 1;
    CHECK_OK(aclrtMallocWithCfg(&p, 10, ACL_MEM_MALLOC_HUGE_FIRST, &cfg));
    CHECK_OK(aclrtFree(p));

    /* Queries on freed memory, flush/invalidate ranges. */
    aclrtPtrAttributes pa;
    CHECK_ERR(aclrtPointerGetAttributes(c, &pa), ACL_ERROR_INVALID_PARAM, "aclrtPointerGetAttributes", hex(c));
    CHECK_ERR(aclrtPointerGetAttributes(a, NULL), ACL_ERROR_INVALID_PARAM, "attributes is NULL");
    CHECK_ERR(aclrtMemFlush(a, 0), ACL_ERROR_INVALID_PARAM, "aclrtMemFlush", "size is 0");
    CHECK_ERR(aclrtMemFlush(a, 4096), ACL_ERROR_INVALID_PARAM, "aclrtMemFlush", "runs past the end");
    CHECK_ERR(aclrtMemInvalidate(c, 16), ACL_ERROR_INVALID_PARAM, "aclrtMemInvalidate");

    CHECK_OK(aclrtFree(a));
    CHECK_OK(aclrtFree(b));
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    printf("mem_errors ok\n");
    return 0;
}
