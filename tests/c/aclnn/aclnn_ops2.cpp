/* The rest of the operator families against the host reference of ops_ref.h: comparisons,
 * logical operators, where / masked fill, pow, minimum, rsub, div modes, unary math and the
 * activations with their backward forms, reductions with indices and norms, batched
 * products, softmax, layer norm, embedding, dropout, bernoulli, uniform, arange.
 *
 * Elementwise float results are exact: the reference computes the documented formula in
 * float32 in the same order (fp16/bf16: then rounds once). Reductions, products and
 * normalisations compare with the relative tolerance given at each check. */
#include <algorithm>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_eq_tensor.h"
#include "aclnnop/aclnn_gt_scalar.h"
#include "aclnnop/aclnn_le_tensor.h"
#include "aclnnop/aclnn_logical_and.h"
#include "aclnnop/aclnn_logical_not.h"
#include "aclnnop/aclnn_logical_xor.h"
#include "aclnnop/aclnn_s_where.h"
#include "aclnnop/aclnn_masked_fill_scalar.h"
#include "aclnnop/aclnn_masked_fill_tensor.h"
#include "aclnnop/aclnn_pow.h"
#include "aclnnop/aclnn_pow_tensor_tensor.h"
#include "aclnnop/aclnn_minimum.h"
#include "aclnnop/aclnn_rsub.h"
#include "aclnnop/aclnn_div.h"
#include "aclnnop/aclnn_abs.h"
#include "aclnnop/aclnn_log.h"
#include "aclnnop/aclnn_rsqrt.h"
#include "aclnnop/aclnn_reciprocal.h"
#include "aclnnop/aclnn_sin.h"
#include "aclnnop/aclnn_cos.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_erf.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "aclnnop/aclnn_mean.h"
#include "aclnnop/aclnn_amax.h"
#include "aclnnop/aclnn_max_dim.h"
#include "aclnnop/aclnn_argmax.h"
#include "aclnnop/aclnn_linalg_vector_norm.h"
#include "aclnnop/aclnn_max.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_baddbmm.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "aclnnop/aclnn_embedding.h"
#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "aclnnop/aclnn_dropout.h"
#include "aclnnop/aclnn_dropout_backward.h"
#include "aclnnop/aclnn_bernoulli.h"
#include "aclnnop/aclnn_uniform.h"
#include "aclnnop/aclnn_arange.h"
#include "aclnnop/aclnn_lerp_tensor.h"

