/* Shared queues (acl/acl_tdt_queue.h), written from CANN's API reference: queue attributes,
 * acltdtEnqueueData / acltdtDequeueData with user data and the full / empty codes with and
 * without a timeout, two threads through a small queue, device memory, shared buffers
 * (acltdtAllocBuf ...) in both directions, grant / attach, routes (bind, forwarding, query
 * modes, unbind) and the argument checks. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include "common.h"
#include "acl/acl_tdt_queue.h"

#define N 50

static uint32_t shared_qid;
static int producer_ok;

/* Enqueue N messages into a queue of depth 3: most calls wait for the consumer. */
static void *producer(void *arg) {
    (void)arg;
    CHECK(aclrtSetDevice(0));
    for (int k = 0; k < N; k++) {
        int32_t v[4] = {k, k * 2, k * 3, -k};
        uint32_t user = 1000u + (uint32_t)k;
        CHECK(acltdtEnqueueData(shared_qid, v, sizeof(v), &user, sizeof(user), -1, 0));
    }
    producer_ok = 1;
    return NULL;
}

static aclError waiter_ret = 0;

/* Waits for ever on a queue that the main thread destroys. */
static void *waiter(void *arg) {
    (void)arg;
    CHECK(aclrtSetDevice(0));
    char buf[8];
    size_t got = 0;
    waiter_ret = acltdtDequeueData(shared_qid, buf, sizeof(buf), &got, NULL, 0, -1);
    return NULL;
}

