/* Stream capture and replay (aclmdlRI*), written from the API reference. Two ranks run as two
 * threads, one device each. Each captures, on its own stream:
 *   H2D async copy (pinned host memory) -> kernel add_one -> HcclAllReduce -> D2H async copy
 * then replays the model three times with new input and checks every element, then once more
 * with aclmdlRIExecute. Mode "nocopy" keeps the copies outside the capture (synchronous, before
 * and after each replay). Other checks: capture codes (default stream, twice, end on a stream
 * that does not capture), a task group updated from another stream, fork/join through events
 * recorded in the capture, debug prints, names. */
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "aclrtlaunch_add_one.h"
#include "common.h"
#include "hccl/hccl.h"

static const uint32_t N = 1000;
static HcclRootInfo root;
static std::atomic<int> failures{0};
static bool with_copies = true;

#define HCHECK(call)                                                                          \
    do {                                                                                      \
        HcclResult r_ = (call);                                                               \
        if (r_ != HCCL_SUCCESS) {                                                             \
            fprintf(stderr, "FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)r_); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static void rank_main(int rank)
{
    CHECK(aclrtSetDevice(rank));
    HcclComm comm;
    HCHECK(HcclCommInitRootInfo(2, &root, rank, &comm));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    float *hin = nullptr, *hout = nullptr;
    CHECK(aclrtMallocHost((void **)&hin, N * sizeof(float)));
    CHECK(aclrtMallocHost((void **)&hout, N * sizeof(float)));
    void *a, *b, *c;
    CHECK(aclrtMalloc(&a, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&c, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));

    aclmdlRI model = nullptr;
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    aclmdlRI during = nullptr;
    CHECK(aclmdlRICaptureGetInfo(s, &st, &during));
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && during != nullptr);
    if (with_copies) {
        CHECK(aclrtMemcpyAsync(a, N * sizeof(float), hin, N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE, s));
    }
    CHECK(ACLRT_LAUNCH_KERNEL(add_one)(8, s, a, b, N));
    HCHECK(HcclAllReduce(b, c, N, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    if (with_copies) {
        CHECK(aclrtMemcpyAsync(hout, N * sizeof(float), c, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST, s));
    }
    CHECK(aclmdlRICaptureEnd(s, &model));
    EXPECT(model == during);
    CHECK(aclmdlRICaptureGetInfo(s, &st, nullptr));
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    if (rank == 0) {
        CHECK(aclmdlRISetName(model, "copy_kernel_allreduce"));
        CHECK(aclmdlRIDebugPrint(model));
    }

    /* Nothing ran during the capture. */
    for (int it = 0; it < 4; it++) {
        for (uint32_t i = 0; i < N; i++) {
            hin[i] = (float)(rank * 1000 + it * 10 + (int)(i % 7));
            hout[i] = -1.0f;
        }
        if (!with_copies) {
            CHECK(aclrtMemcpy(a, N * sizeof(float), hin, N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE));
        }
        if (it < 3) {
            CHECK(aclmdlRIExecuteAsync(model, s));
            CHECK(aclrtSynchronizeStream(s));
        } else {
            CHECK(aclmdlRIExecute(model, -1));
        }
        if (!with_copies) {
            CHECK(aclrtMemcpy(hout, N * sizeof(float), c, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
        }
        for (uint32_t i = 0; i < N; i++) {
            /* sum over ranks r of (r*1000 + it*10 + i%7 + 1) */
            float want = (float)(0 * 1000 + 1 * 1000 + 2 * (it * 10 + (int)(i % 7) + 1));
            if (hout[i] != want) {
                fprintf(stderr, "rank %d replay %d: out[%u] = %f, expected %f\n", rank, it, i, hout[i], want);
                failures++;
                break;
            }
        }
    }
    CHECK(aclmdlRIDestroy(model));
    HCHECK(HcclCommDestroy(comm));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtFree(c));
    CHECK(aclrtFreeHost(hin));
    CHECK(aclrtFreeHost(hout));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(rank));
}

/* Codes, task groups, fork/join, prints: one thread, device 0. */
static void single_checks()
{
    CHECK(aclrtSetDevice(0));
    aclrtStream s, s2, up;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateStream(&s2));
    CHECK(aclrtCreateStream(&up));
    aclmdlRI m = nullptr;
    EXPECT_CODE(aclmdlRICaptureBegin(nullptr, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_INVALID_PARAM, "stream");
    aclrtStream def = nullptr;
    CHECK(aclrtCtxGetCurrentDefaultStream(&def));
    EXPECT_CODE(aclmdlRICaptureBegin(def, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "default stream");
    EXPECT_CODE(aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)7), ACL_ERROR_RT_PARAM_INVALID, "mode");
    EXPECT_CODE(aclmdlRICaptureEnd(s, &m), ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not capturing");

    void *a, *b;
    CHECK(aclrtMalloc(&a, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<float> h(N, 5.0f);
    CHECK(aclrtMemcpy(a, N * sizeof(float), h.data(), N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE));

    /* Fork/join: s records e1, s2 waits (joins), runs a kernel, records e2, s waits. */
    aclrtEvent e1, e2, plain;
    CHECK(aclrtCreateEventExWithFlag(&e1, ACL_EVENT_SYNC));
    CHECK(aclrtCreateEventExWithFlag(&e2, ACL_EVENT_SYNC));
    CHECK(aclrtCreateEvent(&plain));
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT_CODE(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_STREAM_CAPTURED, "already");
    EXPECT_CODE(aclrtMemcpy(b, 4, h.data(), 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                "aclmdlRICaptureThreadExchangeMode");
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    CHECK(aclmdlRICaptureThreadExchangeMode(&mode));
    EXPECT(mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
    CHECK(aclrtMemcpy(b, 4, h.data(), 4, ACL_MEMCPY_HOST_TO_DEVICE)); /* relaxed: runs now */
    CHECK(aclmdlRICaptureThreadExchangeMode(&mode));
    EXPECT_CODE(aclrtRecordEvent(plain, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtCreateEventExWithFlag");
    CHECK(aclrtRecordEvent(e1, s));
    CHECK(aclrtStreamWaitEvent(s2, e1)); /* s2 joins the capture */
    aclmdlRICaptureStatus st;
    CHECK(aclmdlRICaptureGetInfo(s2, &st, nullptr));
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    CHECK(ACLRT_LAUNCH_KERNEL(add_one)(4, s2, a, b, N));
    EXPECT_CODE(aclmdlRICaptureEnd(s2, &m), ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, "did not begin");
    CHECK(aclrtRecordEvent(e2, s2));
    CHECK(aclrtStreamWaitEvent(s, e2));
    CHECK(aclmdlRICaptureTaskGrpBegin(s));
    CHECK(ACLRT_LAUNCH_KERNEL(add_one)(4, s, b, a, N)); /* a = b + 1 */
    aclrtTaskGrp grp = nullptr;
    CHECK(aclmdlRICaptureTaskGrpEnd(s, &grp));
    CHECK(aclmdlRICaptureEnd(s, &m));
    CHECK(aclmdlRICaptureGetInfo(s2, &st, nullptr));
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    CHECK(aclmdlRIDebugJsonPrint(m, "model.json", 0));
    char name[8];
    CHECK(aclmdlRISetName(m, "fork"));
    CHECK(aclmdlRIGetName(m, sizeof(name), name));
    EXPECT(strcmp(name, "fork") == 0);
    EXPECT_CODE(aclmdlRIGetName(m, 3, name), ACL_ERROR_RT_PARAM_INVALID, "maxLen");

    /* a = 5 -> b = 6 -> a = 7 -> b = 8 ... */
    for (int it = 0; it < 3; it++) {
        CHECK(aclmdlRIExecuteAsync(m, s));
    }
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(h.data(), N * sizeof(float), a, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(h[0] == 11.0f && h[N - 1] == 11.0f);

    /* Update the group from another stream: a = b + 1 becomes b = a + 1 (same kind of task). */
    CHECK(aclmdlRICaptureTaskUpdateBegin(up, grp));
    CHECK(ACLRT_LAUNCH_KERNEL(add_one)(4, up, a, b, N));
    CHECK(aclmdlRICaptureTaskUpdateEnd(up));
    CHECK(aclrtSynchronizeStream(up));
    CHECK(aclmdlRIExecuteAsync(m, s)); /* b = a + 1 = 12, then b = a + 1 = 12 */
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(h.data(), N * sizeof(float), b, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(h[3] == 12.0f);
    /* An update with another number of tasks is refused. */
    CHECK(aclmdlRICaptureTaskUpdateBegin(up, grp));
    EXPECT_CODE(aclmdlRICaptureTaskUpdateEnd(up), ACL_ERROR_RT_PARAM_INVALID, "same tasks");
    EXPECT_CODE(aclmdlRICaptureTaskUpdateEnd(up), ACL_ERROR_STREAM_TASK_GROUP_STATUS, "not in a task update");

    /* An unjoined stream fails the capture end. */
    aclmdlRI m2 = nullptr;
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    CHECK(aclrtRecordEvent(e1, s));
    CHECK(aclrtStreamWaitEvent(s2, e1));
    CHECK(ACLRT_LAUNCH_KERNEL(add_one)(4, s2, a, b, N));
    EXPECT_CODE(aclmdlRICaptureEnd(s, &m2), ACL_ERROR_RT_STREAM_UNJOINED, "not joined back");
    CHECK(aclmdlRICaptureGetInfo(s2, &st, nullptr));
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE);

    CHECK(aclmdlRIDestroy(m));
    EXPECT_CODE(aclmdlRIDestroy(m), ACL_ERROR_INVALID_PARAM, "destroyed");
    CHECK(aclrtDestroyEvent(e1));
    CHECK(aclrtDestroyEvent(e2));
    CHECK(aclrtDestroyEvent(plain));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtDestroyStream(s2));
    CHECK(aclrtDestroyStream(up));
    CHECK(aclrtResetDevice(0));
}

int main(int argc, char **argv)
{
    with_copies = !(argc > 1 && std::string(argv[1]) == "nocopy");
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    HCHECK(HcclGetRootInfo(&root));
    std::thread t0(rank_main, 0), t1(rank_main, 1);
    t0.join();
    t1.join();
    EXPECT(failures == 0);
    if (with_copies) {
        single_checks();
    }
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_capture passed\n");
    return 0;
}