static aclrtStream S;
static const aclDataType F3[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

static std::string nm(const char *op, aclDataType t, const char *how) { return std::string(op) + " " + dname(t) + " " + how; }

/* out = f(a, b) with a [3,1,5] (transposed-free) and b [4,5] broadcast to [3,4,5] */
static std::vector<double> bcast(const std::vector<double> &a, const std::vector<double> &b, const std::function<double(double, double)> &f) {
    std::vector<double> r(60);
    for (int q = 0; q < 3; q++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) r[static_cast<size_t>((q * 4 + j) * 5 + k)] = f(a[static_cast<size_t>(q * 5 + k)], b[static_cast<size_t>(j * 5 + k)]);
    return r;
}

static void compare_tests() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT8, ACL_DOUBLE}) {
        auto va = values(15, t, 1), vb = values(20, t, 2);
        vb[3] = va[3]; /* some equal pairs */
        Dev a = make({3, 1, 5}, t, va, STRIDED), b = make({4, 5}, t, vb, TRANSPOSED), o = make({3, 4, 5}, ACL_BOOL, {});
        RUN(S, aclnnEqTensor, a.t, b.t, o.t);
        compare(nm("EqTensor", t, "broadcast").c_str(), read(o), bcast(va, vb, [](double x, double y) { return x == y ? 1.0 : 0.0; }), 0);
        RUN(S, aclnnLeTensor, a.t, b.t, o.t);
        compare(nm("LeTensor", t, "broadcast").c_str(), read(o), bcast(va, vb, [](double x, double y) { return x <= y ? 1.0 : 0.0; }), 0);
        int64_t zero = 0;
        aclScalar *s = aclCreateScalar(&zero, ACL_INT64);
        Dev o2 = make({3, 1, 5}, ACL_BOOL, {});
        RUN(S, aclnnGtScalar, a.t, s, o2.t);
        std::vector<double> w(15);
        for (size_t i = 0; i < 15; i++) w[i] = va[i] > 0;
        compare(nm("GtScalar", t, "strided").c_str(), read(o2), w, 0);
        /* in place: the result stored in self's own type */
        Dev c = make({3, 1, 5}, t, va);
        RUN(S, aclnnInplaceGtScalar, c.t, s);
        compare(nm("InplaceGtScalar", t, "").c_str(), read(c), w, 0);
        /* logical ops */
        RUN(S, aclnnLogicalAnd, a.t, b.t, o.t);
        compare(nm("LogicalAnd", t, "broadcast").c_str(), read(o), bcast(va, vb, [](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; }), 0);
        RUN(S, aclnnLogicalXor, a.t, b.t, o.t);
        compare(nm("LogicalXor", t, "broadcast").c_str(), read(o), bcast(va, vb, [](double x, double y) { return ((x != 0) != (y != 0)) ? 1.0 : 0.0; }), 0);
        RUN(S, aclnnLogicalNot, a.t, o2.t);
        for (size_t i = 0; i < 15; i++) w[i] = va[i] == 0;
        compare(nm("LogicalNot", t, "strided").c_str(), read(o2), w, 0);
        aclDestroyScalar(s);
        for (Dev *d : {&a, &b, &o, &o2, &c}) release(*d);
    }
    /* where and masked fill */
    for (aclDataType t : {ACL_FLOAT, ACL_BF16, ACL_INT64}) {
        auto vc = values(15, ACL_BOOL, 3), va = values(15, t, 4), vb = values(20, t, 5);
        Dev cnd = make({3, 1, 5}, ACL_BOOL, vc), a = make({3, 1, 5}, t, va, STRIDED), b = make({4, 5}, t, vb, TRANSPOSED), o = make({3, 4, 5}, t, {});
        RUN(S, aclnnSWhere, cnd.t, a.t, b.t, o.t);
        std::vector<double> w(60);
        for (int q = 0; q < 3; q++)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 5; k++)
                    w[static_cast<size_t>((q * 4 + j) * 5 + k)] = vc[static_cast<size_t>(q * 5 + k)] != 0 ? va[static_cast<size_t>(q * 5 + k)] : vb[static_cast<size_t>(j * 5 + k)];
        compare(nm("SWhere", t, "broadcast").c_str(), read(o), w, 0);
        Dev x = make({3, 4, 5}, t, values(60, t, 6), TRANSPOSED);
        auto vx = read(x);
        double fv = 7;
        aclScalar *sv = aclCreateScalar(&fv, ACL_DOUBLE);
        Dev mask = make({4, 5}, ACL_BOOL, values(20, ACL_BOOL, 7));
        auto vm = read(mask);
        RUN(S, aclnnInplaceMaskedFillScalar, x.t, mask.t, sv);
        for (size_t i = 0; i < 60; i++) w[i] = vm[i % 20] != 0 ? 7 : vx[i];
        compare(nm("InplaceMaskedFillScalar", t, "transposed, broadcast mask").c_str(), read(x), w, 0);
        Dev val = make({}, t, {-3});
        RUN(S, aclnnInplaceMaskedFillTensor, x.t, mask.t, val.t);
        for (size_t i = 0; i < 60; i++) w[i] = vm[i % 20] != 0 ? -3 : vx[i];
        compare(nm("InplaceMaskedFillTensor", t, "").c_str(), read(x), w, 0);
        aclDestroyScalar(sv);
        for (Dev *d : {&cnd, &a, &b, &o, &x, &mask, &val}) release(*d);
    }
    printf("ok compare\n");
}

