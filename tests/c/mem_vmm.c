/* The virtual-memory family: granularity, reserve, physical allocation, map, copies through
 * the mapped range, unmap, free, release; accounting through aclrtGetMemInfo; bad input. */
#include "mem_check.h"
#include <stdint.h>

static size_t used(void)
{
    size_t fr = 0, tot = 0;
    CHECK_OK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
    return tot - fr;
}

int main(void)
{
    CHECK_OK(aclInit(NULL));
    void *p = NULL;
    CHECK_ERR(aclrtMalloc(&p, 10, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL, "aclrtMalloc");
    CHECK_OK(aclrtSetDevice(0));

    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0, g2 = 0;
    CHECK_OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g));
    CHECK_OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g2));
    CHECK(g == 2u << 20 && g2 == g);
    CHECK_ERR(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &g), ACL_ERROR_INVALID_PARAM, "option 65535");
    CHECK_ERR(aclrtMemGetAllocationGranularity(NULL, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_ERROR_INVALID_PARAM, "prop is NULL");
    CHECK_ERR(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, NULL), ACL_ERROR_INVALID_PARAM, "granularity is NULL");

    /* Reserve 3 granules, back them with two physical allocations. */
    void *va = NULL;
    CHECK_OK(aclrtReserveMemAddress(&va, 3 * g, 0, NULL, 0));
    CHECK(va != NULL);
    size_t before = used();
    aclrtDrvMemHandle h1 = NULL, h2 = NULL;
    CHECK_OK(aclrtMallocPhysical(&h1, 2 * g, &prop, 0));
    CHECK_OK(aclrtMallocPhysical(&h2, g, &prop, 0));
    CHECK(used() - before == 3 * g);
    aclrtPhysicalMemProp back;
    CHECK_OK(aclrtMemGetAllocationPropertiesFromHandle(h1, &back));
    CHECK(back.memAttr == ACL_HBM_MEM_HUGE && back.location.id == 0 &&
          back.location.type == ACL_MEM_LOCATION_TYPE_DEVICE);

    /* Not mapped yet: copies to the range fail. */
    char host[4096];
    mc_fill(host, sizeof(host), 5);
    CHECK_ERR(aclrtMemcpy(va, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "aclrtMemcpy", "dst");

    CHECK_OK(aclrtMapMem(va, 2 * g, 0, h1, 0));
    CHECK_OK(aclrtMapMem((char *)va + 2 * g, g, 0, h2, 0));
    CHECK_ERR(aclrtMapMem(va, g, 0, h2, 0), ACL_ERROR_INVALID_PARAM, "aclrtMapMem", "overlaps");
    /* Data through the mapped ranges, at odd offsets, both mappings. */
    char out[4096];
    CHECK_OK(aclrtMemcpy((char *)va + 12345, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_OK(aclrtMemcpy((char *)va + 2 * g + 7, 4096, (char *)va + 12345, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE));
    memset(out, 0, sizeof(out));
    CHECK_OK(aclrtMemcpy(out, 4096, (char *)va + 2 * g + 7, 4096, ACL_MEMCPY_DEFAULT));
    CHECK(mc_verify(out, 4096, 5) < 0);
    CHECK_OK(aclrtMemset((char *)va + 2 * g - 10, 10, 0x42, 10));
    CHECK_OK(aclrtMemcpy(out, 10, (char *)va + 2 * g - 10, 10, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 10; i++) CHECK(out[i] == 0x42);
    /* A copy running past the last mapping fails. */
    CHECK_ERR(aclrtMemcpy((char *)va + 3 * g - 100, 4096, host, 200, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst");

    /* Bad input. */
    CHECK_ERR(aclrtFreePhysical(h1), ACL_ERROR_INVALID_PARAM, "aclrtFreePhysical", "still mapped");
    CHECK_ERR(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM, "aclrtReleaseMemAddress", "aclrtUnmapMem");
    CHECK_ERR(aclrtMallocPhysical(&h1, 1000, &prop, 0), ACL_ERROR_INVALID_PARAM, "aclrtMallocPhysical", "granularity");
    CHECK_ERR(aclrtMallocPhysical(NULL, g, &prop, 0), ACL_ERROR_INVALID_PARAM, "handle is NULL");
    CHECK_ERR(aclrtReserveMemAddress(NULL, g, 0, NULL, 0), ACL_ERROR_INVALID_PARAM, "virPtr is NULL");
    CHECK_ERR(aclrtReserveMemAddress(&p, 1000, 0, NULL, 0), ACL_ERROR_INVALID_PARAM, "granularity");
    aclrtPhysicalMemProp badp = prop;
    badp.location.type = ACL_MEM_LOCATION_TYPE_HOST;
    CHECK_ERR(aclrtMallocPhysical(&h1, g, &badp, 0), ACL_ERROR_INVALID_PARAM, "location.type");
    badp = prop;
    badp.memAttr = ACL_DDR_MEM;
    CHECK_ERR(aclrtMallocPhysical(&h1, g, &badp, 0), ACL_ERROR_INVALID_PARAM, "memAttr");
    CHECK_ERR(aclrtMapMem(va, g, 0, (aclrtDrvMemHandle)(uintptr_t)0xdead, 0), ACL_ERROR_INVALID_PARAM, "not a live physical allocation");

    CHECK_OK(aclrtUnmapMem(va));
    CHECK_OK(aclrtUnmapMem((char *)va + 2 * g));
    CHECK_ERR(aclrtUnmapMem(va), ACL_ERROR_INVALID_PARAM, "aclrtUnmapMem");
    CHECK_ERR(aclrtMemcpy(va, 10, host, 10, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst");
    CHECK_OK(aclrtFreePhysical(h1));
    CHECK_OK(aclrtFreePhysical(h2));
    CHECK_ERR(aclrtFreePhysical(h2), ACL_ERROR_INVALID_PARAM, "aclrtFreePhysical", "not a live physical allocation");
    CHECK(used() == before);
    CHECK_OK(aclrtReleaseMemAddress(va));
    CHECK_ERR(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM, "aclrtReleaseMemAddress");

    /* Physical memory on another device, mapped into a fresh range. */
    prop.location.id = 1;
    CHECK_OK(aclrtReserveMemAddress(&va, g, 0, NULL, 0));
    CHECK_OK(aclrtMallocPhysical(&h1, g, &prop, 0));
    CHECK_OK(aclrtMapMem(va, g, 0, h1, 0));
    CHECK_OK(aclrtMemcpy(va, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(out, 0, sizeof(out));
    CHECK_OK(aclrtMemcpy(out, 4096, va, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(mc_verify(out, 4096, 5) < 0);
    aclrtPtrAttributes a;
    CHECK_OK(aclrtPointerGetAttributes(va, &a));
    CHECK(a.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && a.location.id == 1);
    CHECK_OK(aclrtUnmapMem(va));
    CHECK_OK(aclrtFreePhysical(h1));
    CHECK_OK(aclrtReleaseMemAddress(va));

    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    printf("vmm ok\n");
    return 0;
}