static uint32_t u32_param(const acltdtQueueRoute *r, acltdtQueueRouteParamType t) {
    uint32_t v = 0xdead;
    size_t ret = 0;
    CHECK(acltdtGetQueueRouteParam(r, t, sizeof(v), &ret, &v));
    EXPECT(ret == sizeof(v));
    return v;
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));

    /* Attributes: defaults, set and get, checks. */
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    EXPECT(attr != NULL);
    uint32_t depth = 0;
    size_t ret = 0;
    CHECK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(depth), &ret, &depth));
    EXPECT(depth == 8 && ret == sizeof(uint32_t));
    const char *name = "npu_emu_q";
    CHECK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(name), &name));
    depth = 3;
    CHECK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(depth), &depth));
    char *got_name = NULL;
    CHECK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(got_name), &ret, &got_name));
    EXPECT(ret == sizeof(char *) && got_name != NULL && strcmp(got_name, "npu_emu_q") == 0);
    depth = 0;
    CHECK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(depth), &ret, &depth));
    EXPECT(depth == 3);
    uint64_t wide = 5;
    EXPECT_CODE(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(wide), &wide),
                ACL_ERROR_INVALID_PARAM, "len");
    EXPECT_CODE(acltdtSetQueueAttr(attr, (acltdtQueueAttrType)7, 4, &depth),
                ACL_ERROR_INVALID_PARAM, "type");
    EXPECT_CODE(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, NULL),
                ACL_ERROR_INVALID_PARAM, "param");
    char longname[200];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = 0;
    const char *ln = longname;
    EXPECT_CODE(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(ln), &ln),
                ACL_ERROR_INVALID_PARAM, "name");
    uint16_t small = 0;
    EXPECT_CODE(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(small), &ret, &small),
                ACL_ERROR_INVALID_PARAM, "len");
    EXPECT_CODE(acltdtDestroyQueueAttr(NULL), ACL_ERROR_INVALID_PARAM, "attr");

    /* A queue of depth 3. */
    uint32_t qid = 0xffffffffu, qid8 = 0xffffffffu;
    EXPECT_CODE(acltdtCreateQueue(attr, NULL), ACL_ERROR_INVALID_PARAM, "qid");
    CHECK(acltdtCreateQueue(attr, &qid));
    CHECK(acltdtCreateQueue(NULL, &qid8)); /* default attributes: depth 8 */
    EXPECT(qid != qid8);
    CHECK(acltdtDestroyQueueAttr(attr));

    int32_t msg[3][5];
    for (int m = 0; m < 3; m++) {
        for (int i = 0; i < 5; i++) msg[m][i] = m * 100 + i;
        char user[16];
        snprintf(user, sizeof(user), "user-%d", m);
        CHECK(acltdtEnqueueData(qid, msg[m], sizeof(msg[m]), user, sizeof(user), 0, 0));
    }
    EXPECT_CODE(acltdtEnqueueData(qid, msg[0], sizeof(msg[0]), NULL, 0, 0, 0),
                ACL_ERROR_RT_QUEUE_FULL, "full");
    EXPECT_CODE(acltdtEnqueueData(qid, msg[0], sizeof(msg[0]), NULL, 0, 30, 0),
                ACL_ERROR_RT_QUEUE_FULL, "full");
    EXPECT_CODE(acltdtEnqueueData(qid, NULL, 4, NULL, 0, 0, 0), ACL_ERROR_INVALID_PARAM, "data");
    EXPECT_CODE(acltdtEnqueueData(qid, msg[0], 0, NULL, 0, 0, 0), ACL_ERROR_INVALID_PARAM,
                "dataSize");
    char big_user[128] = {0};
    EXPECT_CODE(acltdtEnqueueData(qid8, msg[0], 4, big_user, sizeof(big_user), 0, 0),
                ACL_ERROR_INVALID_PARAM, "userDataSize");
    EXPECT_CODE(acltdtEnqueueData(qid, msg[0], 4, NULL, 0, -5, 0), ACL_ERROR_INVALID_PARAM,
                "timeout");
    EXPECT_CODE(acltdtEnqueueData(9999, msg[0], 4, NULL, 0, 0, 0), ACL_ERROR_INVALID_QUEUE_ID,
                "9999");

    /* Dequeue in order; a too small buffer leaves the message queued and says its size. */
    int32_t in[8];
    size_t got = 0;
    EXPECT_CODE(acltdtDequeueData(qid, in, 8, &got, NULL, 0, 0), ACL_ERROR_INVALID_PARAM,
                "dataSize");
    EXPECT(got == sizeof(msg[0]));
    for (int m = 0; m < 3; m++) {
        char user[16] = {0};
        memset(in, 0, sizeof(in));
        CHECK(acltdtDequeueData(qid, in, sizeof(in), &got, user, sizeof(user), 0));
        EXPECT(got == sizeof(msg[m]));
        EXPECT(memcmp(in, msg[m], sizeof(msg[m])) == 0);
        char want[16];
        snprintf(want, sizeof(want), "user-%d", m);
        EXPECT(strcmp(user, want) == 0);
    }
    EXPECT_CODE(acltdtDequeueData(qid, in, sizeof(in), &got, NULL, 0, 0),
                ACL_ERROR_RT_QUEUE_EMPTY, "empty");
    EXPECT_CODE(acltdtDequeueData(qid, in, sizeof(in), &got, NULL, 0, 25),
                ACL_ERROR_RT_QUEUE_EMPTY, "empty");
    EXPECT_CODE(acltdtDequeueData(qid, in, sizeof(in), NULL, NULL, 0, 0),
                ACL_ERROR_INVALID_PARAM, "retDataSize");

    /* Two threads through the queue of depth 3. */
    shared_qid = qid;
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, producer, NULL) == 0);
    for (int k = 0; k < N; k++) {
        uint32_t user = 0;
        CHECK(acltdtDequeueData(qid, in, sizeof(in), &got, &user, sizeof(user), -1));
        EXPECT(got == 4 * sizeof(int32_t));
        EXPECT(in[0] == k && in[1] == 2 * k && in[2] == 3 * k && in[3] == -k);
        EXPECT(user == 1000u + (uint32_t)k);
    }
    EXPECT(pthread_join(th, NULL) == 0);
    EXPECT(producer_ok);

    /* Device memory on both ends. */
    void *dev_in = NULL, *dev_out = NULL;
    float host[64], back[64];
    for (int i = 0; i < 64; i++) host[i] = (float)i * 0.5f;
    CHECK(aclrtMalloc(&dev_in, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dev_out, sizeof(host), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dev_in, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(acltdtEnqueueData(qid8, dev_in, sizeof(host), NULL, 0, -1, 0));
    CHECK(acltdtDequeueData(qid8, dev_out, sizeof(host), &got, NULL, 0, -1));
    EXPECT(got == sizeof(host));
    CHECK(aclrtMemcpy(back, sizeof(back), dev_out, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(back, host, sizeof(host)) == 0);

    /* Shared buffers: a buffer enqueued is read as data, data dequeued as a buffer. */
    acltdtBuf buf = NULL;
    EXPECT_CODE(acltdtAllocBuf(64, 5, &buf), ACL_ERROR_INVALID_PARAM, "type");
    CHECK(acltdtAllocBuf(64, ACL_TDT_NORMAL_MEM, &buf));
    void *data = NULL;
    size_t cap = 0;
    CHECK(acltdtGetBufData(buf, &data, &cap));
    EXPECT(data != NULL && cap == 64);
    CHECK(aclrtMemcpy(data, cap, host, 16, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(acltdtSetBufDataLen(buf, 16));
    EXPECT_CODE(acltdtSetBufDataLen(buf, 65), ACL_ERROR_INVALID_PARAM, "len");
    uint64_t tag = 0x1122334455667788ull;
    CHECK(acltdtSetBufUserData(buf, &tag, sizeof(tag), 0));
    CHECK(acltdtEnqueue(qid8, buf, 0));
    EXPECT_CODE(acltdtEnqueue(qid, buf, 0), ACL_ERROR_INVALID_PARAM, "already in queue");
    uint64_t tag_back = 0;
    CHECK(acltdtDequeueData(qid8, back, sizeof(back), &got, &tag_back, sizeof(tag_back), 0));
    EXPECT(got == 16 && memcmp(back, host, 16) == 0 && tag_back == tag);

    uint32_t ctx = 77;
    CHECK(acltdtEnqueueData(qid8, host, 40, &ctx, sizeof(ctx), 0, 0));
    acltdtBuf out = NULL;
    CHECK(acltdtDequeue(qid8, &out, 0));
    size_t len = 0;
    CHECK(acltdtGetBufDataLen(out, &len));
    EXPECT(len == 40);
    CHECK(acltdtGetBufData(out, &data, &cap));
    memset(back, 0, sizeof(back));
    CHECK(aclrtMemcpy(back, sizeof(back), data, 40, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(back, host, 40) == 0);
    uint32_t ctx_back = 0;
    CHECK(acltdtGetBufUserData(out, &ctx_back, sizeof(ctx_back), 0));
    EXPECT(ctx_back == 77);
    /* A buffer goes through as itself. */
    CHECK(acltdtEnqueue(qid8, out, -1));
    acltdtBuf same = NULL;
    CHECK(acltdtDequeue(qid8, &same, -1));
    EXPECT(same == out);
    CHECK(acltdtFreeBuf(out));
    EXPECT_CODE(acltdtFreeBuf(out), ACL_ERROR_INVALID_PARAM, "buf");
    EXPECT_CODE(acltdtEnqueue(qid8, NULL, 0), ACL_ERROR_INVALID_PARAM, "buf");
    EXPECT_CODE(acltdtDequeue(qid8, &out, 0), ACL_ERROR_RT_QUEUE_EMPTY, "empty");
    EXPECT_CODE(acltdtDequeue(qid8, NULL, 0), ACL_ERROR_INVALID_PARAM, "buf");

    /* Grant and attach within the process. */
    uint32_t perm = 0;
    CHECK(acltdtAttachQueue(qid, 0, &perm));
    EXPECT(perm == (ACL_TDT_QUEUE_PERMISSION_MANAGE | ACL_TDT_QUEUE_PERMISSION_DEQUEUE |
                    ACL_TDT_QUEUE_PERMISSION_ENQUEUE));
    CHECK(acltdtGrantQueue(qid, (int32_t)getpid(), ACL_TDT_QUEUE_PERMISSION_DEQUEUE, 0));
    EXPECT_CODE(acltdtGrantQueue(qid, (int32_t)getpid(), 8, 0), ACL_ERROR_INVALID_PARAM,
                "permission");
    EXPECT_CODE(acltdtGrantQueue(qid, (int32_t)getppid(), ACL_TDT_QUEUE_PERMISSION_ENQUEUE, 0),
                ACL_ERROR_FEATURE_UNSUPPORTED, "another process");
    EXPECT_CODE(acltdtAttachQueue(4242, 0, &perm), ACL_ERROR_INVALID_QUEUE_ID, "4242");
    EXPECT_CODE(acltdtAttachQueue(qid, 0, NULL), ACL_ERROR_INVALID_PARAM, "permission");

    /* Routes: qa -> qb forwards what arrives in qa. */
    uint32_t qa, qb;
    CHECK(acltdtCreateQueue(NULL, &qa));
    CHECK(acltdtCreateQueue(NULL, &qb));
    acltdtQueueRoute *route = acltdtCreateQueueRoute(qa, qb);
    EXPECT(route != NULL);
    EXPECT(u32_param(route, ACL_TDT_QUEUE_ROUTE_SRC_UINT32) == qa);
    EXPECT(u32_param(route, ACL_TDT_QUEUE_ROUTE_DST_UINT32) == qb);
    EXPECT((int32_t)u32_param(route, ACL_TDT_QUEUE_ROUTE_STATUS_INT32) ==
           ACL_TDT_QUEUE_ROUTE_UNBIND);
    uint32_t tmp;
    EXPECT_CODE(acltdtGetQueueRouteParam(route, (acltdtQueueRouteParamType)9, 4, &ret, &tmp),
                ACL_ERROR_INVALID_PARAM, "type");
    acltdtQueueRouteList *list = acltdtCreateQueueRouteList();
    EXPECT(list != NULL && acltdtGetQueueRouteNum(list) == 0);
    CHECK(acltdtAddQueueRoute(list, route));
    EXPECT(acltdtGetQueueRouteNum(list) == 1);
    EXPECT(acltdtGetQueueRouteNum(NULL) == 0);
    /* Something already waiting in qa moves when the route is bound. */
    int32_t early = 4711;
    CHECK(acltdtEnqueueData(qa, &early, sizeof(early), NULL, 0, 0, 0));
    CHECK(acltdtBindQueueRoutes(list));
    acltdtQueueRoute *seen = acltdtCreateQueueRoute(0, 0);
    CHECK(acltdtGetQueueRoute(list, 0, seen));
    EXPECT((int32_t)u32_param(seen, ACL_TDT_QUEUE_ROUTE_STATUS_INT32) == ACL_TDT_QUEUE_ROUTE_BIND);
    EXPECT(u32_param(seen, ACL_TDT_QUEUE_ROUTE_SRC_UINT32) == qa);
    EXPECT_CODE(acltdtGetQueueRoute(list, 5, seen), ACL_ERROR_INVALID_PARAM, "index");
    int32_t v = 0;
    CHECK(acltdtDequeueData(qb, &v, sizeof(v), &got, NULL, 0, 0));
    EXPECT(v == 4711);
    for (int32_t k = 0; k < 3; k++) CHECK(acltdtEnqueueData(qa, &k, sizeof(k), NULL, 0, 0, 0));
    EXPECT_CODE(acltdtDequeueData(qa, &v, sizeof(v), &got, NULL, 0, 0), ACL_ERROR_RT_QUEUE_EMPTY,
                "empty");
    for (int32_t k = 0; k < 3; k++) {
        CHECK(acltdtDequeueData(qb, &v, sizeof(v), &got, NULL, 0, 0));
        EXPECT(v == k);
    }
    /* Checks: bound twice, a cycle, destroying a bound queue. */
    EXPECT_CODE(acltdtBindQueueRoutes(list), ACL_ERROR_INVALID_PARAM, "already bound");
    acltdtQueueRoute *back_route = acltdtCreateQueueRoute(qb, qa);
    acltdtQueueRouteList *cyc = acltdtCreateQueueRouteList();
    CHECK(acltdtAddQueueRoute(cyc, back_route));
    EXPECT_CODE(acltdtBindQueueRoutes(cyc), ACL_ERROR_INVALID_PARAM, "cycle");
    acltdtQueueRoute *ghost = acltdtCreateQueueRoute(qa, 31337);
    acltdtQueueRouteList *gl = acltdtCreateQueueRouteList();
    CHECK(acltdtAddQueueRoute(gl, ghost));
    EXPECT_CODE(acltdtBindQueueRoutes(gl), ACL_ERROR_INVALID_QUEUE_ID, "31337");
    EXPECT_CODE(acltdtDestroyQueue(qa), ACL_ERROR_FAILURE, "unbound");

    /* Queries by source, destination, both, abnormal. */
    acltdtQueueRouteQueryInfo *qi = acltdtCreateQueueRouteQueryInfo();
    EXPECT(qi != NULL);
    acltdtQueueRouteList *res = acltdtCreateQueueRouteList();
    EXPECT_CODE(acltdtQueryQueueRoutes(qi, res), ACL_ERROR_INVALID_PARAM, "mode");
    acltdtQueueRouteQueryMode mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC;
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode),
                                       &mode));
    EXPECT_CODE(acltdtQueryQueueRoutes(qi, res), ACL_ERROR_INVALID_PARAM, "src");
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, sizeof(qa),
                                       &qa));
    CHECK(acltdtQueryQueueRoutes(qi, res));
    EXPECT(acltdtGetQueueRouteNum(res) == 1);
    CHECK(acltdtGetQueueRoute(res, 0, seen));
    EXPECT(u32_param(seen, ACL_TDT_QUEUE_ROUTE_SRC_UINT32) == qa);
    EXPECT(u32_param(seen, ACL_TDT_QUEUE_ROUTE_DST_UINT32) == qb);
    mode = ACL_TDT_QUEUE_ROUTE_QUERY_DST;
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode),
                                       &mode));
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, sizeof(qa),
                                       &qa));
    CHECK(acltdtQueryQueueRoutes(qi, res));
    EXPECT(acltdtGetQueueRouteNum(res) == 0); /* nothing goes to qa */
    mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST;
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode),
                                       &mode));
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, sizeof(qb),
                                       &qb));
    CHECK(acltdtQueryQueueRoutes(qi, res));
    EXPECT(acltdtGetQueueRouteNum(res) == 1);
    mode = ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL;
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode),
                                       &mode));
    CHECK(acltdtQueryQueueRoutes(qi, res));
    EXPECT(acltdtGetQueueRouteNum(res) == 0);
    int32_t bad_mode = 7;
    CHECK(acltdtSetQueueRouteQueryInfo(qi, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(bad_mode),
                                       &bad_mode));
    EXPECT_CODE(acltdtQueryQueueRoutes(qi, res), ACL_ERROR_INVALID_PARAM, "mode");
    EXPECT_CODE(acltdtSetQueueRouteQueryInfo(qi, (acltdtQueueRouteQueryInfoParamType)5, 4, &qa),
                ACL_ERROR_INVALID_PARAM, "type");

    /* Unbind: qa keeps what arrives. */
    CHECK(acltdtUnbindQueueRoutes(list));
    CHECK(acltdtGetQueueRoute(list, 0, seen));
    EXPECT((int32_t)u32_param(seen, ACL_TDT_QUEUE_ROUTE_STATUS_INT32) ==
           ACL_TDT_QUEUE_ROUTE_UNBIND);
    EXPECT_CODE(acltdtUnbindQueueRoutes(list), ACL_ERROR_INVALID_PARAM, "not bound");
    CHECK(acltdtEnqueueData(qa, &early, sizeof(early), NULL, 0, 0, 0));
    EXPECT_CODE(acltdtDequeueData(qb, &v, sizeof(v), &got, NULL, 0, 0), ACL_ERROR_RT_QUEUE_EMPTY,
                "empty");
    CHECK(acltdtDequeueData(qa, &v, sizeof(v), &got, NULL, 0, 0));
    EXPECT(v == 4711);

    CHECK(acltdtDestroyQueueRouteQueryInfo(qi));
    CHECK(acltdtDestroyQueueRouteList(res));
    CHECK(acltdtDestroyQueueRouteList(list));
    CHECK(acltdtDestroyQueueRouteList(cyc));
    CHECK(acltdtDestroyQueueRouteList(gl));
    CHECK(acltdtDestroyQueueRoute(route));
    CHECK(acltdtDestroyQueueRoute(seen));
    CHECK(acltdtDestroyQueueRoute(back_route));
    CHECK(acltdtDestroyQueueRoute(ghost));
    EXPECT_CODE(acltdtDestroyQueueRoute(route), ACL_ERROR_INVALID_PARAM, "route");
    CHECK(acltdtDestroyQueue(qa));
    CHECK(acltdtDestroyQueue(qb));

    /* Destroying a queue wakes a thread waiting on it. */
    shared_qid = qid8;
    EXPECT(pthread_create(&th, NULL, waiter, NULL) == 0);
    usleep(50 * 1000);
    CHECK(acltdtDestroyQueue(qid8));
    EXPECT(pthread_join(th, NULL) == 0);
    EXPECT(waiter_ret == ACL_ERROR_INVALID_QUEUE_ID);
    CHECK(acltdtDestroyQueue(qid));
    EXPECT_CODE(acltdtDestroyQueue(qid), ACL_ERROR_INVALID_QUEUE_ID, "qid");

    CHECK(aclrtFree(dev_in));
    CHECK(aclrtFree(dev_out));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_tdt_queue passed\n");
    return 0;
}