static void arith2_tests() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}) {
        auto va = values(15, t, 11, true, true), vb = values(20, t, 12);
        Dev a = make({3, 1, 5}, t, va), b = make({4, 5}, t, vb, TRANSPOSED), o = make({3, 4, 5}, t, {});
        auto f32 = [&](const std::function<float(float, float)> &ff, const std::function<double(double, double)> &fd) {
            return bcast(va, vb, [&](double x, double y) { return as_type(t == ACL_DOUBLE ? fd(x, y) : static_cast<double>(ff(static_cast<float>(x), static_cast<float>(y))), t); });
        };
        RUN(S, aclnnMinimum, a.t, b.t, o.t);
        compare(nm("Minimum", t, "broadcast").c_str(), read(o), bcast(va, vb, [](double x, double y) { return std::min(x, y); }), 0);
        RUN(S, aclnnPowTensorTensor, a.t, b.t, o.t);
        compare(nm("PowTensorTensor", t, "broadcast").c_str(), read(o), f32([](float x, float y) { return std::pow(x, y); }, [](double x, double y) { return std::pow(x, y); }), 0);
        float half = 0.5f;
        aclScalar *sh = aclCreateScalar(&half, ACL_FLOAT);
        RUN(S, aclnnRsub, a.t, b.t, sh, o.t);
        compare(nm("Rsub", t, "broadcast").c_str(), read(o), f32([](float x, float y) { return y - 0.5f * x; }, [](double x, double y) { return y - 0.5 * x; }), 0);
        for (int mode = 1; mode <= 2; mode++) {
            RUN(S, aclnnDivMod, b.t, a.t, mode, o.t);
            auto ref = bcast(va, vb, [&](double x, double y) {
                double q = t == ACL_DOUBLE ? y / x : static_cast<double>(static_cast<float>(y) / static_cast<float>(x));
                return as_type(mode == 1 ? std::trunc(q) : std::floor(q), t);
            });
            compare(nm(mode == 1 ? "DivMod trunc" : "DivMod floor", t, "broadcast").c_str(), read(o), ref, 0);
        }
        float e = 3;
        aclScalar *se = aclCreateScalar(&e, ACL_FLOAT);
        Dev o2 = make({3, 1, 5}, t, {});
        RUN(S, aclnnPowTensorScalar, a.t, se, o2.t);
        std::vector<double> w(15);
        for (size_t i = 0; i < 15; i++) w[i] = as_type(t == ACL_DOUBLE ? std::pow(va[i], 3.0) : static_cast<double>(std::pow(static_cast<float>(va[i]), 3.0f)), t);
        compare(nm("PowTensorScalar", t, "").c_str(), read(o2), w, 0);
        aclDestroyScalar(sh);
        aclDestroyScalar(se);
        for (Dev *d : {&a, &b, &o, &o2}) release(*d);
    }
    /* integer division modes: trunc and floor differ for negative quotients */
    {
        std::vector<double> x = {7, -7, 7, -7, 0}, y = {2, 2, -2, -2, 3};
        Dev a = make({5}, ACL_INT32, x), b = make({5}, ACL_INT32, y), o = make({5}, ACL_INT32, {});
        RUN(S, aclnnDivMod, a.t, b.t, 1, o.t);
        compare("DivMod trunc i32", read(o), {3, -3, -3, 3, 0}, 0);
        RUN(S, aclnnDivMod, a.t, b.t, 2, o.t);
        compare("DivMod floor i32", read(o), {3, -4, -4, 3, 0}, 0);
        for (Dev *d : {&a, &b, &o}) release(*d);
    }
    printf("ok arith2\n");
}

typedef float (*FF)(float);
typedef double (*FD)(double);

