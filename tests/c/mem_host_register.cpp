/* aclrtHostRegister: page-aligned host memory mapped into the device's address space.
 * The device pointer is used by a D2D async copy and by an aclnn operator (Muls reading
 * it, InplaceFillScalar writing it); writes through either pointer are seen through the
 * other; after aclrtHostUnregister the host bytes survive; the error cases. */
#include <stdint.h>
#include <stdlib.h>
#include "mem_check.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_fill_scalar.h"

#define NN(call)                                                                           \
    do {                                                                                   \
        aclnnStatus s_ = (call);                                                           \
        if (s_ != 0) {                                                                     \
            fprintf(stderr, "%s:%d: %s failed with %d: %s\n", __FILE__, __LINE__, #call,   \
                    (int)s_, mc_msg());                                                    \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static aclTensor *vec(void *dev, int64_t n)
{
    int64_t shape[1] = {n}, strides[1] = {1};
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, dev);
}

int main(void)
{
    const size_t N = 2048, BYTES = N * sizeof(float); /* 8 KiB: two pages */
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK_OK(aclrtCreateStream(&s));

    /* malloc'ed (pageable) page-aligned memory and aclrtMallocHost memory. */
    float *host = (float *)aligned_alloc(4096, BYTES);
    CHECK(host != NULL);
    for (size_t i = 0; i < N; i++) host[i] = (float)i;
    void *devp = NULL;
    CHECK_OK(aclrtHostRegister(host, BYTES, ACL_HOST_REGISTER_MAPPED, &devp));
    CHECK(devp != NULL && devp != (void *)host);
    float *dev = (float *)devp;

    /* Attributes: the host pointer is host memory, the device pointer device 0's. */
    aclrtPtrAttributes at;
    CHECK_OK(aclrtPointerGetAttributes(host, &at));
    CHECK(at.location.type == ACL_MEM_LOCATION_TYPE_HOST);
    CHECK_OK(aclrtPointerGetAttributes(dev + 5, &at));
    CHECK(at.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && at.location.id == 0);

    /* D2D async copy out of the registered memory (contents registered before). */
    void *d = NULL;
    CHECK_OK(aclrtMalloc(&d, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtMemcpyAsync(d, BYTES, dev, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    CHECK_OK(aclrtSynchronizeStream(s));
    float back[2048];
    CHECK_OK(aclrtMemcpy(back, BYTES, d, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < N; i++) CHECK(back[i] == (float)i);

    /* Host write, seen by an operator reading the device pointer: out = dev * 2. */
    host[7] = 100.0f;
    float two = 2.0f;
    aclScalar *k = aclCreateScalar(&two, ACL_FLOAT);
    aclTensor *tin = vec(dev, (int64_t)N), *tout = vec(d, (int64_t)N);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    NN(aclnnMulsGetWorkspaceSize(tin, k, tout, &ws, &ex));
    CHECK(ws == 0);
    NN(aclnnMuls(NULL, 0, ex, s));
    CHECK_OK(aclrtSynchronizeStream(s));
    CHECK_OK(aclrtMemcpy(back, BYTES, d, BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(back[7] == 200.0f && back[3] == 6.0f && back[N - 1] == 2.0f * (float)(N - 1));

    /* D2D async copy into the registered memory, seen through the host pointer. */
    CHECK_OK(aclrtMemcpyAsync(dev, BYTES, d, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    CHECK_OK(aclrtSynchronizeStream(s));
    CHECK(host[7] == 200.0f && host[1000] == 2000.0f);

    /* An operator writing through the device pointer: fill the first 16 floats. */
    float v = 3.5f;
    aclScalar *fv = aclCreateScalar(&v, ACL_FLOAT);
    aclTensor *head = vec(dev, 16);
    NN(aclnnInplaceFillScalarGetWorkspaceSize(head, fv, &ws, &ex));
    NN(aclnnInplaceFillScalar(NULL, 0, ex, s));
    CHECK_OK(aclrtSynchronizeStream(s));
    CHECK(host[0] == 3.5f && host[15] == 3.5f && host[16] == 32.0f);

    /* Error cases. */
    void *other = NULL;
    CHECK_ERR(aclrtHostRegister((char *)host + 16, 64, ACL_HOST_REGISTER_MAPPED, &other),
              ACL_ERROR_INVALID_PARAM, "aclrtHostRegister", "page aligned");
    CHECK_ERR(aclrtHostRegister((char *)host + 4096, 64, ACL_HOST_REGISTER_MAPPED, &other),
              ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "aclrtHostRegister", "overlaps");
    CHECK_ERR(aclrtFree(dev), ACL_ERROR_INVALID_PARAM, "aclrtFree", "aclrtHostUnregister");
    CHECK_ERR(aclrtHostUnregister((char *)host + 4096), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
              "aclrtHostUnregister", "inside the registered range");
    void *dp = NULL;
    CHECK_OK(aclrtHostGetDevicePointer(host + 10, &dp, 0));
    CHECK(dp == (void *)(dev + 10));

    /* Unregister: the host bytes survive, the device address is gone. */
    CHECK_OK(aclrtHostUnregister(host));
    CHECK(host[0] == 3.5f && host[15] == 3.5f && host[16] == 32.0f);
    CHECK(host[N - 1] == 2.0f * (float)(N - 1));
    host[1] = 42.0f; /* private, writable memory again */
    CHECK(host[1] == 42.0f);
    CHECK_ERR(aclrtMemcpy(back, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM,
              "aclrtMemcpy");
    CHECK_ERR(aclrtHostUnregister(host), ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
              "aclrtHostUnregister", "not the start");
    free(host);

    /* aclrtMallocHost memory, registered; aclrtFreeHost while registered releases it. */
    void *ph = NULL;
    CHECK_OK(aclrtMallocHost(&ph, 4096));
    memset(ph, 0x5A, 4096);
    void *pd = NULL;
    CHECK_OK(aclrtHostRegister(ph, 4096, ACL_HOST_REGISTER_MAPPED, &pd));
    CHECK_OK(aclrtMemsetAsync(pd, 4096, 0x11, 100, s));
    CHECK_OK(aclrtSynchronizeStream(s));
    CHECK(((unsigned char *)ph)[99] == 0x11 && ((unsigned char *)ph)[100] == 0x5A);
    CHECK_OK(aclrtFreeHost(ph));
    CHECK_ERR(aclrtMemset(pd, 16, 0, 16), ACL_ERROR_INVALID_PARAM, "aclrtMemset");

    /* VA normalization is not offered: FEATURE_NOT_SUPPORT, as on drivers without it. */
    aclrtMallocAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.attr = ACL_RT_MEM_ATTR_VA_FLAG;
    attr.value.vaFlag = 1;
    aclrtMallocConfig cfg = {&attr, 1};
    void *va = NULL;
    CHECK_ERR(aclrtMallocHostWithCfg(&va, 4096, &cfg), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              "aclrtMallocHostWithCfg", "VA_FLAG");
    attr.value.vaFlag = 0;
    CHECK_OK(aclrtMallocHostWithCfg(&va, 4096, &cfg));
    CHECK_OK(aclrtFreeHost(va));

    CHECK_OK(aclrtFree(d));
    CHECK_OK(aclrtDestroyStream(s));
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    printf("host register ok\n");
    return 0;
}
