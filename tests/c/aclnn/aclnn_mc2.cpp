/* The fused matmul + collective (MC2) operators as a real multi-process job: run as N ranks
 * by `npu-emu run -n N` (RANK_ID, RANK_SIZE, ASCEND_DEVICE_ID, RANK_TABLE_FILE), each rank
 * builds the communicator from the rank table, takes its name (HcclGetCommName) and passes
 * it as `group`:
 * - HcclCommGetHandleWithName: the name gives back this communicator; unknown, NULL and
 *   too long names give their codes;
 * - MatmulAllReduce (2-D and 3-D x1, transposed x2, bias), MatmulAllReduceV2 (x3, added by
 *   every rank before the reduction, as the page's formula says),
 *   MatmulAllReduceAddRmsNorm and its in-place form, QuantMatmulAllReduce (INT8 x1/x2,
 *   INT32 bias, a BF16 dequantScale or INT64 parameters for FLOAT16) and V2 (FLOAT
 *   dequantScale with pertokenScale), WeightQuantMatmulAllReduce (INT8 weight, per-channel
 *   antiquant scale and offset), AllGatherMatmul (with and without
 *   gatherOut), MatmulReduceScatter, in FLOAT16 and BFLOAT16, against a host reference that
 *   knows every rank's inputs (each rank's product rounded once to the dtype, the reduction
 *   in double, rounded once): tolerance 2e-3 (FLOAT16) / 1.6e-2 (BFLOAT16) relative+absolute
 *   (the engine accumulates in float32, the reference in double);
 * - the documented argument errors (unknown / NULL group, reduceOp, commTurn, streamMode,
 *   k range, m not a multiple of the ranks, bias, dtype).
 * Prints "aclnn_mc2 rank R/N passed (C checks)". */
#include <unistd.h>
#include <algorithm>
#include "ops_ref.h"
#include "hccl/hccl.h"
#include "aclnnop/aclnn_matmul_all_reduce.h"
#include "aclnnop/aclnn_matmul_all_reduce_v2.h"
#include "aclnnop/aclnn_matmul_all_reduce_add_rms_norm.h"
#include "aclnnop/aclnn_inplace_matmul_all_reduce_add_rms_norm.h"
#include "aclnnop/aclnn_all_gather_matmul.h"
#include "aclnnop/aclnn_matmul_reduce_scatter.h"
#include "aclnnop/aclnn_quant_matmul_all_reduce.h"
#include "aclnnop/aclnn_quant_matmul_all_reduce_v2.h"
#include "aclnnop/aclnn_weight_quant_matmul_all_reduce.h"

static aclrtStream S;
static int R = 0, N = 1;
static char G[128];

#define HOK(call)                                                                          \
    do {                                                                                   \
        HcclResult h_ = (call);                                                            \
        if (h_ != HCCL_SUCCESS) {                                                          \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,  \
                    (int)h_, test_msg());                                                  \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static void expect(const char *what, int got, int want, const char *sub) {
    g_checks++;
    const char *m = test_msg();
    if (got != want || (sub && !strstr(m, sub))) {
        printf("FAIL %s: returned %d, expected %d; message \"%s\" (wants \"%s\")\n", what, got, want, m,
               sub ? sub : "");
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, m);
    }
}

static double tol_of(aclDataType dt) { return dt == ACL_FLOAT16 ? 2e-3 : 1.6e-2; }

/* Inputs of rank r for test `id` (every rank can make every rank's). */
static std::vector<double> data(int64_t n, aclDataType dt, int r, unsigned id) {
    std::vector<double> v = values(n, dt, id * 97u + static_cast<unsigned>(r) * 7919u);
    for (auto &e : v) e = as_type(e / 4, dt);
    return v;
}

/* a [m,k] @ b [k,n] (+ bias [n]) in double, rounded once to dt. */
static std::vector<double> mm(const std::vector<double> &a, const std::vector<double> &b, const std::vector<double> *bias,
                              int64_t m, int64_t k, int64_t n, aclDataType dt) {
    std::vector<double> o(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = bias ? (*bias)[static_cast<size_t>(j)] : 0;
            for (int64_t p = 0; p < k; p++) s += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(p * n + j)];
            o[static_cast<size_t>(i * n + j)] = as_type(s, dt);
        }
    return o;
}

