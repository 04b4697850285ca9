/* The operators torch_npu calls for common PyTorch functions beyond the core families,
 * against host references (float64): Repeat, RepeatInterleave (Int/IntWithDim/WithDim/
 * Tensor), ReduceNansum, Aminmax / AminmaxDim / AminmaxAll, LogSumExp, Norm, Cumprod,
 * IsClose, Linspace, OneHot, Mv, XLogYTensor / XLogYScalarSelf, NLLLoss2d (+Backward),
 * GroupNorm (+Backward), Trace, ReflectionPad1d/2d, ReplicationPad1d/2d; each with at least one argument error.
 * Tolerances: data movement, selection and integer results exactly; float32 reductions and
 * products to 1e-5 relative (sums of at most 60 float32 terms, accumulated in float64 and
 * rounded once); group norm to 1e-4. Inputs include a transposed and a strided view. */
#include <algorithm>
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_repeat.h"
#include "aclnnop/aclnn_repeat_interleave.h"
#include "aclnnop/aclnn_reduce_nansum.h"
#include "aclnnop/aclnn_aminmax.h"
#include "aclnnop/aclnn_aminmax_all.h"
#include "aclnnop/aclnn_aminmax_dim.h"
#include "aclnnop/aclnn_logsumexp.h"
#include "aclnnop/aclnn_norm.h"
#include "aclnnop/aclnn_cumprod.h"
#include "aclnnop/aclnn_isclose.h"
#include "aclnnop/aclnn_linspace.h"
#include "aclnnop/aclnn_one_hot.h"
#include "aclnnop/aclnn_mv.h"
#include "aclnnop/aclnn_trace.h"
#include "aclnnop/aclnn_x_log_y_tensor.h"
#include "aclnnop/aclnn_x_log_y_scalar_self.h"
#include "aclnnop/aclnn_nll_loss2d.h"
#include "aclnnop/aclnn_nll_loss2d_backward.h"
#include "aclnnop/aclnn_group_norm.h"
#include "aclnnop/aclnn_group_norm_backward.h"
#include "aclnnop/aclnn_reflection_pad1d.h"
#include "aclnnop/aclnn_reflection_pad2d.h"
#include "aclnnop/aclnn_replication_pad1d.h"
#include "aclnnop/aclnn_replication_pad2d.h"

static aclrtStream S;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, test_msg());
    }
}

static aclIntArray *ia(std::vector<int64_t> v) { return aclCreateIntArray(v.data(), v.size()); }

