// TransData is asynchronous and runs in stream order: behind a held stream, a chain
// upload -> TransData -> inverse TransData -> download has not run when the calls return,
// and gives the input back once the stream is released. An input freed before the stream
// reaches the operator fails at the next synchronize with a message (not a write to freed
// memory). A host function holds the stream, so the order is deterministic.
#include <semaphore.h>
#include <cstdint>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "common.h"

static sem_t gate;

static void hold_stream(void *) {
    while (sem_wait(&gate) != 0) {
    }
}

static void run(const char *op, aclTensorDesc *in, void *src, size_t sn, aclTensorDesc *out,
                void *dst, size_t dn, const char *sf, const char *df, aclrtStream s) {
    aclopAttr *a = aclopCreateAttr();
    CHECK(aclopSetAttrString(a, "src_format", sf));
    CHECK(aclopSetAttrString(a, "dst_format", df));
    aclDataBuffer *ib = aclCreateDataBuffer(src, sn), *ob = aclCreateDataBuffer(dst, dn);
    aclTensorDesc *ind[1] = {in}, *outd[1] = {out};
    aclDataBuffer *inb[1] = {ib}, *outb[1] = {ob};
    CHECK(aclopExecuteV2(op, 1, ind, inb, 1, outd, outb, a, s));
    // Descriptors, buffers and attrs may go as soon as the call returned (as in CANN).
    aclopDestroyAttr(a);
    CHECK(aclDestroyDataBuffer(ib));
    CHECK(aclDestroyDataBuffer(ob));
}

int main() {
    EXPECT(sem_init(&gate, 0, 0) == 0);
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    int64_t ps[4] = {2, 19, 3, 5}, qs[5] = {2, 2, 3, 5, 16};
    size_t pn = 2 * 19 * 3 * 5 * 2, qn = 2 * 2 * 3 * 5 * 16 * 2;
    aclTensorDesc *pd = aclCreateTensorDesc(ACL_FLOAT16, 4, ps, ACL_FORMAT_NCHW);
    aclTensorDesc *qd = aclCreateTensorDesc(ACL_FLOAT16, 5, qs, ACL_FORMAT_NC1HWC0);
    unsigned char *host = NULL, *back = NULL;
    CHECK(aclrtMallocHost((void **)&host, pn));
    CHECK(aclrtMallocHost((void **)&back, pn));
    for (size_t i = 0; i < pn; ++i) host[i] = (unsigned char)(i * 13 + 1);
    memset(back, 0xEE, pn);
    void *a = NULL, *b = NULL, *c = NULL;
    CHECK(aclrtMalloc(&a, pn, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, qn, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&c, pn, ACL_MEM_MALLOC_HUGE_FIRST));

    CHECK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    CHECK(aclrtMemcpyAsync(a, pn, host, pn, ACL_MEMCPY_HOST_TO_DEVICE, s));
    run("TransData", pd, a, pn, qd, b, qn, "NCHW", "NC1HWC0", s);
    run("TransData", qd, b, qn, pd, c, pn, "NC1HWC0", "NCHW", s);
    CHECK(aclrtMemcpyAsync(back, pn, c, pn, ACL_MEMCPY_DEVICE_TO_HOST, s));
    for (size_t i = 0; i < pn; ++i) EXPECT(back[i] == 0xEE);  // nothing ran yet
    sem_post(&gate);
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(memcmp(back, host, pn) == 0);
    printf("ok stream order\n");

    // Freed before the stream runs the operator: the error surfaces at synchronize.
    CHECK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    run("TransData", pd, a, pn, qd, b, qn, "NCHW", "NC1HWC0", s);
    CHECK(aclrtFree(a));
    sem_post(&gate);
    EXPECT_CODE(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM,
                "aclopExecuteV2 TransData (run on the stream)");
    CHECK(aclrtSynchronizeStream(s));  // reported once; the stream works again
    run("TransData", qd, b, qn, pd, c, pn, "NC1HWC0", "NCHW", s);
    CHECK(aclrtSynchronizeStream(s));
    printf("ok freed input\n");

    aclDestroyTensorDesc(pd);
    aclDestroyTensorDesc(qd);
    CHECK(aclrtFree(b));
    CHECK(aclrtFree(c));
    CHECK(aclrtFreeHost(host));
    CHECK(aclrtFreeHost(back));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS\n");
    return 0;
}