/* Sum over ranks of each rank's rounded (x1 @ x2 + bias), rounded once. */
static std::vector<double> all_reduce_ref(int64_t m, int64_t k, int64_t n, aclDataType dt, unsigned id, bool bias) {
    std::vector<double> sum(static_cast<size_t>(m * n), 0);
    for (int r = 0; r < N; r++) {
        auto a = data(m * k, dt, r, id), b = data(k * n, dt, r, id + 1), c = data(n, dt, r, id + 2);
        auto p = mm(a, b, bias ? &c : nullptr, m, k, n, dt);
        for (size_t i = 0; i < sum.size(); i++) sum[i] += p[i];
    }
    for (auto &e : sum) e = as_type(e, dt);
    return sum;
}

static void test_by_name(HcclComm comm) {
    HcclComm h = nullptr;
    HOK(HcclCommGetHandleWithName(G, &h));
    g_checks++;
    if (h != comm) {
        printf("FAIL HcclCommGetHandleWithName(\"%s\") gave %p, not the communicator %p\n", G, h, comm);
        g_fail++;
    }
    expect("HcclCommGetHandleWithName(unknown)", HcclCommGetHandleWithName("no_such_comm", &h), HCCL_E_NOT_FOUND,
           "no_such_comm");
    expect("HcclCommGetHandleWithName(NULL)", HcclCommGetHandleWithName(nullptr, &h), HCCL_E_PTR, "commName");
    expect("HcclCommGetHandleWithName(comm NULL)", HcclCommGetHandleWithName(G, nullptr), HCCL_E_PTR, "comm");
    std::string longname(200, 'x');
    expect("HcclCommGetHandleWithName(long)", HcclCommGetHandleWithName(longname.c_str(), &h), HCCL_E_PARA, "128");
    printf("ok by name\n");
}

static void test_all_reduce(aclDataType dt) {
    const char *dn = dname(dt);
    /* 3-D x1 (2,3,32), x2 (32,24) transposed in memory, bias */
    {
        int64_t b = 2, s = 3, k = 32, n = 24, m = b * s;
        Dev x1 = make({b, s, k}, dt, data(m * k, dt, R, 10));
        Dev x2 = make({k, n}, dt, data(k * n, dt, R, 11), TRANSPOSED);
        Dev bias = make({n}, dt, data(n, dt, R, 12));
        Dev out = make({b, s, n}, dt, {});
        RUN(S, aclnnMatmulAllReduce, x1.t, x2.t, bias.t, G, "sum", 0, 1, out.t);
        std::string w = std::string("MatmulAllReduce 3-D ") + dn;
        compare(w.c_str(), read(out), all_reduce_ref(m, k, n, dt, 10, true), tol_of(dt));
        /* V2: + x3, 2-D x1, no bias */
        Dev y1 = make({m, k}, dt, data(m * k, dt, R, 10));
        Dev x3 = make({m, n}, dt, data(m * n, dt, R, 40));
        Dev out2 = make({m, n}, dt, {});
        RUN(S, aclnnMatmulAllReduceV2, y1.t, x2.t, nullptr, x3.t, G, "sum", 0, 1, out2.t);
        /* allreduce(x1 @ x2 + x3): each rank adds its x3 to its rounded product */
        std::vector<double> ref(static_cast<size_t>(m * n), 0);
        for (int r = 0; r < N; r++) {
            auto p = mm(data(m * k, dt, r, 10), data(k * n, dt, r, 11), nullptr, m, k, n, dt);
            auto x3r = data(m * n, dt, r, 40);
            for (size_t i = 0; i < ref.size(); i++) ref[i] += as_type(p[i] + x3r[i], dt);
        }
        for (auto &e : ref) e = as_type(e, dt);
        w = std::string("MatmulAllReduceV2 ") + dn;
        compare(w.c_str(), read(out2), ref, tol_of(dt));
        for (Dev *d : {&x1, &x2, &bias, &out, &y1, &x3, &out2}) release(*d);
    }
    printf("ok all reduce %s\n", dn);
}