static void math_tests() {
    struct U {
        const char *name;
        aclnnStatus (*get)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        FF ff;
        FD fd;
        bool positive;
    } ops[] = {
        {"Abs", aclnnAbsGetWorkspaceSize, aclnnAbs, [](float x) { return std::fabs(x); }, [](double x) { return std::fabs(x); }, false},
        {"Log", aclnnLogGetWorkspaceSize, aclnnLog, [](float x) { return std::log(x); }, [](double x) { return std::log(x); }, true},
        {"Rsqrt", aclnnRsqrtGetWorkspaceSize, aclnnRsqrt, [](float x) { return 1.0f / std::sqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); }, true},
        {"Reciprocal", aclnnReciprocalGetWorkspaceSize, aclnnReciprocal, [](float x) { return 1.0f / x; }, [](double x) { return 1.0 / x; }, true},
        {"Sin", aclnnSinGetWorkspaceSize, aclnnSin, [](float x) { return std::sin(x); }, [](double x) { return std::sin(x); }, false},
        {"Cos", aclnnCosGetWorkspaceSize, aclnnCos, [](float x) { return std::cos(x); }, [](double x) { return std::cos(x); }, false},
        {"Tanh", aclnnTanhGetWorkspaceSize, aclnnTanh, [](float x) { return std::tanh(x); }, [](double x) { return std::tanh(x); }, false},
        {"Erf", aclnnErfGetWorkspaceSize, aclnnErf, [](float x) { return std::erf(x); }, [](double x) { return std::erf(x); }, false},
        /* aclnnGelu is CANN's tanh approximation (the exact form is GeluV2's approximate 0) */
        {"Gelu", aclnnGeluGetWorkspaceSize, aclnnGelu, [](float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }, [](double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }, false},
        {"Silu", aclnnSiluGetWorkspaceSize, aclnnSilu, [](float x) { return x / (1.0f + std::exp(-x)); }, [](double x) { return x / (1.0 + std::exp(-x)); }, false},
    };
    for (auto &u : ops) {
        for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}) {
            auto v = values(24, t, 21, true, u.positive);
            Dev x = make({4, 6}, t, v, TRANSPOSED), o = make({4, 6}, t, {}, STRIDED);
            uint64_t ws = 0;
            aclOpExecutor *ex = nullptr;
            NN(u.get(x.t, o.t, &ws, &ex));
            NN(u.run(nullptr, ws, ex, S));
            CHECK(aclrtSynchronizeStream(S));
            std::vector<double> w(24);
            for (size_t i = 0; i < 24; i++) w[i] = as_type(t == ACL_DOUBLE ? u.fd(v[i]) : static_cast<double>(u.ff(static_cast<float>(v[i]))), t);
            compare(nm(u.name, t, "transposed -> strided").c_str(), read(o), w, 0);
            release(x);
            release(o);
        }
    }
    /* an integer input of a float function computes in float32 */
    {
        Dev x = make({4}, ACL_INT32, {1, 4, 9, 16}), o = make({4}, ACL_FLOAT, {});
        RUN(S, aclnnLog, x.t, o.t);
        compare("Log i32 -> f32", read(o), {0, static_cast<double>(std::log(4.0f)), static_cast<double>(std::log(9.0f)), static_cast<double>(std::log(16.0f))}, 0);
        release(x);
        release(o);
    }
    /* backward forms: grad broadcast against x */
    for (aclDataType t : F3) {
        auto vg = values(20, t, 31), vx = values(60, t, 32);
        Dev g = make({4, 5}, t, vg, TRANSPOSED), x = make({3, 4, 5}, t, vx, STRIDED), o = make({3, 4, 5}, t, {});
        auto ref = [&](const std::function<float(float, float)> &f) {
            std::vector<double> w(60);
            for (size_t i = 0; i < 60; i++) w[i] = as_type(static_cast<double>(f(static_cast<float>(vg[i % 20]), static_cast<float>(vx[i]))), t);
            return w;
        };
        RUN(S, aclnnSigmoidBackward, g.t, x.t, o.t);
        compare(nm("SigmoidBackward", t, "broadcast").c_str(), read(o), ref([](float gv, float y) { return gv * y * (1.0f - y); }), 0);
        RUN(S, aclnnTanhBackward, g.t, x.t, o.t);
        compare(nm("TanhBackward", t, "broadcast").c_str(), read(o), ref([](float gv, float y) { return gv * (1.0f - y * y); }), 0);
        RUN(S, aclnnSiluBackward, g.t, x.t, o.t);
        compare(nm("SiluBackward", t, "broadcast").c_str(), read(o), ref([](float gv, float xv) {
                    float sg = 1.0f / (1.0f + std::exp(-xv));
                    return gv * sg * (1.0f + xv * (1.0f - sg));
                }), 0);
        RUN(S, aclnnGeluBackward, g.t, x.t, o.t); /* the derivative of the tanh form */
        compare(nm("GeluBackward", t, "broadcast").c_str(), read(o), ref([](float gv, float xv) {
                    const float k = 0.7978845608f, c = 0.044715f;
                    float th = std::tanh(k * (xv + c * xv * xv * xv));
                    return gv * (0.5f * (1.0f + th) + 0.5f * xv * (1.0f - th * th) * k * (1.0f + 3.0f * c * xv * xv));
                }), 2e-6);
        for (Dev *d : {&g, &x, &o}) release(*d);
    }
    printf("ok math\n");
}