static void shapes() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* Repeat of a transposed [3, 2] view by (2, 2, 1) -> [2, 6, 2] */
    std::vector<double> X = {1, 2, 3, 4, 5, 6};
    Dev x = make({3, 2}, ACL_FLOAT, X, TRANSPOSED);
    Dev o = make({2, 6, 2}, ACL_FLOAT, {0});
    aclIntArray *r = ia({2, 2, 1});
    RUN(S, aclnnRepeat, x.t, r, o.t);
    std::vector<double> want;
    for (int a = 0; a < 2; a++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 2; j++) want.push_back(X[(i % 3) * 2 + j]);
    compare("Repeat (2, 2, 1) of a transposed [3, 2]", read(o), want, 0);
    aclIntArray *short_r = ia({2});
    expect_code("Repeat with fewer repeats than dimensions", aclnnRepeatGetWorkspaceSize(x.t, short_r, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Repeat null repeats", aclnnRepeatGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    /* RepeatInterleave: int along dim 0, tensor counts along dim 0, flattened, Tensor */
    Dev ri = make({6, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnRepeatInterleaveIntWithDim, x.t, 2, 0, 6, ri.t);
    want.clear();
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 2; j++) want.push_back(X[i * 2 + j]);
    compare("RepeatInterleaveIntWithDim 2 along dim 0", read(ri), want, 0);
    Dev cnt = make({3}, ACL_INT64, {1, 0, 3}), rt = make({4, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnRepeatInterleaveWithDim, x.t, cnt.t, 0, 4, rt.t);
    compare("RepeatInterleaveWithDim counts (1, 0, 3)", read(rt), {1, 2, 5, 6, 5, 6, 5, 6}, 0);
    Dev flat = make({12}, ACL_FLOAT, {0});
    RUN(S, aclnnRepeatInterleaveInt, x.t, 2, 12, flat.t);
    compare("RepeatInterleaveInt flattened", read(flat), {1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}, 0);
    Dev idx = make({4}, ACL_INT64, {0});
    RUN(S, aclnnRepeatInterleaveTensor, cnt.t, 4, idx.t);
    compare("RepeatInterleaveTensor (1, 0, 3)", read(idx), {0, 2, 2, 2}, 0);
    expect_code("RepeatInterleaveIntWithDim wrong outputSize",
                aclnnRepeatInterleaveIntWithDimGetWorkspaceSize(x.t, 2, 0, 5, ri.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("RepeatInterleaveIntWithDim negative repeats",
                aclnnRepeatInterleaveIntWithDimGetWorkspaceSize(x.t, -1, 0, 6, ri.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* Linspace: float32 from -1 to 2 in 7 steps (PyTorch's two-sided formula), int32 */
    Dev ls = make({7}, ACL_FLOAT, {0}), li = make({5}, ACL_INT32, {0});
    float s0 = -1, s1 = 2;
    aclScalar *a0 = aclCreateScalar(&s0, ACL_FLOAT), *a1 = aclCreateScalar(&s1, ACL_FLOAT);
    RUN(S, aclnnLinspace, a0, a1, 7, ls.t);
    want.clear();
    float step = (s1 - s0) / 6.0f;
    for (int i = 0; i < 7; i++) want.push_back(i < 3 ? s0 + step * static_cast<float>(i) : s1 - step * static_cast<float>(6 - i));
    compare("Linspace float32 -1..2 in 7", read(ls), want, 0);
    RUN(S, aclnnLinspace, a0, a1, 5, li.t);
    compare("Linspace int32 -1..2 in 5", read(li), {-1, 0, 0, 1, 2}, 0);
    expect_code("Linspace steps and out disagree", aclnnLinspaceGetWorkspaceSize(a0, a1, 6, ls.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* OneHot of int64 [2, 2] with depth 4 (an index out of range gives a row of off) */
    Dev oh = make({2, 2}, ACL_INT64, {0, 3, 9, 1}), on = make({1}, ACL_INT64, {5}), off = make({1}, ACL_INT64, {-1});
    Dev ohx = make({2, 2, 4}, ACL_INT64, {0});
    RUN(S, aclnnOneHot, oh.t, 4, on.t, off.t, -1, ohx.t);
    compare("OneHot depth 4", read(ohx), {5, -1, -1, -1, -1, -1, -1, 5, -1, -1, -1, -1, -1, 5, -1, -1}, 0);
    Dev ohf = make({2, 2, 4}, ACL_FLOAT, {0});
    expect_code("OneHot onValue of another dtype than out",
                aclnnOneHotGetWorkspaceSize(oh.t, 4, on.t, off.t, -1, ohf.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* ReflectionPad1d (2, 1) and ReplicationPad2d (1, 0, 0, 1) of a [1, 2, 3] */
    Dev px = make({1, 2, 3}, ACL_FLOAT, {1, 2, 3, 4, 5, 6}, STRIDED), p1 = make({1, 2, 6}, ACL_FLOAT, {0});
    aclIntArray *pr = ia({2, 1});
    RUN(S, aclnnReflectionPad1d, px.t, pr, p1.t);
    compare("ReflectionPad1d (2, 1)", read(p1), {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}, 0);
    Dev p2 = make({1, 3, 4}, ACL_FLOAT, {0});
    aclIntArray *pq = ia({1, 0, 0, 1});
    RUN(S, aclnnReplicationPad2d, px.t, pq, p2.t);
    compare("ReplicationPad2d (1, 0, 0, 1)", read(p2), {1, 1, 2, 3, 4, 4, 5, 6, 4, 4, 5, 6}, 0);
    Dev p3 = make({1, 2, 9}, ACL_FLOAT, {0});
    aclIntArray *big = ia({3, 3});
    expect_code("ReflectionPad1d padding as large as the dimension",
                aclnnReflectionPad1dGetWorkspaceSize(px.t, big, p3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev p4 = make({1, 2, 4}, ACL_FLOAT, {0});
    RUN(S, aclnnReplicationPad1d, px.t, ia({0, 1}), p4.t);
    compare("ReplicationPad1d (0, 1)", read(p4), {1, 2, 3, 3, 4, 5, 6, 6}, 0);
    Dev p5 = make({1, 4, 5}, ACL_FLOAT, {0});
    RUN(S, aclnnReflectionPad2d, px.t, ia({1, 1, 1, 1}), p5.t);
    compare("ReflectionPad2d (1, 1, 1, 1)", read(p5), {5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5, 2, 1, 2, 3, 2}, 0);
    for (aclIntArray *arr : {pr, pq, big}) aclDestroyIntArray(arr);
    for (Dev *d : {&px, &p1, &p2, &p3, &p4, &p5}) release(*d);
    aclDestroyIntArray(r);
    aclDestroyIntArray(short_r);
    aclDestroyScalar(a0);
    aclDestroyScalar(a1);
    for (Dev *d : {&x, &o, &ri, &cnt, &rt, &flat, &idx, &ls, &li, &oh, &on, &off, &ohx, &ohf}) release(*d);
    printf("ok shapes\n");
}

static void reductions() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* a strided [3, 4, 5] float32 view with two NaNs */
    std::vector<double> X = values(60, ACL_FLOAT, 7);
    X[5] = NAN;
    X[33] = NAN;
    Dev x = make({3, 4, 5}, ACL_FLOAT, X, STRIDED);
    Dev ns = make({3, 5}, ACL_FLOAT, {0});
    aclIntArray *d1 = ia({1});
    RUN(S, aclnnReduceNansum, x.t, d1, false, ACL_FLOAT, ns.t);
    std::vector<double> want(15, 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) {
                double v = X[(i * 4 + j) * 5 + k];
                if (!std::isnan(v)) want[i * 5 + k] += v;
            }
    compare("ReduceNansum dim 1", read(ns), want, 1e-5);
    expect_code("ReduceNansum dtype differs from out", aclnnReduceNansumGetWorkspaceSize(x.t, d1, false, ACL_FLOAT16, ns.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* Aminmax over dims (0, 2) keepDim on an int32 tensor; AminmaxDim; AminmaxAll */
    std::vector<double> I = values(60, ACL_INT32, 3);
    Dev xi = make({3, 4, 5}, ACL_INT32, I, TRANSPOSED);
    Dev mn = make({1, 4, 1}, ACL_INT32, {0}), mx = make({1, 4, 1}, ACL_INT32, {0});
    aclIntArray *d02 = ia({0, 2});
    RUN(S, aclnnAminmax, xi.t, d02, true, mn.t, mx.t);
    std::vector<double> wmn(4, 1e9), wmx(4, -1e9);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) {
                double v = I[(i * 4 + j) * 5 + k];
                wmn[j] = std::min(wmn[j], v);
                wmx[j] = std::max(wmx[j], v);
            }
    compare("Aminmax dims (0, 2) min", read(mn), wmn, 0);
    compare("Aminmax dims (0, 2) max", read(mx), wmx, 0);
    Dev dmn = make({3, 5}, ACL_INT32, {0}), dmx = make({3, 5}, ACL_INT32, {0});
    RUN(S, aclnnAminmaxDim, xi.t, -2, false, dmn.t, dmx.t);
    std::vector<double> emn(15, 1e9), emx(15, -1e9);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) {
                double v = I[(i * 4 + j) * 5 + k];
                emn[i * 5 + k] = std::min(emn[i * 5 + k], v);
                emx[i * 5 + k] = std::max(emx[i * 5 + k], v);
            }
    compare("AminmaxDim -2 min", read(dmn), emn, 0);
    compare("AminmaxDim -2 max", read(dmx), emx, 0);
    Dev amn = make({}, ACL_INT32, {0}), amx = make({}, ACL_INT32, {0});
    RUN(S, aclnnAminmaxAll, xi.t, amn.t, amx.t);
    compare("AminmaxAll", {read(amn)[0], read(amx)[0]}, {*std::min_element(I.begin(), I.end()), *std::max_element(I.begin(), I.end())}, 0);
    Dev badmx = make({1, 4, 1}, ACL_FLOAT, {0});
    expect_code("Aminmax maxOut of another dtype", aclnnAminmaxGetWorkspaceSize(xi.t, d02, true, mn.t, badmx.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* LogSumExp and Norm (p = 3 and inf) over dim 1 of a [4, 6] float32 */
    std::vector<double> Y = values(24, ACL_FLOAT, 11);
    Dev y = make({4, 6}, ACL_FLOAT, Y);
    Dev lse = make({4}, ACL_FLOAT, {0}), n3 = make({4}, ACL_FLOAT, {0}), ninf = make({4}, ACL_FLOAT, {0});
    RUN(S, aclnnLogSumExp, y.t, d1, false, lse.t);
    float p3 = 3, pinf = INFINITY;
    aclScalar *s3 = aclCreateScalar(&p3, ACL_FLOAT), *sinf = aclCreateScalar(&pinf, ACL_FLOAT);
    RUN(S, aclnnNorm, y.t, s3, d1, false, n3.t);
    RUN(S, aclnnNorm, y.t, sinf, d1, false, ninf.t);
    std::vector<double> wl, w3, wi;
    for (int i = 0; i < 4; i++) {
        double m = -INFINITY, s = 0, c = 0, a = 0;
        for (int j = 0; j < 6; j++) m = std::max(m, Y[i * 6 + j]);
        for (int j = 0; j < 6; j++) {
            double v = Y[i * 6 + j];
            s += std::exp(v - m);
            c += std::pow(std::fabs(v), 3);
            a = std::max(a, std::fabs(v));
        }
        wl.push_back(m + std::log(s));
        w3.push_back(std::cbrt(c));
        wi.push_back(a);
    }
    compare("LogSumExp dim 1", read(lse), wl, 1e-5);
    compare("Norm p=3 dim 1", read(n3), w3, 1e-5);
    compare("Norm p=inf dim 1", read(ninf), wi, 0);
    Dev lsi = make({4}, ACL_INT32, {0});
    expect_code("LogSumExp into an int32 out", aclnnLogSumExpGetWorkspaceSize(y.t, d1, false, lsi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Norm null pScalar", aclnnNormGetWorkspaceSize(y.t, nullptr, d1, false, n3.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    /* Cumprod along dim 1 (float32 and int64), in place */
    Dev cp = make({4, 6}, ACL_FLOAT, {0});
    int64_t one = 1;
    aclScalar *dim1 = aclCreateScalar(&one, ACL_INT64);
    RUN(S, aclnnCumprod, y.t, dim1, ACL_FLOAT, cp.t);
    std::vector<double> wc(24);
    for (int i = 0; i < 4; i++) {
        double p = 1;
        for (int j = 0; j < 6; j++) wc[i * 6 + j] = p *= Y[i * 6 + j];
    }
    compare("Cumprod dim 1", read(cp), wc, 1e-5);
    Dev ci = make({2, 3}, ACL_INT64, {2, -3, 4, 1, 5, -1});
    RUN(S, aclnnInplaceCumprod, ci.t, dim1);
    compare("InplaceCumprod int64 dim 1", read(ci), {2, -6, -24, 1, 5, -5}, 0);
    float fdim = 1;
    aclScalar *fd = aclCreateScalar(&fdim, ACL_FLOAT);
    expect_code("Cumprod with a floating dim", aclnnCumprodGetWorkspaceSize(y.t, fd, ACL_FLOAT, cp.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(d1);
    aclDestroyIntArray(d02);
    for (aclScalar *s : {s3, sinf, dim1, fd}) aclDestroyScalar(s);
    for (Dev *d : {&x, &ns, &xi, &mn, &mx, &dmn, &dmx, &amn, &amx, &badmx, &y, &lse, &n3, &ninf, &lsi, &cp, &ci}) release(*d);
    printf("ok reductions\n");
}

static void pointwise() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* IsClose with broadcasting and NaNs, equalNan both ways */
    std::vector<double> A = {1, 1.00001, NAN, 2, INFINITY, 0}, B = {1, 1.000005, NAN, 2.5, INFINITY, 1e-9};
    Dev a = make({2, 3}, ACL_FLOAT, A), b = make({2, 3}, ACL_FLOAT, B), o = make({2, 3}, ACL_BOOL, {0});
    RUN(S, aclnnIsClose, a.t, b.t, 1e-5, 1e-8, false, o.t);
    compare("IsClose", read(o), {1, 1, 0, 0, 1, 1}, 0);
    RUN(S, aclnnIsClose, a.t, b.t, 1e-5, 1e-8, true, o.t);
    compare("IsClose equalNan", read(o), {1, 1, 1, 0, 1, 1}, 0);
    Dev ai = make({2, 3}, ACL_INT32, {0});
    expect_code("IsClose of float and int32", aclnnIsCloseGetWorkspaceSize(a.t, ai.t, 1e-5, 1e-8, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* XLogY: x * log(y), 0 where x == 0; int inputs compute in float32 */
    std::vector<double> X = {0, 2, -1, 0, 3, 1.5}, Y = {0, 0.5, 4, NAN, 1, 7};
    Dev x = make({2, 3}, ACL_FLOAT, X), y = make({2, 3}, ACL_FLOAT, Y, TRANSPOSED), xo = make({2, 3}, ACL_FLOAT, {0});
    RUN(S, aclnnXLogYTensor, x.t, y.t, xo.t);
    std::vector<double> want;
    for (int i = 0; i < 6; i++) {
        float xv = static_cast<float>(X[i]), yv = static_cast<float>(Y[i]);
        want.push_back(std::isnan(yv) ? NAN : xv == 0 ? 0.0 : static_cast<double>(xv * std::log(yv)));
    }
    compare("XLogYTensor", read(xo), want, 1e-6);
    float three = 3;
    aclScalar *s3 = aclCreateScalar(&three, ACL_FLOAT);
    RUN(S, aclnnXLogYScalarSelf, s3, y.t, xo.t);
    want.clear();
    for (int i = 0; i < 6; i++) want.push_back(std::isnan(Y[i]) ? NAN : 3.0f * std::log(static_cast<float>(Y[i])));
    compare("XLogYScalarSelf", read(xo), want, 1e-6);
    Dev x4 = make({4}, ACL_FLOAT, {1});
    expect_code("XLogYTensor [2, 3] with [4]", aclnnXLogYTensorGetWorkspaceSize(x.t, x4.t, xo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* Mv: [5, 4] (transposed) @ [4] */
    std::vector<double> M = values(20, ACL_FLOAT, 5), V = values(4, ACL_FLOAT, 6);
    Dev m = make({5, 4}, ACL_FLOAT, M, TRANSPOSED), v = make({4}, ACL_FLOAT, V), mo = make({5}, ACL_FLOAT, {0});
    RUN(S, aclnnMv, m.t, v.t, mo.t, 0);
    want.clear();
    for (int i = 0; i < 5; i++) {
        double s = 0;
        for (int k = 0; k < 4; k++) s += M[i * 4 + k] * V[k];
        want.push_back(s);
    }
    compare("Mv", read(mo), want, 1e-5);
    Dev v5 = make({5}, ACL_FLOAT, {1});
    expect_code("Mv inner sizes differ", aclnnMvGetWorkspaceSize(m.t, v5.t, mo.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* Trace of the transposed [5, 4] (float32) and of an int32 [2, 3] (into int64) */
    Dev tr = make({}, ACL_FLOAT, {0});
    RUN(S, aclnnTrace, m.t, tr.t);
    double tsum = 0;
    for (int i = 0; i < 4; i++) tsum += M[i * 4 + i];
    compare("Trace float32", read(tr), {tsum}, 1e-6);
    Dev ti = make({2, 3}, ACL_INT32, {4, -2, 7, 1, 9, 3}), tio = make({}, ACL_INT64, {0});
    RUN(S, aclnnTrace, ti.t, tio.t);
    compare("Trace int32 into int64", read(tio), {13}, 0);
    expect_code("Trace int32 into int32", aclnnTraceGetWorkspaceSize(ti.t, ai.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    release(tr);
    release(ti);
    release(tio);
    aclDestroyScalar(s3);
    for (Dev *d : {&a, &b, &o, &ai, &x, &y, &xo, &x4, &m, &v, &mo, &v5}) release(*d);
    printf("ok pointwise\n");
}

static void nn() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* NLLLoss2d on [2, 3, 2, 2] with an ignored target and class weights; mean and none */
    std::vector<double> X = values(24, ACL_FLOAT, 9), W = {0.5, 1, 2}, T = {0, 2, 1, -100, 2, 2, 0, 1};
    Dev x = make({2, 3, 2, 2}, ACL_FLOAT, X), t = make({2, 2, 2}, ACL_INT64, T), w = make({3}, ACL_FLOAT, W);
    Dev out = make({}, ACL_FLOAT, {0}), tw = make({}, ACL_FLOAT, {0}), none = make({2, 2, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnNLLLoss2d, x.t, t.t, w.t, 0, -100, none.t, tw.t);
    RUN(S, aclnnNLLLoss2d, x.t, t.t, w.t, 1, -100, out.t, tw.t);
    double sum = 0, wsum = 0;
    std::vector<double> each(8, 0);
    for (int n = 0; n < 2; n++)
        for (int p = 0; p < 4; p++) {
            int64_t c = static_cast<int64_t>(T[n * 4 + p]);
            if (c == -100) continue;
            double l = -W[c] * X[(n * 3 + c) * 4 + p];
            each[n * 4 + p] = l;
            sum += l;
            wsum += W[c];
        }
    compare("NLLLoss2d mean", read(out), {sum / wsum}, 1e-5);
    compare("NLLLoss2d total weight", read(tw), {wsum}, 1e-6);
    compare("NLLLoss2d none", read(none), each, 1e-6);
    Dev g = make({}, ACL_FLOAT, {2}), gx = make({2, 3, 2, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnNLLLoss2dBackward, g.t, x.t, t.t, w.t, 1, -100, tw.t, gx.t);
    std::vector<double> wg(24, 0);
    for (int n = 0; n < 2; n++)
        for (int p = 0; p < 4; p++) {
            int64_t c = static_cast<int64_t>(T[n * 4 + p]);
            if (c != -100) wg[(n * 3 + c) * 4 + p] = -W[c] * 2 / wsum;
        }
    compare("NLLLoss2dBackward mean", read(gx), wg, 1e-6);
    Dev t3 = make({2, 2}, ACL_INT64, {0});
    expect_code("NLLLoss2d target without H and W", aclnnNLLLoss2dGetWorkspaceSize(x.t, t3.t, w.t, 1, -100, out.t, tw.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* GroupNorm [2, 6, 2, 2] in 3 groups, and its backward against a numeric check of the
     * closed form */
    std::vector<double> G = values(48, ACL_FLOAT, 13), gam = values(6, ACL_FLOAT, 14), bet = values(6, ACL_FLOAT, 15);
    Dev gx0 = make({2, 6, 2, 2}, ACL_FLOAT, G), ga = make({6}, ACL_FLOAT, gam), be = make({6}, ACL_FLOAT, bet);
    Dev go = make({2, 6, 2, 2}, ACL_FLOAT, {0}), gm = make({2, 3}, ACL_FLOAT, {0}), gr = make({2, 3}, ACL_FLOAT, {0});
    RUN(S, aclnnGroupNorm, gx0.t, ga.t, be.t, 2, 6, 4, 3, 1e-5, go.t, gm.t, gr.t);
    std::vector<double> wy(48), wm(6), wr(6);
    for (int n = 0; n < 2; n++)
        for (int q = 0; q < 3; q++) {
            double m = 0, var = 0;
            for (int k = 0; k < 8; k++) m += G[n * 24 + q * 8 + k];
            m /= 8;
            for (int k = 0; k < 8; k++) var += (G[n * 24 + q * 8 + k] - m) * (G[n * 24 + q * 8 + k] - m);
            var /= 8;
            double r = 1 / std::sqrt(var + 1e-5);
            wm[n * 3 + q] = m;
            wr[n * 3 + q] = r;
            for (int k = 0; k < 8; k++) {
                int c = q * 2 + k / 4;
                wy[n * 24 + q * 8 + k] = (G[n * 24 + q * 8 + k] - m) * r * gam[c] + bet[c];
            }
        }
    compare("GroupNorm out", read(go), wy, 1e-4);
    compare("GroupNorm mean", read(gm), wm, 1e-5);
    compare("GroupNorm rstd", read(gr), wr, 1e-4);
    /* backward with dy = 1 everywhere: dbeta[c] = 2 images x 4 positions = 8 */
    Dev dy = make({2, 6, 2, 2}, ACL_FLOAT, {1}), dx = make({2, 6, 2, 2}, ACL_FLOAT, {0});
    Dev dg = make({6}, ACL_FLOAT, {0}), db = make({6}, ACL_FLOAT, {0});
    bool mask[3] = {true, true, true};
    aclBoolArray *bm = aclCreateBoolArray(mask, 3);
    RUN(S, aclnnGroupNormBackward, dy.t, gx0.t, gm.t, gr.t, ga.t, 2, 6, 4, 3, bm, dx.t, dg.t, db.t);
    std::vector<double> wdb(6, 8), wdg(6, 0);
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 6; c++)
            for (int k = 0; k < 4; k++) {
                int q = c / 2;
                wdg[c] += (G[(n * 6 + c) * 4 + k] - wm[n * 3 + q]) * wr[n * 3 + q];
            }
    compare("GroupNormBackward dbeta", read(db), wdb, 1e-5);
    compare("GroupNormBackward dgamma", read(dg), wdg, 1e-4);
    /* a constant dy is orthogonal to the normalisation: dx is 0 whenever gamma is constant
     * within a group; here check sum(dx) over each group is 0 */
    std::vector<double> DX = read(dx);
    for (int n = 0; n < 2; n++)
        for (int q = 0; q < 3; q++) {
            double s = 0;
            for (int k = 0; k < 8; k++) s += DX[n * 24 + q * 8 + k];
            compare("GroupNormBackward dx sums to 0 per group", {s}, {0}, 1e-5);
        }
    expect_code("GroupNorm group does not divide C",
                aclnnGroupNormGetWorkspaceSize(gx0.t, ga.t, be.t, 2, 6, 4, 4, 1e-5, go.t, gm.t, gr.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupNorm null out",
                aclnnGroupNormGetWorkspaceSize(gx0.t, ga.t, be.t, 2, 6, 4, 3, 1e-5, nullptr, gm.t, gr.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyBoolArray(bm);
    for (Dev *d : {&x, &t, &w, &out, &tw, &none, &g, &gx, &t3, &gx0, &ga, &be, &go, &gm, &gr, &dy, &dx, &dg, &db}) release(*d);
    /* a target out of range fails the task at the synchronisation */
    Dev bx = make({1, 2, 1, 1}, ACL_FLOAT, {0.5}), bt = make({1, 1, 1}, ACL_INT64, {7});
    Dev bo = make({}, ACL_FLOAT, {0}), btw = make({}, ACL_FLOAT, {0});
    NN(aclnnNLLLoss2dGetWorkspaceSize(bx.t, bt.t, nullptr, 1, -100, bo.t, btw.t, &ws, &ex));
    NN(aclnnNLLLoss2d(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL NLLLoss2d with target 7 of 2 classes succeeded\n");
        g_fail++;
    }
    for (Dev *d : {&bx, &bt, &bo, &btw}) release(*d);
    printf("ok nn\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    shapes();
    reductions();
    pointwise();
    nn();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