static void test_add_rms_norm(aclDataType dt) {
    const char *dn = dname(dt);
    int64_t b = 2, s = 2, k = 16, n = 8, m = b * s;
    double eps = 1e-6;
    auto ar = all_reduce_ref(m, k, n, dt, 20, true);
    auto res = data(m * n, dt, 0, 50);
    auto gam = data(n, dt, 0, 51);
    std::vector<double> y(ar.size()), norm(ar.size());
    for (int64_t i = 0; i < m; i++) {
        double ss = 0;
        for (int64_t j = 0; j < n; j++) {
            size_t q = static_cast<size_t>(i * n + j);
            y[q] = as_type(ar[q] + res[q], dt);
            ss += y[q] * y[q];
        }
        double inv = 1 / std::sqrt(ss / n + eps);
        for (int64_t j = 0; j < n; j++) {
            size_t q = static_cast<size_t>(i * n + j);
            norm[q] = as_type(y[q] * inv * gam[static_cast<size_t>(j)], dt);
        }
    }
    Dev x1 = make({m, k}, dt, data(m * k, dt, R, 20));
    Dev x2 = make({k, n}, dt, data(k * n, dt, R, 21));
    Dev bias = make({n}, dt, data(n, dt, R, 22));
    Dev residual = make({b, s, n}, dt, res);
    Dev gamma = make({n}, dt, gam);
    Dev yo = make({b, s, n}, dt, {});
    Dev no = make({b, s, n}, dt, {});
    RUN(S, aclnnMatmulAllReduceAddRmsNorm, x1.t, x2.t, bias.t, residual.t, gamma.t, eps, G, "sum", 0, 1, yo.t, no.t);
    std::string w = std::string("MatmulAllReduceAddRmsNorm y ") + dn;
    compare(w.c_str(), read(yo), y, tol_of(dt));
    w = std::string("MatmulAllReduceAddRmsNorm normOut ") + dn;
    compare(w.c_str(), read(no), norm, 2 * tol_of(dt));
    w = std::string("MatmulAllReduceAddRmsNorm residual unchanged ") + dn;
    compare(w.c_str(), read(residual), res, 0);
    Dev no2 = make({b, s, n}, dt, {});
    RUN(S, aclnnInplaceMatmulAllReduceAddRmsNorm, x1.t, x2.t, bias.t, residual.t, gamma.t, eps, G, "sum", 0, 1, no2.t);
    w = std::string("InplaceMatmulAllReduceAddRmsNorm residual = y ") + dn;
    compare(w.c_str(), read(residual), y, tol_of(dt));
    w = std::string("InplaceMatmulAllReduceAddRmsNorm normOut ") + dn;
    compare(w.c_str(), read(no2), norm, 2 * tol_of(dt));
    for (Dev *d : {&x1, &x2, &bias, &residual, &gamma, &yo, &no, &no2}) release(*d);
    printf("ok add rms norm %s\n", dn);
}

static void test_all_gather(aclDataType dt) {
    const char *dn = dname(dt);
    int64_t m = 3, k = 256, n = 16;
    Dev x1 = make({m, k}, dt, data(m * k, dt, R, 30));
    auto x2v = data(k * n, dt, R, 31);
    Dev x2 = make({k, n}, dt, x2v, TRANSPOSED);
    Dev out = make({m * N, n}, dt, {});
    Dev gout = make({m * N, k}, dt, {});
    RUN(S, aclnnAllGatherMatmul, x1.t, x2.t, nullptr, G, 0, 0, 1, out.t, gout.t);
    std::vector<double> gathered;
    for (int r = 0; r < N; r++) {
        auto p = data(m * k, dt, r, 30);
        gathered.insert(gathered.end(), p.begin(), p.end());
    }
    std::string w = std::string("AllGatherMatmul gatherOut ") + dn;
    compare(w.c_str(), read(gout), gathered, 0);
    w = std::string("AllGatherMatmul output ") + dn;
    auto ref = mm(gathered, x2v, nullptr, m * N, k, n, dt);
    compare(w.c_str(), read(out), ref, tol_of(dt));
    /* gatherOut with no elements (torch_npu's gather_output=False) and NULL: not written */
    Dev empty = make({0}, dt, {});
    Dev out2 = make({m * N, n}, dt, {});
    RUN(S, aclnnAllGatherMatmul, x1.t, x2.t, nullptr, G, 0, 0, 1, out2.t, empty.t);
    w = std::string("AllGatherMatmul empty gatherOut ") + dn;
    compare(w.c_str(), read(out2), ref, tol_of(dt));
    Dev out3 = make({m * N, n}, dt, {});
    RUN(S, aclnnAllGatherMatmul, x1.t, x2.t, nullptr, G, 0, 0, 1, out3.t, nullptr);
    w = std::string("AllGatherMatmul NULL gatherOut ") + dn;
    compare(w.c_str(), read(out3), ref, tol_of(dt));
    for (Dev *d : {&x1, &x2, &out, &gout, &empty, &out2, &out3}) release(*d);
    printf("ok all gather %s\n", dn);
}