static void reduce2_tests() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}) {
        double tol = t == ACL_FLOAT ? 1e-5 : t == ACL_DOUBLE ? 1e-12 : 1e-2;
        auto v = values(60, t, 41);
        Dev x = make({3, 4, 5}, t, v, TRANSPOSED);
        auto at = [&](int i, int j, int k) { return v[static_cast<size_t>((i * 4 + j) * 5 + k)]; };
        /* Mean over dim 1 */
        int64_t d1 = 1;
        aclIntArray *dims = aclCreateIntArray(&d1, 1);
        Dev mo = make({3, 5}, t, {});
        RUN(S, aclnnMean, x.t, dims, false, t, mo.t);
        std::vector<double> w(15);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 5; k++) {
                double s = 0;
                for (int j = 0; j < 4; j++) s += at(i, j, k);
                w[static_cast<size_t>(i * 5 + k)] = as_type(s / 4, t);
            }
        compare(nm("Mean dim 1", t, "transposed").c_str(), read(mo), w, tol);
        /* Amax over dims {0, 2} keepdim */
        int64_t d02[] = {0, -1};
        aclIntArray *dims2 = aclCreateIntArray(d02, 2);
        Dev am = make({1, 4, 1}, t, {});
        RUN(S, aclnnAmax, x.t, dims2, true, am.t);
        std::vector<double> w4(4, -1e300);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 5; k++) w4[static_cast<size_t>(j)] = std::max(w4[static_cast<size_t>(j)], at(i, j, k));
        compare(nm("Amax dims {0,-1} keepdim", t, "").c_str(), read(am), w4, 0);
        /* MaxDim with indices along dim 2, ArgMax along dim 0 */
        Dev mv = make({3, 4}, t, {}), mi = make({3, 4}, ACL_INT64, {});
        RUN(S, aclnnMaxDim, x.t, 2, false, mv.t, mi.t);
        std::vector<double> wv(12), wi(12);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++) {
                int best = 0;
                for (int k = 1; k < 5; k++)
                    if (at(i, j, k) > at(i, j, best)) best = k;
                wv[static_cast<size_t>(i * 4 + j)] = at(i, j, best);
                wi[static_cast<size_t>(i * 4 + j)] = best;
            }
        compare(nm("MaxDim values", t, "").c_str(), read(mv), wv, 0);
        compare(nm("MaxDim indices", t, "").c_str(), read(mi), wi, 0);
        Dev ai = make({1, 4, 5}, ACL_INT64, {});
        RUN(S, aclnnArgMax, x.t, 0, true, ai.t);
        std::vector<double> wa(20);
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) {
                int best = 0;
                for (int i = 1; i < 3; i++)
                    if (at(i, j, k) > at(best, j, k)) best = i;
                wa[static_cast<size_t>(j * 5 + k)] = best;
            }
        compare(nm("ArgMax dim 0 keepdim", t, "").c_str(), read(ai), wa, 0);
        /* LinalgVectorNorm ord 2 over all dims, Max of everything */
        float two = 2;
        aclScalar *ord = aclCreateScalar(&two, ACL_FLOAT);
        aclIntArray *none = aclCreateIntArray(nullptr, 0);
        Dev nrm = make({}, t, {});
        RUN(S, aclnnLinalgVectorNorm, x.t, ord, none, false, t, nrm.t);
        double ss = 0, mx = -1e300;
        for (double e : v) {
            ss += e * e;
            mx = std::max(mx, e);
        }
        compare(nm("LinalgVectorNorm 2", t, "").c_str(), read(nrm), {as_type(std::sqrt(ss), t)}, tol);
        RUN(S, aclnnMax, x.t, nrm.t);
        compare(nm("Max", t, "").c_str(), read(nrm), {mx}, 0);
        aclDestroyIntArray(dims);
        aclDestroyIntArray(dims2);
        aclDestroyIntArray(none);
        aclDestroyScalar(ord);
        for (Dev *d : {&x, &mo, &am, &mv, &mi, &ai, &nrm}) release(*d);
    }
    /* batched products: BatchMatMul with a transposed batch, Baddbmm with a broadcast bias */
    for (aclDataType t : F3) {
        double tol = t == ACL_FLOAT ? 1e-5 : 1e-2;
        int B = 3, M = 4, K = 6, N = 5;
        auto va = values(B * M * K, t, 51), vb = values(B * K * N, t, 52), vc = values(N, t, 53);
        Dev a = make({B, M, K}, t, va), b = make({B, K, N}, t, vb, TRANSPOSED), c = make({N}, t, vc), o = make({B, M, N}, t, {});
        std::vector<double> mm(static_cast<size_t>(B * M * N));
        for (int q = 0; q < B; q++)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double s = 0;
                    for (int k = 0; k < K; k++) s += va[static_cast<size_t>((q * M + i) * K + k)] * vb[static_cast<size_t>((q * K + k) * N + j)];
                    mm[static_cast<size_t>((q * M + i) * N + j)] = s;
                }
        RUN(S, aclnnBatchMatMul, a.t, b.t, o.t, 0);
        std::vector<double> w(mm.size());
        for (size_t i = 0; i < mm.size(); i++) w[i] = as_type(mm[i], t);
        compare(nm("BatchMatMul", t, "transposed batch2").c_str(), read(o), w, tol * 10);
        float be = 2, al = 0.5;
        aclScalar *sb = aclCreateScalar(&be, ACL_FLOAT), *sa = aclCreateScalar(&al, ACL_FLOAT);
        RUN(S, aclnnBaddbmm, c.t, a.t, b.t, sb, sa, o.t, 0);
        for (size_t i = 0; i < mm.size(); i++) w[i] = as_type(2 * vc[i % static_cast<size_t>(N)] + 0.5 * mm[i], t);
        compare(nm("Baddbmm", t, "broadcast self").c_str(), read(o), w, tol * 10);
        aclDestroyScalar(sb);
        aclDestroyScalar(sa);
        for (Dev *d : {&a, &b, &c, &o}) release(*d);
    }
    printf("ok reduce2\n");
}

