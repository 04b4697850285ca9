/* Every remaining exported operator at least once against the host reference of ops_ref.h:
 * the in-place and scalar forms not exercised by aclnn_ops.cpp / aclnn_ops2.cpp, the other
 * reductions, the batched and in-place products, the layer-norm variants, the tensor-seeded
 * random operators and the whole Foreach family (every V1, V2, list and unary function). */
#include <algorithm>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_sub.h"
#include "aclnnop/aclnn_rsub.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_div.h"
#include "aclnnop/aclnn_pow.h"
#include "aclnnop/aclnn_pow_tensor_tensor.h"
#include "aclnnop/aclnn_eq_scalar.h"
#include "aclnnop/aclnn_eq_tensor.h"
#include "aclnnop/aclnn_ne_tensor.h"
#include "aclnnop/aclnn_ne_scalar.h"
#include "aclnnop/aclnn_gt_tensor.h"
#include "aclnnop/aclnn_ge_tensor.h"
#include "aclnnop/aclnn_ge_scalar.h"
#include "aclnnop/aclnn_lt_tensor.h"
#include "aclnnop/aclnn_lt_scalar.h"
#include "aclnnop/aclnn_le_scalar.h"
#include "aclnnop/aclnn_logical_and.h"
#include "aclnnop/aclnn_logical_or.h"
#include "aclnnop/aclnn_logical_not.h"
#include "aclnnop/aclnn_neg.h"
#include "aclnnop/aclnn_exp.h"
#include "aclnnop/aclnn_log.h"
#include "aclnnop/aclnn_sqrt.h"
#include "aclnnop/aclnn_rsqrt.h"
#include "aclnnop/aclnn_reciprocal.h"
#include "aclnnop/aclnn_sin.h"
#include "aclnnop/aclnn_cos.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_erf.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_addcmul.h"
#include "aclnnop/aclnn_addcdiv.h"
#include "aclnnop/aclnn_lerp_tensor.h"
#include "aclnnop/aclnn_lerp_scalar.h"
#include "aclnnop/aclnn_amin.h"
#include "aclnnop/aclnn_min.h"
#include "aclnnop/aclnn_min_dim.h"
#include "aclnnop/aclnn_argmin.h"
#include "aclnnop/aclnn_mean.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_baddbmm.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_normal.h"
#include "aclnnop/aclnn_uniform.h"
#include "aclnnop/aclnn_bernoulli.h"
#include "aclnnop/aclnn_trans_matmul_weight.h"
#include "aclnnop/aclnn_mm.h"
#include "aclnnop/aclnn_clamp.h"
#include "aclnnop/aclnn_hardtanh.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_floor.h"
#include "aclnnop/aclnn_ceil.h"
#include "aclnnop/aclnn_round.h"
#include "aclnnop/aclnn_trunc.h"
#include "aclnnop/aclnn_sign.h"
#include "aclnnop/aclnn_square.h"
#include "aclnnop/aclnn_exp2.h"
#include "aclnnop/aclnn_log2.h"
#include "aclnnop/aclnn_log10.h"
#include "aclnnop/aclnn_log1p.h"
#include "aclnnop/aclnn_expm1.h"
#include "aclnnop/aclnn_asin.h"
#include "aclnnop/aclnn_acos.h"
#include "aclnnop/aclnn_atan.h"
#include "aclnnop/aclnn_sinh.h"
#include "aclnnop/aclnn_cosh.h"
#include "aclnnop/aclnn_tan.h"
#include "aclnnop/aclnn_isfinite.h"
#include "aclnnop/aclnn_remainder.h"
#include "aclnnop/aclnn_floor_divide.h"
#include "aclnnop/aclnn_atan2.h"
#include "aclnnop/aclnn_any.h"
#include "aclnnop/aclnn_all.h"
#include "aclnnop/aclnn_prod.h"
#include "aclnnop/aclnn_cumsum.h"
#include "aclnnop/aclnn_equal.h"
#include "aclnnop/aclnn_fill_tensor.h"
#include "aclnnop/aclnn_index_select.h"
#include "aclnnop/aclnn_gather.h"
#include "aclnnop/aclnn_foreach_abs.h"
#include "aclnnop/aclnn_foreach_acos.h"
#include "aclnnop/aclnn_foreach_asin.h"
#include "aclnnop/aclnn_foreach_atan.h"
#include "aclnnop/aclnn_foreach_cos.h"
#include "aclnnop/aclnn_foreach_cosh.h"
#include "aclnnop/aclnn_foreach_erf.h"
#include "aclnnop/aclnn_foreach_erfc.h"
#include "aclnnop/aclnn_foreach_exp.h"
#include "aclnnop/aclnn_foreach_expm1.h"
#include "aclnnop/aclnn_foreach_log.h"
#include "aclnnop/aclnn_foreach_log10.h"
#include "aclnnop/aclnn_foreach_log1p.h"
#include "aclnnop/aclnn_foreach_log2.h"
#include "aclnnop/aclnn_foreach_neg.h"
#include "aclnnop/aclnn_foreach_reciprocal.h"
#include "aclnnop/aclnn_foreach_sigmoid.h"
#include "aclnnop/aclnn_foreach_sign.h"
#include "aclnnop/aclnn_foreach_sin.h"
#include "aclnnop/aclnn_foreach_sinh.h"
#include "aclnnop/aclnn_foreach_sqrt.h"
#include "aclnnop/aclnn_foreach_tan.h"
#include "aclnnop/aclnn_foreach_tanh.h"
#include "aclnnop/aclnn_foreach_mul_list.h"
#include "aclnnop/aclnn_foreach_div_list.h"
#include "aclnnop/aclnn_foreach_maximum_list.h"
#include "aclnnop/aclnn_foreach_minimum_list.h"
#include "aclnnop/aclnn_foreach_pow_list.h"
#include "aclnnop/aclnn_foreach_sub_list.h"
#include "aclnnop/aclnn_foreach_sub_list_v2.h"
#include "aclnnop/aclnn_foreach_add_scalar_v2.h"
#include "aclnnop/aclnn_foreach_add_scalar_list.h"
#include "aclnnop/aclnn_foreach_sub_scalar.h"
#include "aclnnop/aclnn_foreach_sub_scalar_v2.h"
#include "aclnnop/aclnn_foreach_sub_scalar_list.h"
#include "aclnnop/aclnn_foreach_mul_scalar_list.h"
#include "aclnnop/aclnn_foreach_div_scalar.h"
#include "aclnnop/aclnn_foreach_div_scalar_list.h"
#include "aclnnop/aclnn_foreach_maximum_scalar.h"
#include "aclnnop/aclnn_foreach_maximum_scalar_v2.h"
#include "aclnnop/aclnn_foreach_maximum_scalar_list.h"
#include "aclnnop/aclnn_foreach_minimum_scalar.h"
#include "aclnnop/aclnn_foreach_minimum_scalar_v2.h"
#include "aclnnop/aclnn_foreach_minimum_scalar_list.h"
#include "aclnnop/aclnn_foreach_pow_scalar.h"
#include "aclnnop/aclnn_foreach_pow_scalar_v2.h"
#include "aclnnop/aclnn_foreach_pow_scalar_list.h"
#include "aclnnop/aclnn_foreach_pow_scalar_and_tensor.h"
#include "aclnnop/aclnn_foreach_addcmul_scalar.h"
#include "aclnnop/aclnn_foreach_addcmul_scalar_list.h"
#include "aclnnop/aclnn_foreach_addcmul_list.h"
#include "aclnnop/aclnn_foreach_addcdiv_scalar.h"
#include "aclnnop/aclnn_foreach_addcdiv_scalar_list.h"
#include "aclnnop/aclnn_foreach_addcdiv_list.h"
#include "aclnnop/aclnn_foreach_lerp_list.h"
#include "aclnnop/aclnn_foreach_zero_inplace.h"
#include "aclnnop/aclnn_foreach_copy.h"