static void test_reduce_scatter(aclDataType dt) {
    const char *dn = dname(dt);
    int64_t m = 2 * N, k = 256, n = 8;
    Dev x1 = make({m, k}, dt, data(m * k, dt, R, 60));
    Dev x2 = make({k, n}, dt, data(k * n, dt, R, 61));
    Dev out = make({m / N, n}, dt, {});
    RUN(S, aclnnMatmulReduceScatter, x1.t, x2.t, nullptr, G, "sum", 0, 1, out.t);
    auto full = all_reduce_ref(m, k, n, dt, 60, false);
    std::vector<double> mine(full.begin() + R * (m / N) * n, full.begin() + (R + 1) * (m / N) * n);
    std::string w = std::string("MatmulReduceScatter ") + dn;
    compare(w.c_str(), read(out), mine, tol_of(dt));
    for (Dev *d : {&x1, &x2, &out}) release(*d);
    printf("ok reduce scatter %s\n", dn);
}

/* QuantMatmulAllReduce: per rank round(((x1 @ x2 + bias) * scale[j] (* pertoken[i])) + x3),
 * summed over ranks. `kind` 0: BF16 output, BF16 scales [n] (V1); 1: FLOAT16 output, INT64
 * parameters [1] (V1); 2: FLOAT16 output, FLOAT scales [n] and pertoken [m] (V2). */