static void nn_tests() {
    for (aclDataType t : F3) {
        double tol = t == ACL_FLOAT ? 1e-5 : 1e-2;
        auto v = values(24, t, 61);
        Dev x = make({4, 6}, t, v, TRANSPOSED), y = make({4, 6}, t, {});
        /* Softmax along dim 0 (a strided dimension) */
        RUN(S, aclnnSoftmax, x.t, 0, y.t);
        std::vector<double> w(24);
        for (int j = 0; j < 6; j++) {
            double m = -1e300, s = 0;
            for (int i = 0; i < 4; i++) m = std::max(m, v[static_cast<size_t>(i * 6 + j)]);
            for (int i = 0; i < 4; i++) s += std::exp(v[static_cast<size_t>(i * 6 + j)] - m);
            for (int i = 0; i < 4; i++) w[static_cast<size_t>(i * 6 + j)] = std::exp(v[static_cast<size_t>(i * 6 + j)] - m) / s;
        }
        std::vector<double> wr(24);
        for (size_t i = 0; i < 24; i++) wr[i] = as_type(w[i], t);
        compare(nm("Softmax dim 0", t, "transposed").c_str(), read(y), wr, tol);
        auto yv = read(y);
        auto gv = values(24, t, 62);
        Dev g = make({4, 6}, t, gv), gi = make({4, 6}, t, {});
        RUN(S, aclnnSoftmaxBackward, g.t, y.t, 0, gi.t);
        for (int j = 0; j < 6; j++) {
            double s = 0;
            for (int i = 0; i < 4; i++) s += gv[static_cast<size_t>(i * 6 + j)] * yv[static_cast<size_t>(i * 6 + j)];
            for (int i = 0; i < 4; i++) wr[static_cast<size_t>(i * 6 + j)] = as_type(yv[static_cast<size_t>(i * 6 + j)] * (gv[static_cast<size_t>(i * 6 + j)] - s), t);
        }
        compare(nm("SoftmaxBackward", t, "").c_str(), read(gi), wr, tol);
        /* LayerNorm over the last dim with weight and bias, then its backward */
        auto wv = values(6, t, 63), bv = values(6, t, 64);
        Dev lw = make({6}, t, wv), lb = make({6}, t, bv), lo = make({4, 6}, t, {}), mean = make({4, 1}, ACL_FLOAT, {}), rstd = make({4, 1}, ACL_FLOAT, {});
        int64_t ns = 6;
        aclIntArray *nsa = aclCreateIntArray(&ns, 1);
        RUN(S, aclnnLayerNorm, x.t, nsa, lw.t, lb.t, 1e-5, lo.t, mean.t, rstd.t);
        std::vector<double> wm(4), wrs(4);
        for (int i = 0; i < 4; i++) {
            double mu = 0, var = 0;
            for (int j = 0; j < 6; j++) mu += v[static_cast<size_t>(i * 6 + j)];
            mu /= 6;
            for (int j = 0; j < 6; j++) var += (v[static_cast<size_t>(i * 6 + j)] - mu) * (v[static_cast<size_t>(i * 6 + j)] - mu);
            var /= 6;
            double rs = 1 / std::sqrt(var + 1e-5);
            wm[static_cast<size_t>(i)] = static_cast<float>(mu);
            wrs[static_cast<size_t>(i)] = static_cast<float>(rs);
            for (int j = 0; j < 6; j++)
                wr[static_cast<size_t>(i * 6 + j)] = as_type((v[static_cast<size_t>(i * 6 + j)] - mu) * rs * wv[static_cast<size_t>(j)] + bv[static_cast<size_t>(j)], t);
        }
        compare(nm("LayerNorm", t, "transposed").c_str(), read(lo), wr, tol);
        compare(nm("LayerNorm mean", t, "").c_str(), read(mean), wm, 1e-6);
        compare(nm("LayerNorm rstd", t, "").c_str(), read(rstd), wrs, 1e-6);
        Dev gx = make({4, 6}, t, {}), gw = make({6}, t, {}), gb = make({6}, t, {});
        bool maskv[3] = {true, true, true};
        aclBoolArray *mask = aclCreateBoolArray(maskv, 3);
        RUN(S, aclnnLayerNormBackward, g.t, x.t, nsa, mean.t, rstd.t, lw.t, lb.t, mask, gx.t, gw.t, gb.t);
        std::vector<double> wgx(24), wgw(6, 0), wgb(6, 0);
        for (int i = 0; i < 4; i++) {
            double mu = wm[static_cast<size_t>(i)], rs = wrs[static_cast<size_t>(i)], s1 = 0, s2 = 0;
            std::vector<double> xh(6), gw_(6);
            for (int j = 0; j < 6; j++) {
                xh[static_cast<size_t>(j)] = (v[static_cast<size_t>(i * 6 + j)] - mu) * rs;
                gw_[static_cast<size_t>(j)] = gv[static_cast<size_t>(i * 6 + j)] * wv[static_cast<size_t>(j)];
                s1 += gw_[static_cast<size_t>(j)];
                s2 += gw_[static_cast<size_t>(j)] * xh[static_cast<size_t>(j)];
                wgw[static_cast<size_t>(j)] += gv[static_cast<size_t>(i * 6 + j)] * xh[static_cast<size_t>(j)];
                wgb[static_cast<size_t>(j)] += gv[static_cast<size_t>(i * 6 + j)];
            }
            for (int j = 0; j < 6; j++) wgx[static_cast<size_t>(i * 6 + j)] = as_type(rs * (gw_[static_cast<size_t>(j)] - s1 / 6 - xh[static_cast<size_t>(j)] * s2 / 6), t);
        }
        for (auto &e : wgw) e = as_type(e, t);
        for (auto &e : wgb) e = as_type(e, t);
        compare(nm("LayerNormBackward gradInput", t, "").c_str(), read(gx), wgx, tol * 10);
        compare(nm("LayerNormBackward gradWeight", t, "").c_str(), read(gw), wgw, tol * 10);
        compare(nm("LayerNormBackward gradBias", t, "").c_str(), read(gb), wgb, tol * 10);
        aclDestroyIntArray(nsa);
        aclDestroyBoolArray(mask);
        for (Dev *d : {&x, &y, &g, &gi, &lw, &lb, &lo, &mean, &rstd, &gx, &gw, &gb}) release(*d);
    }
    /* Embedding and its dense backward (padding index skipped) */
    {
        auto wv = values(15, ACL_FLOAT, 71);
        std::vector<double> idx = {4, 0, 4, 2};
        Dev w = make({5, 3}, ACL_FLOAT, wv, TRANSPOSED), ix = make({2, 2}, ACL_INT64, idx), o = make({2, 2, 3}, ACL_FLOAT, {});
        RUN(S, aclnnEmbedding, w.t, ix.t, o.t);
        std::vector<double> want(12);
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 3; j++) want[i * 3 + j] = wv[static_cast<size_t>(idx[i]) * 3 + j];
        compare("Embedding", read(o), want, 0);
        auto gv = values(12, ACL_FLOAT, 72);
        Dev g = make({2, 2, 3}, ACL_FLOAT, gv), gw = make({5, 3}, ACL_FLOAT, {});
        RUN(S, aclnnEmbeddingDenseBackward, g.t, ix.t, 5, 2, false, gw.t);
        std::vector<double> wg(15, 0);
        for (size_t i = 0; i < 4; i++)
            if (idx[i] != 2)
                for (size_t j = 0; j < 3; j++) wg[static_cast<size_t>(idx[i]) * 3 + j] += gv[i * 3 + j];
        compare("EmbeddingDenseBackward", read(gw), wg, 1e-6);
        for (Dev *d : {&w, &ix, &o, &g, &gw}) release(*d);
    }
    printf("ok nn\n");
}