static aclrtStream S;

typedef float (*F1)(float);
typedef float (*F2)(float, float);

/* a float32 [2,3] tensor (transposed layout) with values v */
static Dev t23(const std::vector<double> &v, Layout l = TRANSPOSED) { return make({2, 3}, ACL_FLOAT, v, l); }

static std::vector<double> map1(const std::vector<double> &a, F1 f) {
    std::vector<double> r(a.size());
    for (size_t i = 0; i < a.size(); i++) r[i] = f(static_cast<float>(a[i]));
    return r;
}

static std::vector<double> map2(const std::vector<double> &a, const std::vector<double> &b, F2 f) {
    std::vector<double> r(a.size());
    for (size_t i = 0; i < a.size(); i++) r[i] = f(static_cast<float>(a[i]), static_cast<float>(b[i % b.size()]));
    return r;
}

static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

static void inplace_and_scalar_forms() {
    const std::vector<double> A = {1.5, -2.25, 3, 0.5, 4, -1}, B = {0.5, 2, -1.5, 4, 0.25, 3};
    aclScalar *two = fs(2), *half = fs(0.5f);
    auto fresh = [&](const std::vector<double> &v) { return t23(v, STRIDED); };
    Dev b = t23(B), o = make({2, 3}, ACL_FLOAT, {});
#define INPLACE_T(fn, f, ...)                                                    \
    do {                                                                         \
        Dev x = fresh(A);                                                        \
        RUN(S, fn, x.t, __VA_ARGS__);                                            \
        compare(#fn, read(x), map2(A, B, f), 0);                                 \
        release(x);                                                              \
    } while (0)
    INPLACE_T(aclnnInplaceSub, [](float x, float y) { return x - 2.0f * y; }, b.t, two);
    INPLACE_T(aclnnInplaceMul, [](float x, float y) { return x * y; }, b.t);
    INPLACE_T(aclnnInplaceDiv, [](float x, float y) { return x / y; }, b.t);
    INPLACE_T(aclnnInplaceDivMod, [](float x, float y) { return std::floor(x / y); }, b.t, 2);
    INPLACE_T(aclnnInplacePowTensorTensor, [](float x, float y) { return std::pow(x, y); }, b.t);
    INPLACE_T(aclnnInplaceEqTensor, [](float x, float y) { return x == y ? 1.0f : 0.0f; }, b.t);
    INPLACE_T(aclnnInplaceNeTensor, [](float x, float y) { return x != y ? 1.0f : 0.0f; }, b.t);
    INPLACE_T(aclnnInplaceLtTensor, [](float x, float y) { return x < y ? 1.0f : 0.0f; }, b.t);
    INPLACE_T(aclnnInplaceLogicalAnd, [](float x, float y) { return (x != 0 && y != 0) ? 1.0f : 0.0f; }, b.t);
    INPLACE_T(aclnnInplaceLogicalOr, [](float x, float y) { return (x != 0 || y != 0) ? 1.0f : 0.0f; }, b.t);
    INPLACE_T(aclnnInplaceLerp, [](float x, float y) { return x + 0.25f * (y - x); }, b.t, make({1}, ACL_FLOAT, {0.25}).t);
#define INPLACE_S(fn, f, ...)                                                    \
    do {                                                                         \
        Dev x = fresh(A);                                                        \
        RUN(S, fn, x.t, __VA_ARGS__);                                            \
        compare(#fn, read(x), map1(A, f), 0);                                    \
        release(x);                                                              \
    } while (0)
    INPLACE_S(aclnnInplaceAdds, [](float x) { return x + 2.0f * 0.5f; }, half, two);
    INPLACE_S(aclnnInplaceSubs, [](float x) { return x - 2.0f * 0.5f; }, half, two);
    INPLACE_S(aclnnInplaceDivMods, [](float x) { return std::trunc(x / 2.0f); }, two, 1);
    INPLACE_S(aclnnInplacePowTensorScalar, [](float x) { return std::pow(x, 2.0f); }, two);
    INPLACE_S(aclnnInplaceEqScalar, [](float x) { return x == 2.0f ? 1.0f : 0.0f; }, two);
    INPLACE_S(aclnnInplaceNeScalar, [](float x) { return x != 2.0f ? 1.0f : 0.0f; }, two);
    INPLACE_S(aclnnInplaceGeScalar, [](float x) { return x >= 2.0f ? 1.0f : 0.0f; }, two);
    INPLACE_S(aclnnInplaceLtScalar, [](float x) { return x < 2.0f ? 1.0f : 0.0f; }, two);
    INPLACE_S(aclnnInplaceLeScalar, [](float x) { return x <= 2.0f ? 1.0f : 0.0f; }, two);
#define INPLACE_U(fn, f)                                                         \
    do {                                                                         \
        Dev x = fresh(P);                                                        \
        RUN(S, fn, x.t);                                                         \
        compare(#fn, read(x), map1(P, f), 0);                                    \
        release(x);                                                              \
    } while (0)
    const std::vector<double> P = {1.5, 2.25, 3, 0.5, 4, 0.125};
    INPLACE_U(aclnnInplaceNeg, [](float x) { return -x; });
    INPLACE_U(aclnnInplaceExp, [](float x) { return std::exp(x); });
    INPLACE_U(aclnnInplaceLog, [](float x) { return std::log(x); });
    INPLACE_U(aclnnInplaceSqrt, [](float x) { return std::sqrt(x); });
    INPLACE_U(aclnnInplaceRsqrt, [](float x) { return 1.0f / std::sqrt(x); });
    INPLACE_U(aclnnInplaceReciprocal, [](float x) { return 1.0f / x; });
    INPLACE_U(aclnnInplaceSin, [](float x) { return std::sin(x); });
    INPLACE_U(aclnnInplaceCos, [](float x) { return std::cos(x); });
    INPLACE_U(aclnnInplaceTanh, [](float x) { return std::tanh(x); });
    INPLACE_U(aclnnInplaceErf, [](float x) { return std::erf(x); });
    INPLACE_U(aclnnInplaceSigmoid, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
    INPLACE_U(aclnnInplaceLogicalNot, [](float x) { return x == 0 ? 1.0f : 0.0f; });
    /* out-of-place tensor and scalar forms */
    Dev a = t23(A);
#define OUT_S(fn, f, ...)                                                        \
    do {                                                                         \
        RUN(S, fn, a.t, __VA_ARGS__, o.t);                                       \
        compare(#fn, read(o), map1(A, f), 0);                                    \
    } while (0)
    OUT_S(aclnnSubs, [](float x) { return x - 2.0f * 0.5f; }, half, two);
    OUT_S(aclnnRsubs, [](float x) { return 0.5f - 2.0f * x; }, half, two);
    OUT_S(aclnnDivMods, [](float x) { return std::floor(x / 0.5f); }, half, 2);
    OUT_S(aclnnLerps, [](float x) { return x + 0.5f * (2.0f - x); }, make({1}, ACL_FLOAT, {2}).t, half);
    {
        RUN(S, aclnnPowScalarTensor, two, a.t, o.t);
        compare("aclnnPowScalarTensor", read(o), map1(A, [](float x) { return std::pow(2.0f, x); }), 0);
        Dev ob = make({2, 3}, ACL_BOOL, {});
        struct C {
            const char *n;
            aclnnStatus (*g)(const aclTensor *, const aclScalar *, aclTensor *, uint64_t *, aclOpExecutor **);
            aclnnStatus (*r)(void *, uint64_t, aclOpExecutor *, aclrtStream);
            F1 f;
        } cs[] = {
            {"EqScalar", aclnnEqScalarGetWorkspaceSize, aclnnEqScalar, [](float x) { return x == 2.0f ? 1.0f : 0.0f; }},
            {"NeScalar", aclnnNeScalarGetWorkspaceSize, aclnnNeScalar, [](float x) { return x != 2.0f ? 1.0f : 0.0f; }},
            {"GeScalar", aclnnGeScalarGetWorkspaceSize, aclnnGeScalar, [](float x) { return x >= 2.0f ? 1.0f : 0.0f; }},
            {"LtScalar", aclnnLtScalarGetWorkspaceSize, aclnnLtScalar, [](float x) { return x < 2.0f ? 1.0f : 0.0f; }},
            {"LeScalar", aclnnLeScalarGetWorkspaceSize, aclnnLeScalar, [](float x) { return x <= 2.0f ? 1.0f : 0.0f; }},
        };
        for (auto &c : cs) {
            uint64_t ws;
            aclOpExecutor *ex;
            NN(c.g(a.t, two, ob.t, &ws, &ex));
            NN(c.r(nullptr, ws, ex, S));
            CHECK(aclrtSynchronizeStream(S));
            compare(c.n, read(ob), map1(A, c.f), 0);
        }
        struct T {
            const char *n;
            aclnnStatus (*g)(const aclTensor *, const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
            aclnnStatus (*r)(void *, uint64_t, aclOpExecutor *, aclrtStream);
            F2 f;
        } ts[] = {
            {"NeTensor", aclnnNeTensorGetWorkspaceSize, aclnnNeTensor, [](float x, float y) { return x != y ? 1.0f : 0.0f; }},
            {"GtTensor", aclnnGtTensorGetWorkspaceSize, aclnnGtTensor, [](float x, float y) { return x > y ? 1.0f : 0.0f; }},
            {"GeTensor", aclnnGeTensorGetWorkspaceSize, aclnnGeTensor, [](float x, float y) { return x >= y ? 1.0f : 0.0f; }},
            {"LtTensor", aclnnLtTensorGetWorkspaceSize, aclnnLtTensor, [](float x, float y) { return x < y ? 1.0f : 0.0f; }},
            {"LogicalOr", aclnnLogicalOrGetWorkspaceSize, aclnnLogicalOr, [](float x, float y) { return (x != 0 || y != 0) ? 1.0f : 0.0f; }},
        };
        for (auto &c : ts) {
            uint64_t ws;
            aclOpExecutor *ex;
            NN(c.g(a.t, b.t, ob.t, &ws, &ex));
            NN(c.r(nullptr, ws, ex, S));
            CHECK(aclrtSynchronizeStream(S));
            compare(c.n, read(ob), map2(A, B, c.f), 0);
        }
        release(ob);
        Dev c = t23(P, STRIDED);
        RUN(S, aclnnAddcmul, a.t, b.t, c.t, half, o.t);
        std::vector<double> w(6);
        for (size_t i = 0; i < 6; i++) w[i] = static_cast<float>(A[i]) + 0.5f * static_cast<float>(B[i]) * static_cast<float>(P[i]);
        compare("aclnnAddcmul", read(o), w, 0);
        RUN(S, aclnnAddcdiv, a.t, b.t, c.t, half, o.t);
        for (size_t i = 0; i < 6; i++) w[i] = static_cast<float>(A[i]) + 0.5f * static_cast<float>(B[i]) / static_cast<float>(P[i]);
        compare("aclnnAddcdiv", read(o), w, 0);
        release(c);
    }
    aclDestroyScalar(two);
    aclDestroyScalar(half);
    release(a);
    release(b);
    release(o);
    printf("ok inplace/scalar forms\n");
}

static void reductions_products() {
    std::vector<double> v = {3, -1, 4, 1, -5, 9, 2, 6, -5, 3, 5, 8};
    Dev x = make({3, 4}, ACL_FLOAT, v, TRANSPOSED);
    int64_t d1 = 1;
    aclIntArray *dims = aclCreateIntArray(&d1, 1);
    Dev o3 = make({3}, ACL_FLOAT, {}), i3 = make({3}, ACL_INT64, {}), s0 = make({}, ACL_FLOAT, {});
    RUN(S, aclnnAmin, x.t, dims, false, o3.t);
    compare("Amin dim 1", read(o3), {-1, -5, -5}, 0);
    RUN(S, aclnnMinDim, x.t, -1, false, o3.t, i3.t);
    compare("MinDim values", read(o3), {-1, -5, -5}, 0);
    compare("MinDim indices (first of equal minima)", read(i3), {1, 0, 0}, 0);
    RUN(S, aclnnArgMin, x.t, 1, false, i3.t);
    compare("ArgMin", read(i3), {1, 0, 0}, 0);
    RUN(S, aclnnMin, x.t, s0.t);
    compare("Min", read(s0), {-5}, 0);
    RUN(S, aclnnMeanV2, x.t, dims, false, false, o3.t);
    compare("MeanV2 dim 1", read(o3), {7.0 / 4, 12.0 / 4, 11.0 / 4}, 1e-6);
    aclDestroyIntArray(dims);
    /* Matmul [2,3,4] @ [4,2] (batch broadcast), WeightNz forms with ND weights */
    std::vector<double> a = values(24, ACL_FLOAT, 1), b = values(8, ACL_FLOAT, 2), bias = values(2, ACL_FLOAT, 3);
    Dev da = make({2, 3, 4}, ACL_FLOAT, a), db = make({4, 2}, ACL_FLOAT, b, TRANSPOSED), dout = make({2, 3, 2}, ACL_FLOAT, {});
    std::vector<double> want(12);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++) {
                double s = 0;
                for (int k = 0; k < 4; k++) s += a[static_cast<size_t>((q * 3 + i) * 4 + k)] * b[static_cast<size_t>(k * 2 + j)];
                want[static_cast<size_t>((q * 3 + i) * 2 + j)] = s;
            }
    RUN(S, aclnnMatmul, da.t, db.t, dout.t, 0);
    compare("Matmul [2,3,4] @ [4,2]", read(dout), want, 1e-5);
    RUN(S, aclnnMatmulWeightNz, da.t, db.t, dout.t, 0);
    compare("MatmulWeightNz (ND weight)", read(dout), want, 1e-5);
    Dev db3 = make({2, 4, 2}, ACL_FLOAT, std::vector<double>(b.begin(), b.end()));
    std::vector<double> b3(b);
    b3.insert(b3.end(), b.begin(), b.end());
    release(db3);
    db3 = make({2, 4, 2}, ACL_FLOAT, b3);
    RUN(S, aclnnBatchMatMulWeightNz, da.t, db3.t, dout.t, 0);
    compare("BatchMatMulWeightNz (ND weight)", read(dout), want, 1e-5);
    /* InplaceBaddbmm: self = 1*self + 2*(a @ b3) */
    Dev self3 = make({2, 3, 2}, ACL_FLOAT, std::vector<double>(12, 1.0));
    aclScalar *one = fs(1), *two = fs(2);
    RUN(S, aclnnInplaceBaddbmm, self3.t, da.t, db3.t, one, two, 0);
    std::vector<double> w2(12);
    for (size_t i = 0; i < 12; i++) w2[i] = 1 + 2 * want[i];
    compare("InplaceBaddbmm", read(self3), w2, 1e-5);
    /* InplaceAddmm and AddmmWeightNz on [3,4] @ [4,2] */
    Dev m1 = make({3, 4}, ACL_FLOAT, a), self2 = make({3, 2}, ACL_FLOAT, std::vector<double>(6, 1.0)), o2 = make({3, 2}, ACL_FLOAT, {}), bv = make({2}, ACL_FLOAT, bias);
    RUN(S, aclnnInplaceAddmm, self2.t, m1.t, db.t, one, two, 0);
    for (size_t i = 0; i < 6; i++) w2[i] = 1 + 2 * want[i];
    compare("InplaceAddmm", read(self2), std::vector<double>(w2.begin(), w2.begin() + 6), 1e-5);
    RUN(S, aclnnAddmmWeightNz, bv.t, m1.t, db.t, one, one, o2.t, 0);
    for (size_t i = 0; i < 6; i++) w2[i] = bias[i % 2] + want[i];
    compare("AddmmWeightNz (ND weight)", read(o2), std::vector<double>(w2.begin(), w2.begin() + 6), 1e-5);
    aclDestroyScalar(one);
    aclDestroyScalar(two);
    /* a weight converted to FRACTAL_NZ by aclnnTransMatmulWeight (odd K and N: padded) feeds
       MatmulWeightNz; a plain product refuses it */
    {
        int M = 3, K = 37, N = 21;
        auto vx = values(M * K, ACL_FLOAT16, 91), vw = values(K * N, ACL_FLOAT16, 92);
        Dev x16 = make({M, K}, ACL_FLOAT16, vx), w16 = make({K, N}, ACL_FLOAT16, vw), o16 = make({M, N}, ACL_FLOAT16, {});
        /* the private copy needs the padded size: reallocate the weight big enough */
        uint64_t nzsize = 0;
        int64_t wshape[] = {K, N};
        aclIntArray *wsa = aclCreateIntArray(wshape, 2);
        NN(aclnnCalculateMatmulWeightSizeV2(wsa, ACL_FLOAT16, &nzsize));
        void *big = nullptr;
        CHECK(aclrtMalloc(&big, nzsize * 2, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclrtMemcpy(big, nzsize * 2, w16.mem, static_cast<size_t>(K * N) * 2, ACL_MEMCPY_DEVICE_TO_DEVICE));
        NN(aclSetRawTensorAddr(w16.t, big));
        RUN(S, aclnnTransMatmulWeight, w16.t);
        RUN(S, aclnnMatmulWeightNz, x16.t, w16.t, o16.t, 1);
        std::vector<double> want(static_cast<size_t>(M * N));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int k = 0; k < K; k++) acc += vx[static_cast<size_t>(i * K + k)] * vw[static_cast<size_t>(k * N + j)];
                want[static_cast<size_t>(i * N + j)] = as_type(acc, ACL_FLOAT16);
            }
        compare("MatmulWeightNz (weight from aclnnTransMatmulWeight)", read(o16), want, 1e-2);
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        aclnnStatus st = aclnnMmGetWorkspaceSize(x16.t, w16.t, o16.t, 1, &ws, &ex);
        const char *m = aclGetRecentErrMsg();
        g_checks++;
        if (st != ACLNN_ERR_PARAM_INVALID || m == nullptr || strstr(m, "mat2 is stored in format FRACTAL_NZ") == nullptr) {
            printf("FAIL Mm with an NZ weight: %d %s\n", static_cast<int>(st), m ? m : "");
            g_fail++;
        }
        aclDestroyIntArray(wsa);
        aclrtFree(big);
        release(x16);
        release(w16);
        release(o16);
    }
    /* FastLayerNorm and LayerNormWithImplMode give LayerNorm's result */
    Dev x2 = make({2, 3}, ACL_FLOAT, {1, 2, 3, 4, 6, 8}), y = make({2, 3}, ACL_FLOAT, {});
    int64_t ns = 3;
    aclIntArray *nsa = aclCreateIntArray(&ns, 1);
    auto ln = [](double p, double q, double r, double e) {
        double mu = (p + q + r) / 3, var = ((p - mu) * (p - mu) + (q - mu) * (q - mu) + (r - mu) * (r - mu)) / 3;
        return (e - mu) / std::sqrt(var + 1e-5);
    };
    std::vector<double> wl = {ln(1, 2, 3, 1), ln(1, 2, 3, 2), ln(1, 2, 3, 3), ln(4, 6, 8, 4), ln(4, 6, 8, 6), ln(4, 6, 8, 8)};
    RUN(S, aclnnFastLayerNorm, x2.t, nsa, nullptr, nullptr, 1e-5, y.t, nullptr, nullptr);
    compare("FastLayerNorm (no weight, bias, stats)", read(y), wl, 1e-5);
    RUN(S, aclnnLayerNormWithImplMode, x2.t, nsa, nullptr, nullptr, 1e-5, y.t, nullptr, nullptr, 0);
    compare("LayerNormWithImplMode", read(y), wl, 1e-5);
    aclDestroyIntArray(nsa);
    for (Dev *d : {&x, &o3, &i3, &s0, &da, &db, &dout, &db3, &self3, &m1, &self2, &o2, &bv, &x2, &y}) release(*d);
    printf("ok reductions/products\n");
}

static void random_tensor_forms() {
    Dev a = make({1000}, ACL_FLOAT, {}), b = make({1000}, ACL_FLOAT, {});
    Dev seed = make({1}, ACL_INT64, {77}), off = make({1}, ACL_INT64, {5});
    RUN(S, aclnnInplaceNormalTensor, a.t, 0.0f, 1.0f, seed.t, off.t, 3);
    RUN(S, aclnnInplaceNormal, b.t, 0.0f, 1.0f, 77, 8);
    compare("InplaceNormalTensor = InplaceNormal(seed, offset tensor + offset)", read(a), read(b), 0);
    RUN(S, aclnnInplaceUniformTensor, a.t, 0.0, 1.0, seed.t, off.t, 3);
    RUN(S, aclnnInplaceUniform, b.t, 0.0, 1.0, 77, 8);
    compare("InplaceUniformTensor = InplaceUniform", read(a), read(b), 0);
    std::vector<double> pv(1000);
    for (size_t i = 0; i < 1000; i++) pv[i] = i < 500 ? 0.0 : 1.0;
    Dev p = make({1000}, ACL_FLOAT, pv);
    RUN(S, aclnnBernoulliTensor, a.t, p.t, 1, 2, b.t);
    compare("BernoulliTensor p in {0, 1}", read(b), pv, 0);
    RUN(S, aclnnInplaceBernoulliTensor, a.t, p.t, 1, 2);
    compare("InplaceBernoulliTensor p in {0, 1}", read(a), pv, 0);
    for (Dev *d : {&a, &b, &seed, &off, &p}) release(*d);
    printf("ok random tensor forms\n");
}

/* ---- Foreach: each function once, on lists of two tensors of different shapes ---- */
struct L {
    Dev d0, d1;
    aclTensorList *list;
    std::vector<double> v0, v1;
};

static L mklist(unsigned seed, bool positive = false, bool small = false) {
    L l;
    l.v0 = values(6, ACL_FLOAT, seed, true, positive);
    l.v1 = values(4, ACL_FLOAT, seed + 100, true, positive);
    if (small) {
        for (auto &e : l.v0) e = static_cast<float>(e / 16);
        for (auto &e : l.v1) e = static_cast<float>(e / 16);
    }
    l.d0 = make({2, 3}, ACL_FLOAT, l.v0, TRANSPOSED);
    l.d1 = make({4}, ACL_FLOAT, l.v1, STRIDED);
    const aclTensor *ts[] = {l.d0.t, l.d1.t};
    l.list = aclCreateTensorList(ts, 2);
    return l;
}

static void check_list(const char *what, L &l, const std::vector<double> &w0, const std::vector<double> &w1) {
    compare((std::string(what) + " [0]").c_str(), read(l.d0), w0, 0);
    compare((std::string(what) + " [1]").c_str(), read(l.d1), w1, 0);
}

static void freelist(L &l) {
    aclDestroyTensorList(l.list); /* destroys the tensors */
    aclrtFree(l.d0.mem);
    aclrtFree(l.d1.mem);
}

static void foreach_tests() {
    struct U {
        const char *n;
        aclnnStatus (*g)(const aclTensorList *, aclTensorList *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*r)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        F1 f;
        bool pos, small;
    };
#define FU(name, f, pos, small) \
    {#name, reinterpret_cast<aclnnStatus (*)(const aclTensorList *, aclTensorList *, uint64_t *, aclOpExecutor **)>(aclnn##name##GetWorkspaceSize), aclnn##name, f, pos, small}
    U us[] = {
        FU(ForeachAbs, [](float x) { return std::fabs(x); }, false, false),
        FU(ForeachAcos, [](float x) { return std::acos(x); }, false, true),
        FU(ForeachAsin, [](float x) { return std::asin(x); }, false, true),
        FU(ForeachAtan, [](float x) { return std::atan(x); }, false, false),
        FU(ForeachCos, [](float x) { return std::cos(x); }, false, false),
        FU(ForeachCosh, [](float x) { return std::cosh(x); }, false, false),
        FU(ForeachErf, [](float x) { return std::erf(x); }, false, false),
        FU(ForeachErfc, [](float x) { return std::erfc(x); }, false, false),
        FU(ForeachExp, [](float x) { return std::exp(x); }, false, false),
        FU(ForeachExpm1, [](float x) { return std::expm1(x); }, false, false),
        FU(ForeachLog, [](float x) { return std::log(x); }, true, false),
        FU(ForeachLog10, [](float x) { return std::log10(x); }, true, false),
        FU(ForeachLog1p, [](float x) { return std::log1p(x); }, true, false),
        FU(ForeachLog2, [](float x) { return std::log2(x); }, true, false),
        FU(ForeachNeg, [](float x) { return -x; }, false, false),
        FU(ForeachReciprocal, [](float x) { return 1.0f / x; }, false, false),
        FU(ForeachSigmoid, [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, false, false),
        FU(ForeachSign, [](float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f; }, false, false),
        FU(ForeachSin, [](float x) { return std::sin(x); }, false, false),
        FU(ForeachSinh, [](float x) { return std::sinh(x); }, false, false),
        FU(ForeachSqrt, [](float x) { return std::sqrt(x); }, true, false),
        FU(ForeachTan, [](float x) { return std::tan(x); }, false, true),
        FU(ForeachTanh, [](float x) { return std::tanh(x); }, false, false),
    };
    for (auto &u : us) {
        L l = mklist(7, u.pos, u.small);
        uint64_t ws;
        aclOpExecutor *ex;
        NN(u.g(l.list, l.list, &ws, &ex));
        NN(u.r(nullptr, ws, ex, S));
        CHECK(aclrtSynchronizeStream(S));
        check_list(u.n, l, map1(l.v0, u.f), map1(l.v1, u.f));
        freelist(l);
    }
    /* list x list */
    struct B2 {
        const char *n;
        aclnnStatus (*g)(const aclTensorList *, const aclTensorList *, aclTensorList *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*r)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        F2 f;
    };
#define FB(name, f) \
    {#name, reinterpret_cast<aclnnStatus (*)(const aclTensorList *, const aclTensorList *, aclTensorList *, uint64_t *, aclOpExecutor **)>(aclnn##name##GetWorkspaceSize), aclnn##name, f}
    B2 bs[] = {
        FB(ForeachMulList, [](float x, float y) { return x * y; }),
        FB(ForeachDivList, [](float x, float y) { return x / y; }),
        FB(ForeachMaximumList, [](float x, float y) { return std::max(x, y); }),
        FB(ForeachMinimumList, [](float x, float y) { return std::min(x, y); }),
        FB(ForeachPowList, [](float x, float y) { return std::pow(x, y); }),
    };
    for (auto &b : bs) {
        L x = mklist(11, true), y = mklist(12);
        uint64_t ws;
        aclOpExecutor *ex;
        NN(b.g(x.list, y.list, x.list, &ws, &ex));
        NN(b.r(nullptr, ws, ex, S));
        CHECK(aclrtSynchronizeStream(S));
        check_list(b.n, x, map2(x.v0, y.v0, b.f), map2(x.v1, y.v1, b.f));
        freelist(x);
        freelist(y);
    }
    /* alpha forms of Sub (V1 device alpha, V2 host alpha) */
    {
        L x = mklist(13), y = mklist(14);
        Dev al = make({1}, ACL_FLOAT, {0.5});
        RUN(S, aclnnForeachSubList, x.list, y.list, al.t, x.list);
        auto w0 = map2(x.v0, y.v0, [](float p, float q) { return p - 0.5f * q; });
        auto w1 = map2(x.v1, y.v1, [](float p, float q) { return p - 0.5f * q; });
        check_list("ForeachSubList (V1)", x, w0, w1);
        aclScalar *a2 = fs(2);
        RUN(S, aclnnForeachSubListV2, x.list, y.list, a2, x.list);
        check_list("ForeachSubListV2", x, map2(w0, y.v0, [](float p, float q) { return p - 2.0f * q; }), map2(w1, y.v1, [](float p, float q) { return p - 2.0f * q; }));
        aclDestroyScalar(a2);
        release(al);
        freelist(x);
        freelist(y);
    }
    /* scalar forms: V1 (device scalar), V2 (host scalar), ScalarList (one per tensor) */
    struct SF {
        const char *n;
        F2 f;
        aclnnStatus (*v1)(const aclTensorList *, const aclTensor *, aclTensorList *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*r1)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        aclnnStatus (*v2)(const aclTensorList *, const aclScalar *, aclTensorList *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*r2)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        aclnnStatus (*vl)(const aclTensorList *, const aclScalarList *, aclTensorList *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*rl)(void *, uint64_t, aclOpExecutor *, aclrtStream);
    };
    typedef aclnnStatus (*G1)(const aclTensorList *, const aclTensor *, aclTensorList *, uint64_t *, aclOpExecutor **);
    typedef aclnnStatus (*G2)(const aclTensorList *, const aclScalar *, aclTensorList *, uint64_t *, aclOpExecutor **);
    typedef aclnnStatus (*GL)(const aclTensorList *, const aclScalarList *, aclTensorList *, uint64_t *, aclOpExecutor **);
#define FS(name, f)                                                                          \
    {#name, f, reinterpret_cast<G1>(aclnnForeach##name##ScalarGetWorkspaceSize), aclnnForeach##name##Scalar,     \
     reinterpret_cast<G2>(aclnnForeach##name##ScalarV2GetWorkspaceSize), aclnnForeach##name##ScalarV2,            \
     reinterpret_cast<GL>(aclnnForeach##name##ScalarListGetWorkspaceSize), aclnnForeach##name##ScalarList}
    SF sfs[] = {
        {"Add", [](float x, float s) { return x + s; }, nullptr, nullptr,
         reinterpret_cast<G2>(aclnnForeachAddScalarV2GetWorkspaceSize), aclnnForeachAddScalarV2,
         reinterpret_cast<GL>(aclnnForeachAddScalarListGetWorkspaceSize), aclnnForeachAddScalarList},
        FS(Sub, [](float x, float s) { return x - s; }),
        {"Mul", [](float x, float s) { return x * s; }, nullptr, nullptr, nullptr, nullptr,
         reinterpret_cast<GL>(aclnnForeachMulScalarListGetWorkspaceSize), aclnnForeachMulScalarList},
        {"Div", [](float x, float s) { return x / s; }, reinterpret_cast<G1>(aclnnForeachDivScalarGetWorkspaceSize), aclnnForeachDivScalar, nullptr, nullptr,
         reinterpret_cast<GL>(aclnnForeachDivScalarListGetWorkspaceSize), aclnnForeachDivScalarList},
        FS(Maximum, [](float x, float s) { return std::max(x, s); }),
        FS(Minimum, [](float x, float s) { return std::min(x, s); }),
        FS(Pow, [](float x, float s) { return std::pow(x, s); }),
    };
    for (auto &sf : sfs) {
        for (int form = 0; form < 3; form++) {
            L x = mklist(15, true);
            uint64_t ws;
            aclOpExecutor *ex;
            float s0 = 1.5f, s1 = 1.5f;
            if (form == 0) {
                if (!sf.v1) {
                    freelist(x);
                    continue;
                }
                Dev st = make({1}, ACL_FLOAT, {1.5});
                NN(sf.v1(x.list, st.t, x.list, &ws, &ex));
                NN(sf.r1(nullptr, ws, ex, S));
                CHECK(aclrtSynchronizeStream(S));
                release(st);
            } else if (form == 1) {
                if (!sf.v2) {
                    freelist(x);
                    continue;
                }
                aclScalar *s = fs(1.5f);
                NN(sf.v2(x.list, s, x.list, &ws, &ex));
                NN(sf.r2(nullptr, ws, ex, S));
                CHECK(aclrtSynchronizeStream(S));
                aclDestroyScalar(s);
            } else {
                s1 = 3.0f;
                const aclScalar *ss[] = {fs(s0), fs(s1)};
                aclScalarList *sl = aclCreateScalarList(ss, 2);
                NN(sf.vl(x.list, sl, x.list, &ws, &ex));
                NN(sf.rl(nullptr, ws, ex, S));
                CHECK(aclrtSynchronizeStream(S));
                aclDestroyScalarList(sl);
            }
            std::vector<double> w0(x.v0.size()), w1(x.v1.size());
            for (size_t i = 0; i < w0.size(); i++) w0[i] = sf.f(static_cast<float>(x.v0[i]), s0);
            for (size_t i = 0; i < w1.size(); i++) w1[i] = sf.f(static_cast<float>(x.v1[i]), s1);
            const char *fn[] = {"Scalar (V1)", "ScalarV2", "ScalarList"};
            check_list((std::string("Foreach") + sf.n + fn[form]).c_str(), x, w0, w1);
            freelist(x);
        }
    }
    /* PowScalarAndTensor: scalar ^ x */
    {
        L x = mklist(16, false, true);
        aclScalar *b = fs(2);
        RUN(S, aclnnForeachPowScalarAndTensor, b, x.list, x.list);
        check_list("ForeachPowScalarAndTensor", x, map1(x.v0, [](float v) { return std::pow(2.0f, v); }), map1(x.v1, [](float v) { return std::pow(2.0f, v); }));
        aclDestroyScalar(b);
        freelist(x);
    }
    /* Addcmul / Addcdiv: V1 scalar tensor, ScalarList / List (a tensor of one value per position) */
    for (int div = 0; div < 2; div++) {
        for (int form = 0; form < 3; form++) {
            L x = mklist(17), y = mklist(18), z = mklist(19, true);
            Dev sc = form == 0 ? make({1}, ACL_FLOAT, {0.5}) : make({2}, ACL_FLOAT, {0.5, -2});
            typedef aclnnStatus (*G)(const aclTensorList *, const aclTensorList *, const aclTensorList *, const aclTensor *, aclTensorList *, uint64_t *, aclOpExecutor **);
            typedef aclnnStatus (*R)(void *, uint64_t, aclOpExecutor *, aclrtStream);
            G g[2][3] = {{reinterpret_cast<G>(aclnnForeachAddcmulScalarGetWorkspaceSize), reinterpret_cast<G>(aclnnForeachAddcmulScalarListGetWorkspaceSize), reinterpret_cast<G>(aclnnForeachAddcmulListGetWorkspaceSize)},
                         {reinterpret_cast<G>(aclnnForeachAddcdivScalarGetWorkspaceSize), reinterpret_cast<G>(aclnnForeachAddcdivScalarListGetWorkspaceSize), reinterpret_cast<G>(aclnnForeachAddcdivListGetWorkspaceSize)}};
            R r[2][3] = {{aclnnForeachAddcmulScalar, aclnnForeachAddcmulScalarList, aclnnForeachAddcmulList}, {aclnnForeachAddcdivScalar, aclnnForeachAddcdivScalarList, aclnnForeachAddcdivList}};
            uint64_t ws;
            aclOpExecutor *ex;
            NN(g[div][form](x.list, y.list, z.list, sc.t, x.list, &ws, &ex));
            NN(r[div][form](nullptr, ws, ex, S));
            CHECK(aclrtSynchronizeStream(S));
            float s0 = 0.5f, s1 = form == 0 ? 0.5f : -2.0f;
            std::vector<double> w0(6), w1(4);
            for (size_t i = 0; i < 6; i++) {
                float p = static_cast<float>(x.v0[i]), q = static_cast<float>(y.v0[i]), t = static_cast<float>(z.v0[i]);
                w0[i] = div ? p + s0 * q / t : p + s0 * q * t;
            }
            for (size_t i = 0; i < 4; i++) {
                float p = static_cast<float>(x.v1[i]), q = static_cast<float>(y.v1[i]), t = static_cast<float>(z.v1[i]);
                w1[i] = div ? p + s1 * q / t : p + s1 * q * t;
            }
            const char *fn[] = {"Scalar (V1)", "ScalarList", "List"};
            check_list((std::string(div ? "ForeachAddcdiv" : "ForeachAddcmul") + fn[form]).c_str(), x, w0, w1);
            release(sc);
            freelist(x);
            freelist(y);
            freelist(z);
        }
    }
    /* LerpList, ZeroInplace, Copy */
    {
        L x = mklist(20), y = mklist(21), w = mklist(22);
        for (auto *v : {&w.v0, &w.v1})
            for (auto &e : *v) e = 0.25;
        RUN(S, aclnnForeachZeroInplace, w.list);
        check_list("ForeachZeroInplace", w, std::vector<double>(6, 0.0), std::vector<double>(4, 0.0));
        RUN(S, aclnnForeachLerpList, x.list, y.list, w.list, x.list);
        check_list("ForeachLerpList (weight 0)", x, x.v0, x.v1);
        RUN(S, aclnnForeachCopy, y.list, x.list);
        check_list("ForeachCopy", x, y.v0, y.v1);
        freelist(x);
        freelist(y);
        freelist(w);
    }
    printf("ok foreach\n");
}

/* the families beyond the list: clamp, rounding, more math, remainder, floor
   divide, atan2, any/all/prod/cumsum, equal, fill with a tensor, index select, gather */
static void extra_tests() {
    const std::vector<double> A = {1.5, -2.5, 3.25, -0.5, 4.75, -1}, B = {0.5, 2, -1.5, 4, 0.25, 3};
    const std::vector<double> Q = {0.25, 0.5, 0.75, 0.125, 0.9, 0.3};
    Dev a = t23(A), b = t23(B), q = t23(Q), o = make({2, 3}, ACL_FLOAT, {}), ob = make({2, 3}, ACL_BOOL, {});
    aclScalar *lo = fs(-1), *hi = fs(2), *sl = fs(0.1f), *three = fs(3);
    RUN(S, aclnnClamp, a.t, lo, hi, o.t);
    compare("Clamp", read(o), map1(A, [](float x) { return std::min(std::max(x, -1.0f), 2.0f); }), 0);
    RUN(S, aclnnClamp, a.t, nullptr, hi, o.t);
    compare("Clamp (max only)", read(o), map1(A, [](float x) { return std::min(x, 2.0f); }), 0);
    RUN(S, aclnnClampMin, a.t, lo, o.t);
    compare("ClampMin", read(o), map1(A, [](float x) { return std::max(x, -1.0f); }), 0);
    RUN(S, aclnnClampMax, a.t, hi, o.t);
    compare("ClampMax", read(o), map1(A, [](float x) { return std::min(x, 2.0f); }), 0);
    RUN(S, aclnnClampTensor, a.t, b.t, nullptr, o.t);
    compare("ClampTensor (min)", read(o), map2(A, B, [](float x, float y) { return std::max(x, y); }), 0);
    RUN(S, aclnnClampMinTensor, a.t, b.t, o.t);
    compare("ClampMinTensor", read(o), map2(A, B, [](float x, float y) { return std::max(x, y); }), 0);
    RUN(S, aclnnClampMaxTensor, a.t, b.t, o.t);
    compare("ClampMaxTensor", read(o), map2(A, B, [](float x, float y) { return std::min(x, y); }), 0);
    RUN(S, aclnnHardtanh, a.t, lo, hi, o.t);
    compare("Hardtanh", read(o), map1(A, [](float x) { return std::min(std::max(x, -1.0f), 2.0f); }), 0);
    RUN(S, aclnnLeakyRelu, a.t, sl, o.t);
    compare("LeakyRelu", read(o), map1(A, [](float x) { return x > 0 ? x : x * 0.1f; }), 0);
    {
        Dev c = t23(A, STRIDED);
        RUN(S, aclnnInplaceClampMax, c.t, hi);
        RUN(S, aclnnInplaceClampMinTensor, c.t, b.t);
        RUN(S, aclnnInplaceClampMaxTensor, c.t, b.t);
        compare("InplaceClampMax/MinTensor/MaxTensor", read(c), B, 0);
        RUN(S, aclnnInplaceHardtanh, c.t, lo, hi);
        RUN(S, aclnnInplaceLeakyRelu, c.t, sl);
        compare("InplaceHardtanh + InplaceLeakyRelu", read(c), map1(B, [](float x) { float h = std::min(std::max(x, -1.0f), 2.0f); return h > 0 ? h : h * 0.1f; }), 0);
        release(c);
    }
    struct U {
        const char *n;
        aclnnStatus (*g)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*r)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        aclnnStatus (*ig)(aclTensor *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*ir)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        F1 f;
        bool unit; /* inputs in (0, 1) */
    };
    typedef aclnnStatus (*IG)(aclTensor *, uint64_t *, aclOpExecutor **);
    typedef aclnnStatus (*G)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
#define UX(name, f, unit) {#name, reinterpret_cast<G>(aclnn##name##GetWorkspaceSize), aclnn##name, reinterpret_cast<IG>(aclnnInplace##name##GetWorkspaceSize), aclnnInplace##name, f, unit}
    U us[] = {
        UX(Floor, [](float x) { return std::floor(x); }, false),
        UX(Ceil, [](float x) { return std::ceil(x); }, false),
        UX(Round, [](float x) { return std::nearbyint(x); }, false),
        UX(Trunc, [](float x) { return std::trunc(x); }, false),
        UX(Exp2, [](float x) { return std::exp2(x); }, false),
        UX(Log2, [](float x) { return std::log2(x); }, true),
        UX(Log10, [](float x) { return std::log10(x); }, true),
        UX(Log1p, [](float x) { return std::log1p(x); }, true),
        UX(Expm1, [](float x) { return std::expm1(x); }, false),
        UX(Asin, [](float x) { return std::asin(x); }, true),
        UX(Acos, [](float x) { return std::acos(x); }, true),
        UX(Atan, [](float x) { return std::atan(x); }, false),
        UX(Sinh, [](float x) { return std::sinh(x); }, false),
        UX(Cosh, [](float x) { return std::cosh(x); }, false),
        UX(Tan, [](float x) { return std::tan(x); }, true),
    };
    for (auto &u : us) {
        const std::vector<double> &in = u.unit ? Q : A;
        Dev x = t23(in);
        uint64_t ws;
        aclOpExecutor *ex;
        NN(u.g(x.t, o.t, &ws, &ex));
        NN(u.r(nullptr, ws, ex, S));
        CHECK(aclrtSynchronizeStream(S));
        compare(u.n, read(o), map1(in, u.f), 0);
        NN(u.ig(x.t, &ws, &ex));
        NN(u.ir(nullptr, ws, ex, S));
        CHECK(aclrtSynchronizeStream(S));
        compare((std::string("Inplace") + u.n).c_str(), read(x), map1(in, u.f), 0);
        release(x);
    }
    RUN(S, aclnnSign, a.t, o.t);
    compare("Sign", read(o), map1(A, [](float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f; }), 0);
    RUN(S, aclnnSquare, a.t, o.t);
    compare("Square", read(o), map1(A, [](float x) { return x * x; }), 0);
    RUN(S, aclnnRoundDecimals, a.t, 1, o.t);
    compare("RoundDecimals 1", read(o), map1(A, [](float x) { return std::nearbyint(x * 10.0f) / 10.0f; }), 0);
    {
        Dev x = make({3}, ACL_FLOAT, {1, 0, 2});
        Dev z = make({3}, ACL_FLOAT, {0, 0, 0}), d = make({3}, ACL_FLOAT, {}), bb = make({3}, ACL_BOOL, {});
        RUN(S, aclnnDiv, x.t, z.t, d.t); /* 1/0 = inf, 0/0 = nan, 2/0 = inf */
        RUN(S, aclnnIsFinite, d.t, bb.t);
        compare("IsFinite", read(bb), {0, 0, 0}, 0);
        RUN(S, aclnnIsFinite, x.t, bb.t);
        compare("IsFinite (finite)", read(bb), {1, 1, 1}, 0);
        for (Dev *dd : {&x, &z, &d, &bb}) release(*dd);
    }
    /* remainder (sign of the divisor), floor divide, atan2 */
    auto rem = [](float x, float y) { float r = std::fmod(x, y); return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; };
    RUN(S, aclnnRemainderTensorTensor, a.t, b.t, o.t);
    compare("RemainderTensorTensor", read(o), map2(A, B, rem), 0);
    RUN(S, aclnnRemainderTensorScalar, a.t, three, o.t);
    compare("RemainderTensorScalar", read(o), map1(A, [](float x) { float r = std::fmod(x, 3.0f); return (r != 0 && r < 0) ? r + 3.0f : r; }), 0);
    RUN(S, aclnnRemainderScalarTensor, three, b.t, o.t);
    compare("RemainderScalarTensor", read(o), map1(B, [](float y) { float r = std::fmod(3.0f, y); return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; }), 0);
    RUN(S, aclnnFloorDivide, a.t, b.t, o.t);
    compare("FloorDivide", read(o), map2(A, B, [](float x, float y) { return std::floor(x / y); }), 0);
    RUN(S, aclnnFloorDivides, a.t, three, o.t);
    compare("FloorDivides", read(o), map1(A, [](float x) { return std::floor(x / 3.0f); }), 0);
    RUN(S, aclnnAtan2, a.t, b.t, o.t);
    compare("Atan2", read(o), map2(A, B, [](float x, float y) { return std::atan2(x, y); }), 0);
    {
        Dev c = t23(A, STRIDED);
        RUN(S, aclnnInplaceRemainderTensorTensor, c.t, b.t);
        compare("InplaceRemainderTensorTensor", read(c), map2(A, B, rem), 0);
        auto before = read(c);
        RUN(S, aclnnInplaceRemainderTensorScalar, c.t, three);
        compare("InplaceRemainderTensorScalar", read(c), map1(before, [](float x) { float r = std::fmod(x, 3.0f); return (r != 0 && r < 0) ? r + 3.0f : r; }), 0);
        release(c);
        c = t23(A, STRIDED);
        RUN(S, aclnnInplaceFloorDivide, c.t, b.t);
        compare("InplaceFloorDivide", read(c), map2(A, B, [](float x, float y) { return std::floor(x / y); }), 0);
        before = read(c);
        RUN(S, aclnnInplaceFloorDivides, c.t, three);
        compare("InplaceFloorDivides", read(c), map1(before, [](float x) { return std::floor(x / 3.0f); }), 0);
        release(c);
        c = t23(A, STRIDED);
        RUN(S, aclnnInplaceAtan2, c.t, b.t);
        compare("InplaceAtan2", read(c), map2(A, B, [](float x, float y) { return std::atan2(x, y); }), 0);
        release(c);
    }
    /* any / all / prod / cumsum */
    {
        Dev bx = make({2, 3}, ACL_BOOL, {0, 1, 0, 1, 1, 1}, TRANSPOSED), b2 = make({2}, ACL_BOOL, {}), b0 = make({}, ACL_BOOL, {});
        int64_t d1 = 1;
        aclIntArray *dims = aclCreateIntArray(&d1, 1), *all = aclCreateIntArray(nullptr, 0);
        RUN(S, aclnnAny, bx.t, dims, false, b2.t);
        compare("Any dim 1", read(b2), {1, 1}, 0);
        RUN(S, aclnnAll, bx.t, dims, false, b2.t);
        compare("All dim 1", read(b2), {0, 1}, 0);
        RUN(S, aclnnAll, bx.t, all, false, b0.t);
        compare("All", read(b0), {0}, 0);
        Dev p0 = make({}, ACL_FLOAT, {}), p2 = make({2, 1}, ACL_FLOAT, {}), cs = make({2, 3}, ACL_FLOAT, {});
        RUN(S, aclnnProd, a.t, ACL_FLOAT, p0.t);
        double pr = 1;
        for (double v : A) pr *= v;
        compare("Prod", read(p0), {pr}, 1e-6);
        RUN(S, aclnnProdDim, a.t, -1, true, ACL_FLOAT, p2.t);
        compare("ProdDim keepdim", read(p2), {A[0] * A[1] * A[2], A[3] * A[4] * A[5]}, 1e-6);
        RUN(S, aclnnCumsum, a.t, 1, ACL_FLOAT, cs.t);
        compare("Cumsum dim 1", read(cs), {A[0], A[0] + A[1], A[0] + A[1] + A[2], A[3], A[3] + A[4], A[3] + A[4] + A[5]}, 1e-6);
        RUN(S, aclnnCumsumV2, a.t, 1, true, true, cs.t);
        compare("CumsumV2 exclusive reverse", read(cs), {A[1] + A[2], A[2], 0, A[4] + A[5], A[5], 0}, 1e-6);
        aclDestroyIntArray(dims);
        aclDestroyIntArray(all);
        for (Dev *d : {&bx, &b2, &b0, &p0, &p2, &cs}) release(*d);
    }
    /* equal, fill with a tensor, index select, gather */
    {
        Dev e = make({}, ACL_BOOL, {}), a2 = t23(A, STRIDED), a3 = make({3, 2}, ACL_FLOAT, A);
        RUN(S, aclnnEqual, a.t, a2.t, e.t);
        compare("Equal (same values, other layout)", read(e), {1}, 0);
        RUN(S, aclnnEqual, a.t, b.t, e.t);
        compare("Equal (different values)", read(e), {0}, 0);
        RUN(S, aclnnEqual, a.t, a3.t, e.t);
        compare("Equal (different shapes)", read(e), {0}, 0);
        Dev v = make({}, ACL_FLOAT, {-7});
        RUN(S, aclnnInplaceFillTensor, a2.t, v.t);
        compare("InplaceFillTensor", read(a2), std::vector<double>(6, -7.0), 0);
        Dev idx = make({3}, ACL_INT64, {2, -3, 2}), sel = make({2, 3}, ACL_FLOAT, {});
        RUN(S, aclnnIndexSelect, a.t, 1, idx.t, sel.t);
        compare("IndexSelect dim 1", read(sel), {A[2], A[0], A[2], A[5], A[3], A[5]}, 0);
        Dev gi = make({2, 2}, ACL_INT32, {2, 0, 1, 1}), go = make({2, 2}, ACL_FLOAT, {});
        RUN(S, aclnnGather, a.t, 1, gi.t, go.t);
        compare("Gather dim 1", read(go), {A[2], A[0], A[4], A[4]}, 0);
        for (Dev *d : {&e, &a2, &a3, &v, &idx, &sel, &gi, &go}) release(*d);
    }
    for (aclScalar *s : {lo, hi, sl, three}) aclDestroyScalar(s);
    for (Dev *d : {&a, &b, &q, &o, &ob}) release(*d);
    printf("ok extras\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    inplace_and_scalar_forms();
    reductions_products();
    random_tensor_forms();
    foreach_tests();
    extra_tests();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