static void test_quant(int kind) {
    aclDataType dt = kind == 0 ? ACL_BF16 : ACL_FLOAT16;
    int64_t b = 2, s = 2, k = 32, n = 16, m = b * s;
    auto scale_of = [&](int r) {
        std::vector<double> v(static_cast<size_t>(kind == 1 ? 1 : n));
        /* kind 1: (1..5)/1024, exact in the parameter's scale (the float's bits with the low 13 cleared) */
        for (size_t j = 0; j < v.size(); j++)
            v[j] = kind == 1 ? (1 + (j + r) % 5) / 1024.0 : as_type(0.001 * (1 + (j + r) % 5), kind == 0 ? ACL_BF16 : ACL_FLOAT);
        return v;
    };
    auto pt_of = [&](int r) {
        std::vector<double> v(static_cast<size_t>(m));
        for (size_t i = 0; i < v.size(); i++) v[i] = as_type(0.5 + 0.25 * ((i + r) % 3), ACL_FLOAT);
        return v;
    };
    std::vector<double> want(static_cast<size_t>(m * n), 0);
    for (int r = 0; r < N; r++) {
        auto a = values(m * k, ACL_INT8, 70 + r), w = values(k * n, ACL_INT8, 80 + r), bias = values(n, ACL_INT32, 90 + r);
        auto sc = scale_of(r), pt = pt_of(r);
        auto x3 = data(m * n, dt, r, 95);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = bias[static_cast<size_t>(j)];
                for (int64_t p = 0; p < k; p++) acc += a[static_cast<size_t>(i * k + p)] * w[static_cast<size_t>(p * n + j)];
                /* in float, as the quantised product is dequantised */
                float v = static_cast<float>(acc) * static_cast<float>(sc[sc.size() == 1 ? 0 : static_cast<size_t>(j)]);
                if (kind == 2) v *= static_cast<float>(pt[static_cast<size_t>(i)]);
                size_t q = static_cast<size_t>(i * n + j);
                want[q] += as_type(as_type(v, dt) + x3[q], dt);
            }
    }
    for (auto &e : want) e = as_type(e, dt);
    Dev x1 = make({b, s, k}, ACL_INT8, values(m * k, ACL_INT8, 70 + R));
    Dev x2 = make({k, n}, ACL_INT8, values(k * n, ACL_INT8, 80 + R));
    Dev bias = make({n}, ACL_INT32, values(n, ACL_INT32, 90 + R));
    Dev x3 = make({b, s, n}, dt, data(m * n, dt, R, 95));
    Dev out = make({b, s, n}, dt, {});
    std::vector<double> sc = scale_of(R);
    Dev scale;
    if (kind == 1) {
        /* aclnnTransQuantParamV2's parameter: the float's bits (low 13 cleared) with bit 46 set */
        float f = static_cast<float>(sc[0]);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        scale = make({1}, ACL_INT64, {static_cast<double>(static_cast<uint64_t>(bits & 0xFFFFE000u) | (1ull << 46))});
    } else {
        scale = make({n}, kind == 0 ? ACL_BF16 : ACL_FLOAT, sc);
    }
    Dev pt = make({m}, ACL_FLOAT, pt_of(R));
    if (kind == 2)
        RUN(S, aclnnQuantMatmulAllReduceV2, x1.t, x2.t, bias.t, x3.t, scale.t, pt.t, G, "sum", 0, 1, out.t);
    else
        RUN(S, aclnnQuantMatmulAllReduce, x1.t, x2.t, bias.t, x3.t, scale.t, G, "sum", 0, 1, out.t);
    char w[96];
    snprintf(w, sizeof w, "QuantMatmulAllReduce%s %s", kind == 2 ? "V2" : "", kind == 1 ? "INT64 scale" : dname(dt));
    compare(w, read(out), want, tol_of(dt));
    /* dequantScale of the wrong type for the output */
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    if (kind == 1)
        expect("QuantMatmulAllReduce FLOAT scale without pertoken",
               aclnnQuantMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, bias.t, x3.t, pt.t, G, "sum", 0, 1, out.t, &ws, &ex),
               ACLNN_ERR_PARAM_INVALID, "dequantScale");
    for (Dev *d : {&x1, &x2, &bias, &x3, &out, &scale, &pt}) release(*d);
    printf("ok quant %d\n", kind);
}

/* WeightQuantMatmulAllReduce: per rank round(x1 @ W + bias) + x3 rounded, W = round(round(x2 +
 * offset) * scale) in x1's dtype, summed over ranks. */