static void random_tests() {
    /* Dropout: kept elements are scaled by 1/(1-p), the mask bits say which; the backward
       applies the same mask */
    int n = 1000;
    auto v = values(n, ACL_FLOAT, 81, true);
    Dev x = make({n}, ACL_FLOAT, v), o = make({n}, ACL_FLOAT, {}), m = make({128}, ACL_UINT8, {});
    RUN(S, aclnnDropout, x.t, 0.3, true, 5, 0, o.t, m.t);
    auto ov = read(o), mv = read(m);
    int kept = 0;
    bool ok = true;
    for (int i = 0; i < n; i++) {
        bool bit = (static_cast<int>(mv[static_cast<size_t>(i / 8)]) >> (i % 8)) & 1;
        kept += bit;
        double want = bit ? static_cast<double>(static_cast<float>(v[static_cast<size_t>(i)]) * static_cast<float>(1.0 / 0.7)) : 0.0;
        if (ov[static_cast<size_t>(i)] != want) ok = false;
    }
    g_checks++;
    if (!ok || kept < 600 || kept > 800) {
        printf("FAIL Dropout: kept %d of %d, values %s\n", kept, n, ok ? "ok" : "wrong");
        g_fail++;
    }
    Dev g = make({n}, ACL_FLOAT, v), gi = make({n}, ACL_FLOAT, {});
    RUN(S, aclnnDropoutBackward, g.t, m.t, 2.0, gi.t);
    std::vector<double> want(static_cast<size_t>(n));
    for (int i = 0; i < n; i++) want[static_cast<size_t>(i)] = ((static_cast<int>(mv[static_cast<size_t>(i / 8)]) >> (i % 8)) & 1) ? static_cast<double>(static_cast<float>(v[static_cast<size_t>(i)]) * 2.0f) : 0.0;
    compare("DropoutBackward", read(gi), want, 0);
    /* Bernoulli p = 0.25 and InplaceUniform [-1, 3): reproducible, plausible */
    Dev b1 = make({4000}, ACL_FLOAT, {}), b2 = make({4000}, ACL_FLOAT, {});
    float p = 0.25f;
    aclScalar *sp = aclCreateScalar(&p, ACL_FLOAT);
    RUN(S, aclnnBernoulli, b1.t, sp, 9, 3, b1.t);
    RUN(S, aclnnInplaceBernoulli, b2.t, sp, 9, 3);
    auto r1 = read(b1);
    compare("Bernoulli reproducible", read(b2), r1, 0);
    double ones = 0;
    for (double e : r1) ones += e;
    g_checks++;
    if (ones < 850 || ones > 1150) {
        printf("FAIL Bernoulli: %f ones of 4000 at p 0.25\n", ones);
        g_fail++;
    }
    RUN(S, aclnnInplaceUniform, b1.t, -1.0, 3.0, 11, 0);
    auto u = read(b1);
    double mean = 0, lo = 1e9, hi = -1e9;
    for (double e : u) {
        mean += e;
        lo = std::min(lo, e);
        hi = std::max(hi, e);
    }
    mean /= 4000;
    g_checks++;
    if (lo < -1 || hi >= 3 || std::fabs(mean - 1) > 0.1) {
        printf("FAIL InplaceUniform: min %f max %f mean %f\n", lo, hi, mean);
        g_fail++;
    }
    /* Arange */
    Dev ar = make({5}, ACL_FLOAT, {}), ai = make({4}, ACL_INT64, {});
    float s0 = 1, s1 = 2.5f, st = 0.3f;
    aclScalar *a0 = aclCreateScalar(&s0, ACL_FLOAT), *a1 = aclCreateScalar(&s1, ACL_FLOAT), *as = aclCreateScalar(&st, ACL_FLOAT);
    RUN(S, aclnnArange, a0, a1, as, ar.t);
    std::vector<double> wa(5);
    for (int i = 0; i < 5; i++) wa[static_cast<size_t>(i)] = static_cast<float>(1.0 + i * static_cast<double>(0.3f));
    compare("Arange f32", read(ar), wa, 0);
    int64_t i0 = 10, i1 = 2, is = -2;
    aclScalar *b0 = aclCreateScalar(&i0, ACL_INT64), *b1s = aclCreateScalar(&i1, ACL_INT64), *bs = aclCreateScalar(&is, ACL_INT64);
    RUN(S, aclnnArange, b0, b1s, bs, ai.t);
    compare("Arange i64 descending", read(ai), {10, 8, 6, 4}, 0);
    /* Lerp with a tensor weight */
    Dev ls = make({3}, ACL_FLOAT, {1, 2, 3}), le = make({3}, ACL_FLOAT, {5, 6, 7}), lw = make({3}, ACL_FLOAT, {0, 0.25, 1}), lo2 = make({3}, ACL_FLOAT, {});
    RUN(S, aclnnLerp, ls.t, le.t, lw.t, lo2.t);
    compare("Lerp", read(lo2), {1, 3, 7}, 0);
    for (aclScalar *sc : {sp, a0, a1, as, b0, b1s, bs}) aclDestroyScalar(sc);
    for (Dev *d : {&x, &o, &m, &g, &gi, &b1, &b2, &ar, &ai, &ls, &le, &lw, &lo2}) release(*d);
    printf("ok random2\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    compare_tests();
    arith2_tests();
    math_tests();
    reduce2_tests();
    nn_tests();
    random_tests();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
