/* The two-phase protocol of the engine operators: bad input gets aclnn's codes with a
 * message naming the operator and the argument; executors are single use unless made
 * repeatable; operators run in stream order with copies, events and other streams; a
 * failure inside a task surfaces at the next synchronisation. */
#include "ops_ref.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_sqrt.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_mm.h"
#include "aclnnop/aclnn_foreach_add_list_v2.h"

#define EXPECT_NN(call, code, sub) EXPECT_CODE(static_cast<aclError>(call), code, sub)

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s, s2;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateStream(&s2));
    Dev a = make({2, 3}, ACL_FLOAT, {1, 2, 3, 4, 5, 6}), b = make({2, 3}, ACL_FLOAT, {10, 20, 30, 40, 50, 60});
    Dev o = make({2, 3}, ACL_FLOAT, {}), wrong = make({3, 2}, ACL_FLOAT, {}), c = make({4}, ACL_FLOAT, {});
    Dev ints = make({2, 3}, ACL_INT32, {1, 2, 3, 4, 5, 6});
    float one = 1;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;

    /* NULL arguments: 161001 naming the argument */
    EXPECT_NN(aclnnAddGetWorkspaceSize(nullptr, b.t, alpha, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR, "aclnnAddGetWorkspaceSize: self is nullptr");
    EXPECT_NN(aclnnAddGetWorkspaceSize(a.t, b.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR, "alpha is nullptr");
    EXPECT_NN(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, o.t, nullptr, &ex), ACLNN_ERR_PARAM_NULLPTR, "workspaceSize is nullptr");
    EXPECT_NN(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, o.t, &ws, nullptr), ACLNN_ERR_PARAM_NULLPTR, "executor is nullptr");
    EXPECT_NN(aclnnAdd(nullptr, 0, nullptr, s), ACLNN_ERR_PARAM_NULLPTR, "aclnnAdd: executor is nullptr");
    /* wrong dtypes, shapes that do not broadcast, a wrong out shape, a float alpha for ints */
    EXPECT_NN(aclnnMseLossGetWorkspaceSize(ints.t, a.t, 1, c.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "aclnnMseLossGetWorkspaceSize: self has data type ACL_INT32, which is not supported");
    EXPECT_NN(aclnnAddGetWorkspaceSize(a.t, wrong.t, alpha, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "cannot broadcast");
    EXPECT_NN(aclnnMulGetWorkspaceSize(a.t, b.t, wrong.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "out has shape [3, 2], expected [2, 3]");
    EXPECT_NN(aclnnAddGetWorkspaceSize(ints.t, ints.t, alpha, ints.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "alpha data type ACL_FLOAT cannot be cast to the computation type ACL_INT32");
    EXPECT_NN(aclnnSqrtGetWorkspaceSize(a.t, ints.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "cannot be cast to the out data type ACL_INT32");
    EXPECT_NN(aclnnMmGetWorkspaceSize(a.t, b.t, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "cannot be multiplied (3 != 2)");
    EXPECT_NN(aclnnMmGetWorkspaceSize(a.t, wrong.t, o.t, 7, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "cubeMathType 7 is not supported");
    int64_t d9 = 9;
    aclIntArray *dims = aclCreateIntArray(&d9, 1);
    EXPECT_NN(aclnnReduceSumGetWorkspaceSize(a.t, dims, false, ACL_FLOAT, c.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "dim 9 is out of range [-2, 1]");
    EXPECT_NN(aclnnMseLossGetWorkspaceSize(a.t, b.t, 7, c.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "reduction 7 is not supported");
    /* a destroyed tensor */
    Dev gone = make({2, 3}, ACL_FLOAT, {});
    CHECK(static_cast<aclError>(aclDestroyTensor(gone.t)));
    EXPECT_NN(aclnnAddGetWorkspaceSize(a.t, gone.t, alpha, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "aclnnAddGetWorkspaceSize: other = 0x");
    EXPECT_NN(aclnnAddGetWorkspaceSize(a.t, gone.t, alpha, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "is not a live aclTensor");
    gone.t = nullptr;
    /* an executor is used once */
    NN(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, o.t, &ws, &ex));
    EXPECT(ws == 0);
    NN(aclnnAdd(nullptr, ws, ex, s));
    EXPECT_NN(aclnnAdd(nullptr, ws, ex, s), ACLNN_ERR_PARAM_INVALID, "is not a live aclOpExecutor");
    CHECK(aclrtSynchronizeStream(s));
    compare("Add", read(o), {11, 22, 33, 44, 55, 66}, 0);
    /* workspace: NULL with a size is 161001 (and consumes the executor) */
    NN(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, o.t, &ws, &ex));
    EXPECT_NN(aclnnAdd(nullptr, 64, ex, s), ACLNN_ERR_PARAM_NULLPTR, "workspace is nullptr but workspaceSize is 64");
    EXPECT_NN(aclnnAdd(nullptr, 0, ex, s), ACLNN_ERR_PARAM_INVALID, "is not a live aclOpExecutor");
    /* repeatable: runs twice, retargeted by aclSetInputTensorAddr, then destroyed */
    NN(aclnnMulGetWorkspaceSize(a.t, b.t, o.t, &ws, &ex));
    NN(aclSetAclOpExecutorRepeatable(ex));
    NN(aclnnMul(nullptr, 0, ex, s));
    CHECK(aclrtSynchronizeStream(s));
    compare("Mul repeatable (1)", read(o), {10, 40, 90, 160, 250, 360}, 0);
    NN(aclSetInputTensorAddr(ex, 1, b.t, a.mem));
    NN(aclnnMul(nullptr, 0, ex, s));
    CHECK(aclrtSynchronizeStream(s));
    compare("Mul repeatable, input 1 retargeted to a", read(o), {1, 4, 9, 16, 25, 36}, 0);
    NN(aclDestroyAclOpExecutor(ex));
    EXPECT_NN(aclnnMul(nullptr, 0, ex, s), ACLNN_ERR_PARAM_INVALID, "is not a live aclOpExecutor");
    /* aclSetInputTensorAddr also moved tensor b to a's memory (as CANN's does): move it back */
    NN(aclSetRawTensorAddr(b.t, b.mem));
    /* memory that is not a device allocation is refused when the operator is launched */
    {
        static float host[6];
        int64_t sh[] = {2, 3}, st[] = {3, 1};
        aclTensor *h = aclCreateTensor(sh, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, sh, 2, host);
        NN(aclnnMulGetWorkspaceSize(h, b.t, o.t, &ws, &ex));
        EXPECT_NN(aclnnMul(nullptr, 0, ex, s), ACLNN_ERR_PARAM_INVALID, "aclnnMul: input self (tensor 0) data");
        aclDestroyTensor(h);
    }
    /* stream order: an operator after an async copy on the same stream reads the copy */
    {
        static float src[6] = {7, 7, 7, 7, 7, 7};
        CHECK(aclrtMemsetAsync(a.mem, a.bytes, 0, a.bytes, s));
        CHECK(aclrtMemcpyAsync(a.mem, a.bytes, src, sizeof(src), ACL_MEMCPY_HOST_TO_DEVICE, s));
        NN(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, o.t, &ws, &ex));
        NN(aclnnAdd(nullptr, 0, ex, s));
        CHECK(aclrtSynchronizeStream(s));
        compare("Add after MemcpyAsync on the stream", read(o), {17, 27, 37, 47, 57, 67}, 0);
        /* another stream waits on an event recorded after an operator */
        aclrtEvent ev;
        CHECK(aclrtCreateEvent(&ev));
        NN(aclnnMulGetWorkspaceSize(a.t, b.t, o.t, &ws, &ex));
        NN(aclnnMul(nullptr, 0, ex, s));
        CHECK(aclrtRecordEvent(ev, s));
        CHECK(aclrtStreamWaitEvent(s2, ev));
        Dev o2 = make({2, 3}, ACL_FLOAT, {});
        NN(aclnnAddGetWorkspaceSize(o.t, o.t, alpha, o2.t, &ws, &ex));
        NN(aclnnAdd(nullptr, 0, ex, s2));
        CHECK(aclrtSynchronizeStream(s2));
        compare("Add on stream 2 after an event of stream 1", read(o2), {140, 280, 420, 560, 700, 840}, 0);
        CHECK(aclrtDestroyEvent(ev));
        release(o2);
    }
    /* a foreach list of mismatched lengths */
    {
        const aclTensor *l1[] = {a.t, b.t}, *l2[] = {o.t};
        /* lists own their tensors: use fresh handles over the same memory */
        Dev a2 = make({2, 3}, ACL_FLOAT, {}), b2 = make({2, 3}, ACL_FLOAT, {}), o3 = make({2, 3}, ACL_FLOAT, {});
        l1[0] = a2.t;
        l1[1] = b2.t;
        l2[0] = o3.t;
        aclTensorList *x1 = aclCreateTensorList(l1, 2), *x2 = aclCreateTensorList(l2, 1);
        EXPECT_NN(aclnnForeachAddListV2GetWorkspaceSize(x1, x2, alpha, x1, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "aclnnForeachAddListV2GetWorkspaceSize: input list 2 has 1 tensors, the first has 2");
        aclDestroyTensorList(x1);
        aclDestroyTensorList(x2);
    }
    /* a repeatable Foreach executor retargeted tensor by tensor in its lists */
    {
        Dev p0 = make({3}, ACL_FLOAT, {1, 2, 3}), p1 = make({2}, ACL_FLOAT, {10, 20});
        Dev g0 = make({3}, ACL_FLOAT, {1, 1, 1}), g1 = make({2}, ACL_FLOAT, {1, 1});
        Dev q1 = make({2}, ACL_FLOAT, {100, 200});
        const aclTensor *ps[] = {p0.t, p1.t}, *gs[] = {g0.t, g1.t};
        aclTensorList *lp = aclCreateTensorList(ps, 2), *lg = aclCreateTensorList(gs, 2);
        NN(aclnnForeachAddListV2GetWorkspaceSize(lp, lg, alpha, lp, &ws, &ex));
        NN(aclSetAclOpExecutorRepeatable(ex));
        NN(aclnnForeachAddListV2(nullptr, 0, ex, s));
        CHECK(aclrtSynchronizeStream(s));
        compare("ForeachAddListV2 repeatable (1)", read(p1), {11, 21}, 0);
        /* input list 0 (x1), tensor 1 -> q1's memory; output list 0 tensor 1 likewise */
        NN(aclSetDynamicInputTensorAddr(ex, 0, 1, lp, q1.mem));
        NN(aclSetDynamicOutputTensorAddr(ex, 0, 1, lp, q1.mem));
        NN(aclnnForeachAddListV2(nullptr, 0, ex, s));
        CHECK(aclrtSynchronizeStream(s));
        compare("ForeachAddListV2 retargeted list tensor", read(q1), {101, 201}, 0);
        compare("ForeachAddListV2 retargeted: tensor 0 ran again", read(p0), {3, 4, 5}, 0);
        EXPECT_NN(aclSetDynamicInputTensorAddr(ex, 0, 5, lp, q1.mem), ACLNN_ERR_PARAM_INVALID, "relativeIndex 5 is out of the tensor list's size 2");
        EXPECT_NN(aclSetDynamicInputTensorAddr(ex, 7, 0, lp, q1.mem), ACLNN_ERR_PARAM_INVALID, "irIndex 7 is out of range: the aclnnForeachAddListV2 executor has 2 input argument(s)");
        NN(aclDestroyAclOpExecutor(ex));
        /* a single-tensor argument is not a list */
        NN(aclnnAddGetWorkspaceSize(a.t, b.t, alpha, o.t, &ws, &ex));
        EXPECT_NN(aclSetDynamicInputTensorAddr(ex, 0, 0, lp, q1.mem), ACLNN_ERR_PARAM_INVALID, "irIndex 0 of the aclnnAdd executor is a single tensor, not a tensor list");
        NN(aclDestroyAclOpExecutor(ex));
        aclDestroyTensorList(lp);
        aclDestroyTensorList(lg);
        for (Dev *d : {&p0, &p1, &g0, &g1}) {
            aclrtFree(d->mem);
            d->t = nullptr;
        }
        release(q1);
    }
    /* a task failure (target out of range) surfaces at synchronize with the operator's name */
    {
        Dev logp = make({2, 3}, ACL_FLOAT, {-1, -2, -3, -1, -2, -3}), tg = make({2}, ACL_INT64, {0, 5});
        Dev out = make({}, ACL_FLOAT, {}), tw = make({}, ACL_FLOAT, {});
        NN(aclnnNLLLossGetWorkspaceSize(logp.t, tg.t, nullptr, 1, -100, out.t, tw.t, &ws, &ex));
        NN(aclnnNLLLoss(nullptr, 0, ex, s));
        aclError e = aclrtSynchronizeStream(s);
        const char *m = aclGetRecentErrMsg();
        printf("synchronize after a failing NLLLoss: %d: %s\n", static_cast<int>(e), m ? m : "");
        EXPECT(e != ACL_SUCCESS);
        EXPECT(m != nullptr && strstr(m, "aclnnNLLLoss: target 5 at position 1 is out of bounds [0, 3)") != nullptr);
        release(logp);
        release(tg);
        release(out);
        release(tw);
    }
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