static void test_weight_quant(aclDataType dt) {
    int64_t m = 4, k = 64, n = 16;
    auto sc_of = [&](int r) {
        std::vector<double> v(static_cast<size_t>(n));
        for (size_t j = 0; j < v.size(); j++) v[j] = as_type(0.01 * (1 + (j + r) % 7), dt);
        return v;
    };
    auto off_of = [&](int r) {
        std::vector<double> v(static_cast<size_t>(n));
        for (size_t j = 0; j < v.size(); j++) v[j] = as_type(static_cast<double>((j + r) % 5) - 2, dt);
        return v;
    };
    std::vector<double> want(static_cast<size_t>(m * n), 0);
    for (int r = 0; r < N; r++) {
        auto a = data(m * k, dt, r, 100), w8 = values(k * n, ACL_INT8, 101 + r), bias = data(n, dt, r, 102);
        auto sc = sc_of(r), off = off_of(r);
        auto x3 = data(m * n, dt, r, 103);
        std::vector<double> w(w8.size());
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) {
                size_t q = static_cast<size_t>(p * n + j);
                w[q] = as_type(as_type(w8[q] + off[static_cast<size_t>(j)], dt) * sc[static_cast<size_t>(j)], dt);
            }
        auto y = mm(a, w, &bias, m, k, n, dt);
        for (size_t q = 0; q < want.size(); q++) want[q] += as_type(y[q] + x3[q], dt);
    }
    for (auto &e : want) e = as_type(e, dt);
    Dev x1 = make({m, k}, dt, data(m * k, dt, R, 100));
    Dev x2 = make({k, n}, ACL_INT8, values(k * n, ACL_INT8, 101 + R));
    Dev bias = make({n}, dt, data(n, dt, R, 102));
    Dev sc = make({n}, dt, sc_of(R));
    Dev off = make({n}, dt, off_of(R));
    Dev x3 = make({m, n}, dt, data(m * n, dt, R, 103));
    Dev out = make({m, n}, dt, {});
    RUN(S, aclnnWeightQuantMatmulAllReduce, x1.t, x2.t, bias.t, sc.t, off.t, x3.t, G, "sum", 0, 1, 0, out.t);
    std::string w = std::string("WeightQuantMatmulAllReduce ") + dname(dt);
    compare(w.c_str(), read(out), want, tol_of(dt));
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    expect("WeightQuantMatmulAllReduce antiquantGroupSize 48",
           aclnnWeightQuantMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, bias.t, sc.t, off.t, x3.t, G, "sum", 0, 1, 48, out.t,
                                                           &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "antiquantGroupSize");
    for (Dev *d : {&x1, &x2, &bias, &sc, &off, &x3, &out}) release(*d);
    printf("ok weight quant %s\n", dname(dt));
}

static void test_errors() {
    aclDataType dt = ACL_FLOAT16;
    Dev x1 = make({4, 256}, dt, data(4 * 256, dt, R, 1));
    Dev x2 = make({256, 8}, dt, data(256 * 8, dt, R, 2));
    Dev out = make({4, 8}, dt, {});
    Dev big = make({4 * N, 8}, dt, {});
    Dev small = make({4 / N, 8}, dt, {});
    Dev x1f = make({4, 256}, ACL_FLOAT, data(4 * 256, ACL_FLOAT, R, 1));
    Dev x1k = make({4, 32}, dt, data(4 * 32, dt, R, 1));
    Dev x2k = make({32, 8}, dt, data(32 * 8, dt, R, 2));
    Dev x1m = make({3, 256}, dt, data(3 * 256, dt, R, 1));
    Dev bias = make({8}, dt, data(8, dt, R, 3));
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    expect("MatmulAllReduce unknown group",
           aclnnMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, nullptr, "no_such_group", "sum", 0, 1, out.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "no_such_group");
    expect("MatmulAllReduce NULL group",
           aclnnMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, nullptr, nullptr, "sum", 0, 1, out.t, &ws, &ex),
           ACLNN_ERR_PARAM_NULLPTR, "group");
    expect("MatmulAllReduce NULL x1",
           aclnnMatmulAllReduceGetWorkspaceSize(nullptr, x2.t, nullptr, G, "sum", 0, 1, out.t, &ws, &ex),
           ACLNN_ERR_PARAM_NULLPTR, "x1");
    expect("MatmulAllReduce reduceOp max",
           aclnnMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, nullptr, G, "max", 0, 1, out.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "reduceOp");
    expect("MatmulAllReduce commTurn 1",
           aclnnMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, nullptr, G, "sum", 1, 1, out.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "commTurn");
    expect("MatmulAllReduce streamMode 0",
           aclnnMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, nullptr, G, "sum", 0, 0, out.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "streamMode");
    expect("MatmulAllReduce float32 x1",
           aclnnMatmulAllReduceGetWorkspaceSize(x1f.t, x2.t, nullptr, G, "sum", 0, 1, out.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "x1");
    expect("MatmulAllReduce output shape",
           aclnnMatmulAllReduceGetWorkspaceSize(x1.t, x2.t, nullptr, G, "sum", 0, 1, big.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "output");
    expect("AllGatherMatmul unknown group",
           aclnnAllGatherMatmulGetWorkspaceSize(x1.t, x2.t, nullptr, "no_such_group", 0, 0, 1, big.t, nullptr, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "no_such_group");
    expect("AllGatherMatmul k 32",
           aclnnAllGatherMatmulGetWorkspaceSize(x1k.t, x2k.t, nullptr, G, 0, 0, 1, big.t, nullptr, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "[256, 65535)");
    expect("AllGatherMatmul bias",
           aclnnAllGatherMatmulGetWorkspaceSize(x1.t, x2.t, bias.t, G, 0, 0, 1, big.t, nullptr, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "bias");
    expect("AllGatherMatmul gatherIndex 1",
           aclnnAllGatherMatmulGetWorkspaceSize(x1.t, x2.t, nullptr, G, 1, 0, 1, big.t, nullptr, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "gatherIndex");
    expect("AllGatherMatmul output rows",
           aclnnAllGatherMatmulGetWorkspaceSize(x1.t, x2.t, nullptr, G, 0, 0, 1, out.t, nullptr, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "output");
    expect("MatmulReduceScatter unknown group",
           aclnnMatmulReduceScatterGetWorkspaceSize(x1.t, x2.t, nullptr, "no_such_group", "sum", 0, 1, small.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "no_such_group");
    expect("MatmulReduceScatter m not a multiple of the ranks",
           aclnnMatmulReduceScatterGetWorkspaceSize(x1m.t, x2.t, nullptr, G, "sum", 0, 1, small.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "multiple");
    expect("MatmulReduceScatter reduceOp min",
           aclnnMatmulReduceScatterGetWorkspaceSize(x1.t, x2.t, nullptr, G, "min", 0, 1, small.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "reduceOp");
    Dev res2 = make({4, 8}, dt, {});
    Dev gam = make({8}, dt, {});
    Dev yo = make({1, 4, 8}, dt, {});
    expect("MatmulAllReduceAddRmsNorm 2-D residual",
           aclnnMatmulAllReduceAddRmsNormGetWorkspaceSize(x1.t, x2.t, nullptr, res2.t, gam.t, 1e-6, G, "sum", 0, 1, yo.t,
                                                          yo.t, &ws, &ex),
           ACLNN_ERR_PARAM_INVALID, "residual");
    for (Dev *d : {&x1, &x2, &out, &big, &small, &x1f, &x1k, &x2k, &x1m, &bias, &res2, &gam, &yo}) release(*d);
    printf("ok errors\n");
}

static int env_int(const char *k, int dflt) {
    const char *v = getenv(k);
    return v && *v ? atoi(v) : dflt;
}

int main() {
    R = env_int("RANK_ID", -1);
    N = env_int("RANK_SIZE", -1);
    const char *table = getenv("RANK_TABLE_FILE");
    if (R < 0 || N < 1 || !table) {
        fprintf(stderr, "FAIL run as a job of `npu-emu run -n N` (RANK_ID, RANK_SIZE, RANK_TABLE_FILE)\n");
        return 1;
    }
    CHECK(aclInit(nullptr));
    int dev = env_int("ASCEND_DEVICE_ID", R);
    CHECK(aclrtSetDevice(dev));
    CHECK(aclrtCreateStream(&S));
    HcclComm comm = nullptr;
    HOK(HcclCommInitClusterInfo(table, static_cast<uint32_t>(R), &comm));
    HOK(HcclGetCommName(comm, G));
    test_by_name(comm);
    for (aclDataType dt : {ACL_FLOAT16, ACL_BF16}) {
        test_all_reduce(dt);
        test_add_rms_norm(dt);
        test_all_gather(dt);
        test_reduce_scatter(dt);
    }
    for (int kind = 0; kind < 3; kind++) test_quant(kind);
    test_weight_quant(ACL_FLOAT16);
    test_weight_quant(ACL_BF16);
    test_errors();
    HOK(HcclCommDestroy(comm));
    CHECK(aclrtDestroyStream(S));
    CHECK(aclrtResetDevice(dev));
    CHECK(aclFinalize());
    if (g_fail) {
        printf("aclnn_mc2 rank %d/%d FAILED (%d of %d checks)\n", R, N, g_fail, g_checks);
        return 1;
    }
    printf("aclnn_mc2 rank %d/%d passed (%d checks)\n", R, N, g_checks);
    return 0;
}
