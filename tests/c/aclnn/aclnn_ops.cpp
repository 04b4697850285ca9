/* The aclnn operators against an independent host reference (ops_ref.h): every operator of
 * the MLP training set (and more) × dtypes × a contiguous, a non-contiguous (transposed or
 * strided) and a broadcast case; scalar and in-place forms.
 *
 * Exactness: elementwise float32 results must equal the reference's float32 arithmetic
 * exactly; fp16/bf16 results must equal the float32 result rounded once. Reductions, matrix
 * products, softmax and losses compare with a relative tolerance (stated at each check). */
#include <algorithm>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_sub.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_div.h"
#include "aclnnop/aclnn_maximum.h"
#include "aclnnop/aclnn_sqrt.h"
#include "aclnnop/aclnn_exp.h"
#include "aclnnop/aclnn_neg.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "aclnnop/aclnn_cast.h"
#include "aclnnop/aclnn_copy.h"
#include "aclnnop/aclnn_zero.h"
#include "aclnnop/aclnn_ones.h"
#include "aclnnop/aclnn_fill_scalar.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_mm.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_dot.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_addcmul.h"
#include "aclnnop/aclnn_addcdiv.h"
#include "aclnnop/aclnn_lerp_scalar.h"
#include "aclnnop/aclnn_cat.h"
#include "aclnnop/aclnn_constant_pad_nd.h"
#include "aclnnop/aclnn_normal.h"
#include "aclnnop/aclnn_foreach_add_list_v2.h"
#include "aclnnop/aclnn_foreach_add_list.h"
#include "aclnnop/aclnn_foreach_mul_scalar_v2.h"
#include "aclnnop/aclnn_foreach_mul_scalar.h"
#include "aclnnop/aclnn_foreach_add_scalar.h"
#include "aclnnop/aclnn_foreach_addcmul_scalar_v2.h"
#include "aclnnop/aclnn_foreach_addcdiv_scalar_v2.h"
#include "aclnnop/aclnn_foreach_lerp_scalar.h"
#include "aclnnop/aclnn_foreach_sqrt.h"
#include "aclnnop/aclnn_foreach_norm.h"
#include "aclnnop/aclnn_foreach_div_scalar_v2.h"

static aclrtStream S;

static const aclDataType ALL[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT32, ACL_INT64, ACL_INT16, ACL_INT8, ACL_UINT8};
static const aclDataType FLOATS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};

/* Compute in the class of t: float for f16/bf16/f32, double, int64 for integers. */
static double calc(aclDataType t, double a, double b, const std::function<double(double, double)> &fd,
                   const std::function<float(float, float)> &ff, const std::function<int64_t(int64_t, int64_t)> &fi) {
    if (t == ACL_DOUBLE) return fd(a, b);
    if (is_float(t)) return ff(static_cast<float>(a), static_cast<float>(b));
    return static_cast<double>(fi(static_cast<int64_t>(a), static_cast<int64_t>(b)));
}

/* A scalar of value v: ACL_FLOAT for floating tensors, ACL_INT64 for integer ones (a float
   scalar cannot be cast to an integer computation type). */
static aclScalar *scalar_for(double v, aclDataType t) {
    if (is_float(t)) {
        float f = static_cast<float>(v);
        return aclCreateScalar(&f, ACL_FLOAT);
    }
    int64_t i = static_cast<int64_t>(v);
    return aclCreateScalar(&i, ACL_INT64);
}

static std::string name(const char *op, aclDataType t, const char *how) {
    return std::string(op) + " " + dname(t) + " " + how;
}

/* ---- binary arithmetic: tensor, scalar, in place; contiguous / non-contiguous / broadcast ---- */
static void binary_tests() {
    for (aclDataType t : ALL) {
        for (int how = 0; how < 3; how++) {
            Shape sa = how == 2 ? Shape{3, 1, 5} : Shape{4, 6};
            Shape sb = how == 2 ? Shape{4, 5} : Shape{4, 6};
            Shape so = how == 2 ? Shape{3, 4, 5} : Shape{4, 6};
            Layout la = how == 1 ? TRANSPOSED : CONTIG, lb = how == 1 ? STRIDED : CONTIG;
            const char *hn = how == 0 ? "contig" : how == 1 ? "noncontig" : "broadcast";
            auto va = values(numel(sa), t, 1), vb = values(numel(sb), t, 2, true);
            Dev a = make(sa, t, va, la), b = make(sb, t, vb, lb);
            auto ref = [&](const std::function<double(double, double)> &f) {
                std::vector<double> r(static_cast<size_t>(numel(so)));
                for (int64_t i = 0; i < numel(so); i++) {
                    int64_t k = i % 5, j = (i / 5) % 4, q = i / 20;
                    double x, y;
                    if (how == 2) {
                        x = va[static_cast<size_t>(q * 5 + k)];
                        y = vb[static_cast<size_t>(j * 5 + k)];
                    } else {
                        x = va[static_cast<size_t>(i)];
                        y = vb[static_cast<size_t>(i)];
                    }
                    r[static_cast<size_t>(i)] = as_type(f(x, y), t);
                }
                return r;
            };
            aclScalar *alpha = scalar_for(2, t);
            {
                Dev o = make(so, t, {}, how == 1 ? STRIDED : CONTIG);
                RUN(S, aclnnAdd, a.t, b.t, alpha, o.t);
                compare(name("Add", t, hn).c_str(), read(o),
                        ref([&](double x, double y) {
                            return calc(t, x, y, [](double p, double q) { return p + 2.0 * q; },
                                        [](float p, float q) { return p + 2.0f * q; },
                                        [](int64_t p, int64_t q) { return p + 2 * q; });
                        }), 0);
                RUN(S, aclnnSub, a.t, b.t, alpha, o.t);
                compare(name("Sub", t, hn).c_str(), read(o),
                        ref([&](double x, double y) {
                            return calc(t, x, y, [](double p, double q) { return p - 2.0 * q; },
                                        [](float p, float q) { return p - 2.0f * q; },
                                        [](int64_t p, int64_t q) { return p - 2 * q; });
                        }), 0);
                RUN(S, aclnnMul, a.t, b.t, o.t);
                compare(name("Mul", t, hn).c_str(), read(o),
                        ref([&](double x, double y) {
                            return calc(t, x, y, [](double p, double q) { return p * q; },
                                        [](float p, float q) { return p * q; },
                                        [](int64_t p, int64_t q) { return p * q; });
                        }), 0);
                RUN(S, aclnnMaximum, a.t, b.t, o.t);
                compare(name("Maximum", t, hn).c_str(), read(o), ref([](double x, double y) { return std::max(x, y); }), 0);
                release(o);
            }
            if (is_float(t)) {
                Dev o = make(so, t, {});
                RUN(S, aclnnDiv, a.t, b.t, o.t);
                compare(name("Div", t, hn).c_str(), read(o),
                        ref([&](double x, double y) {
                            return calc(t, x, y, [](double p, double q) { return p / q; },
                                        [](float p, float q) { return p / q; },
                                        [](int64_t p, int64_t q) { return p / q; });
                        }), 0);
                release(o);
            } else {
                /* integer true division gives float32 */
                Dev o = make(so, ACL_FLOAT, {});
                RUN(S, aclnnDiv, a.t, b.t, o.t);
                /* ref() rounds to t: compute the float32 quotients here */
                std::vector<double> want(static_cast<size_t>(numel(so)));
                for (int64_t i = 0; i < numel(so); i++) {
                    int64_t k = i % 5, j = (i / 5) % 4, q = i / 20;
                    double x = how == 2 ? va[static_cast<size_t>(q * 5 + k)] : va[static_cast<size_t>(i)];
                    double y = how == 2 ? vb[static_cast<size_t>(j * 5 + k)] : vb[static_cast<size_t>(i)];
                    want[static_cast<size_t>(i)] = static_cast<float>(x) / static_cast<float>(y);
                }
                compare(name("Div (int -> float)", t, hn).c_str(), read(o), want, 0);
                release(o);
            }
            if (how == 0) {
                /* scalar forms and in place */
                aclScalar *s = scalar_for(3, t);
                Dev o = make(so, t, {});
                RUN(S, aclnnMuls, a.t, s, o.t);
                std::vector<double> want(va.size());
                for (size_t i = 0; i < va.size(); i++)
                    want[i] = as_type(t == ACL_DOUBLE ? va[i] * 3.0 : is_float(t) ? static_cast<double>(static_cast<float>(va[i]) * 3.0f) : va[i] * 3, t);
                compare(name("Muls", t, "contig").c_str(), read(o), want, 0);
                RUN(S, aclnnAdds, a.t, s, alpha, o.t);
                for (size_t i = 0; i < va.size(); i++)
                    want[i] = as_type(t == ACL_DOUBLE ? va[i] + 6.0 : is_float(t) ? static_cast<double>(static_cast<float>(va[i]) + 2.0f * 3.0f) : va[i] + 6, t);
                compare(name("Adds", t, "contig").c_str(), read(o), want, 0);
                /* InplaceAdd / InplaceMuls on a copy of a */
                Dev c = make(sa, t, va, STRIDED);
                RUN(S, aclnnInplaceAdd, c.t, b.t, alpha);
                compare(name("InplaceAdd", t, "strided").c_str(), read(c),
                        ref([&](double x, double y) {
                            return calc(t, x, y, [](double p, double q) { return p + 2.0 * q; },
                                        [](float p, float q) { return p + 2.0f * q; },
                                        [](int64_t p, int64_t q) { return p + 2 * q; });
                        }), 0);
                auto before = read(c);
                RUN(S, aclnnInplaceMuls, c.t, s);
                for (size_t i = 0; i < before.size(); i++)
                    want[i] = as_type(t == ACL_DOUBLE ? before[i] * 3.0 : is_float(t) ? static_cast<double>(static_cast<float>(before[i]) * 3.0f) : before[i] * 3, t);
                compare(name("InplaceMuls", t, "strided").c_str(), read(c), want, 0);
                if (is_float(t)) {
                    before = read(c);
                    RUN(S, aclnnInplaceDivs, c.t, s);
                    for (size_t i = 0; i < before.size(); i++)
                        want[i] = as_type(t == ACL_DOUBLE ? before[i] / 3.0 : static_cast<double>(static_cast<float>(before[i]) / 3.0f), t);
                    compare(name("InplaceDivs", t, "strided").c_str(), read(c), want, 0);
                }
                release(c);
                release(o);
                aclDestroyScalar(s);
            }
            aclDestroyScalar(alpha);
            release(a);
            release(b);
        }
    }
    /* mixed dtypes promote: f16 + f32 -> f32, int32 + f32 -> f32, u8 + i8 -> i16 */
    struct Mix { aclDataType a, b, out; } mixes[] = {{ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT}, {ACL_INT32, ACL_FLOAT, ACL_FLOAT}, {ACL_UINT8, ACL_INT8, ACL_INT16}, {ACL_BF16, ACL_FLOAT16, ACL_FLOAT}};
    for (auto m : mixes) {
        auto va = values(12, m.a, 5), vb = values(12, m.b, 6);
        Dev a = make({3, 4}, m.a, va), b = make({3, 4}, m.b, vb), o = make({3, 4}, m.out, {});
        aclScalar *al = scalar_for(1, m.out);
        RUN(S, aclnnAdd, a.t, b.t, al, o.t);
        std::vector<double> want(12);
        for (size_t i = 0; i < 12; i++)
            want[i] = is_float(m.out) ? static_cast<double>(static_cast<float>(va[i]) + static_cast<float>(vb[i])) : as_type(va[i] + vb[i], m.out);
        compare((std::string("Add mixed ") + dname(m.a) + "+" + dname(m.b)).c_str(), read(o), want, 0);
        aclDestroyScalar(al);
        release(a);
        release(b);
        release(o);
    }
    printf("ok binary\n");
}

/* ---- unary and activations ---- */
static void unary_tests() {
    for (aclDataType t : FLOATS) {
        for (Layout l : {CONTIG, TRANSPOSED}) {
            Shape sh{5, 7};
            auto v = values(35, t, 9, true);
            auto vp = values(35, t, 10, true, true);
            Dev x = make(sh, t, v, l), xp = make(sh, t, vp, l), o = make(sh, t, {});
            auto check = [&](const char *op, const std::vector<double> &in, double (*fd)(double), float (*ff)(float), double tol) {
                std::vector<double> want(in.size());
                for (size_t i = 0; i < in.size(); i++)
                    want[i] = as_type(t == ACL_DOUBLE ? fd(in[i]) : static_cast<double>(ff(static_cast<float>(in[i]))), t);
                compare(name(op, t, lname(l)).c_str(), read(o), want, tol);
            };
            RUN(S, aclnnSqrt, xp.t, o.t);
            check("Sqrt", vp, [](double a) { return std::sqrt(a); }, [](float a) { return std::sqrt(a); }, 0);
            RUN(S, aclnnNeg, x.t, o.t);
            check("Neg", v, [](double a) { return -a; }, [](float a) { return -a; }, 0);
            RUN(S, aclnnRelu, x.t, o.t);
            check("Relu", v, [](double a) { return a > 0 ? a : 0.0; }, [](float a) { return a > 0 ? a : 0.0f; }, 0);
            /* exp and sigmoid go through libm: same function on both sides, so exact too */
            RUN(S, aclnnExp, x.t, o.t);
            check("Exp", v, [](double a) { return std::exp(a); }, [](float a) { return std::exp(a); }, 0);
            RUN(S, aclnnSigmoid, x.t, o.t);
            check("Sigmoid", v, [](double a) { return 1.0 / (1.0 + std::exp(-a)); }, [](float a) { return 1.0f / (1.0f + std::exp(-a)); }, 0);
            /* ThresholdBackward(grad, self, 0): grad where self > 0 */
            Dev g = make(sh, t, vp, CONTIG);
            float th = 0;
            aclScalar *ts = aclCreateScalar(&th, ACL_FLOAT);
            RUN(S, aclnnThresholdBackward, g.t, x.t, ts, o.t);
            std::vector<double> want(35);
            for (size_t i = 0; i < 35; i++) want[i] = v[i] > 0 ? vp[i] : 0;
            compare(name("ThresholdBackward", t, lname(l)).c_str(), read(o), want, 0);
            RUN(S, aclnnInplaceRelu, x.t);
            for (size_t i = 0; i < 35; i++) want[i] = v[i] > 0 ? v[i] : 0;
            compare(name("InplaceRelu", t, lname(l)).c_str(), read(x), want, 0);
            aclDestroyScalar(ts);
            release(g);
            release(x);
            release(xp);
            release(o);
        }
    }
    /* integer Relu/Neg */
    for (aclDataType t : {ACL_INT32, ACL_INT64, ACL_INT8}) {
        auto v = values(20, t, 3);
        Dev x = make({4, 5}, t, v, STRIDED), o = make({4, 5}, t, {});
        RUN(S, aclnnRelu, x.t, o.t);
        std::vector<double> want(20);
        for (size_t i = 0; i < 20; i++) want[i] = v[i] > 0 ? v[i] : 0;
        compare(name("Relu", t, "strided").c_str(), read(o), want, 0);
        release(x);
        release(o);
    }
    printf("ok unary\n");
}

/* ---- cast / copy / fill ---- */
static void copy_tests() {
    for (aclDataType from : ALL) {
        for (aclDataType to : ALL) {
            auto v = values(24, from, 4);
            Dev x = make({4, 6}, from, v, TRANSPOSED), o = make({4, 6}, to, {}, STRIDED);
            RUN(S, aclnnCast, x.t, to, o.t);
            std::vector<double> want(24);
            for (size_t i = 0; i < 24; i++) want[i] = as_type(v[i], to);
            compare((std::string("Cast ") + dname(from) + "->" + dname(to)).c_str(), read(o), want, 0);
            /* InplaceCopy broadcasting a row into a strided destination */
            Dev row = make({6}, from, v, STRIDED);
            RUN(S, aclnnInplaceCopy, o.t, row.t);
            for (size_t i = 0; i < 24; i++) want[i] = as_type(v[i % 6], to);
            compare((std::string("InplaceCopy broadcast ") + dname(from) + "->" + dname(to)).c_str(), read(o), want, 0);
            release(row);
            release(x);
            release(o);
        }
    }
    for (aclDataType t : ALL) {
        Dev x = make({3, 5}, t, values(15, t, 1), TRANSPOSED);
        RUN(S, aclnnInplaceZero, x.t);
        compare(name("InplaceZero", t, "transposed").c_str(), read(x), std::vector<double>(15, 0.0), 0);
        RUN(S, aclnnInplaceOne, x.t);
        compare(name("InplaceOne", t, "transposed").c_str(), read(x), std::vector<double>(15, 1.0), 0);
        double fv = 2.5;
        aclScalar *s = aclCreateScalar(&fv, ACL_DOUBLE);
        RUN(S, aclnnInplaceFillScalar, x.t, s);
        compare(name("InplaceFillScalar", t, "transposed").c_str(), read(x), std::vector<double>(15, as_type(is_float(t) ? 2.5 : 2, t)), 0);
        aclDestroyScalar(s);
        release(x);
    }
    /* Cat along dims 0 and 1, mixed input layouts */
    {
        auto va = values(6, ACL_FLOAT, 1), vb = values(9, ACL_FLOAT, 2);
        Dev a = make({2, 3}, ACL_FLOAT, va, TRANSPOSED), b = make({3, 3}, ACL_FLOAT, vb, STRIDED), o = make({5, 3}, ACL_FLOAT, {});
        const aclTensor *ts[] = {a.t, b.t};
        aclTensorList *list = aclCreateTensorList(ts, 2);
        RUN(S, aclnnCat, list, 0, o.t);
        std::vector<double> want(va);
        want.insert(want.end(), vb.begin(), vb.end());
        compare("Cat dim0", read(o), want, 0);
        /* the list owns a and b: destroying it destroys them */
        aclDestroyTensorList(list);
        a.t = nullptr;
        b.t = nullptr;
        release(a);
        release(b);
        release(o);
    }
    /* ConstantPadNd: [2,3] padded (1,2) on the last dim and cropped (-1,0) on the first */
    {
        auto v = values(6, ACL_FLOAT, 3);
        Dev x = make({2, 3}, ACL_FLOAT, v, TRANSPOSED), o = make({1, 6}, ACL_FLOAT, {});
        int64_t p[] = {1, 2, -1, 0};
        aclIntArray *pad = aclCreateIntArray(p, 4);
        float val = 9;
        aclScalar *s = aclCreateScalar(&val, ACL_FLOAT);
        RUN(S, aclnnConstantPadNd, x.t, pad, s, o.t);
        compare("ConstantPadNd", read(o), {9, v[3], v[4], v[5], 9, 9}, 0);
        aclDestroyIntArray(pad);
        aclDestroyScalar(s);
        release(x);
        release(o);
    }
    printf("ok copy\n");
}

/* ---- reductions and matrix products ---- */
static void reduce_matmul_tests() {
    for (aclDataType t : FLOATS) {
        double tol = (t == ACL_FLOAT16 || t == ACL_BF16) ? 1e-2 : t == ACL_FLOAT ? 1e-5 : 1e-12;
        auto v = values(60, t, 7);
        Dev x = make({3, 4, 5}, t, v, TRANSPOSED);
        int64_t d[] = {0, 2};
        aclIntArray *dims = aclCreateIntArray(d, 2);
        Dev o = make({1, 4, 1}, t, {});
        RUN(S, aclnnReduceSum, x.t, dims, true, t, o.t);
        std::vector<double> want(4, 0);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 5; k++) want[static_cast<size_t>(j)] += v[static_cast<size_t>((i * 4 + j) * 5 + k)];
        for (auto &w : want) w = as_type(w, t);
        compare(name("ReduceSum dims {0,2} keepdim", t, "transposed").c_str(), read(o), want, tol);
        aclDestroyIntArray(dims);
        release(o);
        release(x);
        /* Mm with a transposed second operand, Addmm with a broadcast bias row */
        int M = 7, K = 9, N = 5;
        auto va = values(M * K, t, 11), vb = values(K * N, t, 12), vc = values(N, t, 13);
        Dev a = make({M, K}, t, va), b = make({K, N}, t, vb, TRANSPOSED), c = make({N}, t, vc), out = make({M, N}, t, {}, STRIDED);
        RUN(S, aclnnMm, a.t, b.t, out.t, 1);
        std::vector<double> mm(static_cast<size_t>(M * N), 0);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += va[static_cast<size_t>(i * K + k)] * vb[static_cast<size_t>(k * N + j)];
                mm[static_cast<size_t>(i * N + j)] = s;
            }
        std::vector<double> w2(mm.size());
        for (size_t i = 0; i < mm.size(); i++) w2[i] = as_type(mm[i], t);
        /* K = 9 products: float32 accumulation differs from float64 by a few ulps */
        compare(name("Mm", t, "transposed mat2").c_str(), read(out), w2, tol * 10);
        float beta = 0.5f, alpha = 2.0f;
        aclScalar *sb = aclCreateScalar(&beta, ACL_FLOAT), *sa = aclCreateScalar(&alpha, ACL_FLOAT);
        RUN(S, aclnnAddmm, c.t, a.t, b.t, sb, sa, out.t, 0);
        for (size_t i = 0; i < mm.size(); i++) w2[i] = as_type(0.5 * vc[i % static_cast<size_t>(N)] + 2.0 * mm[i], t);
        compare(name("Addmm", t, "broadcast bias").c_str(), read(out), w2, tol * 10);
        aclDestroyScalar(sb);
        aclDestroyScalar(sa);
        /* Matmul of a 1-D vector and a matrix; Dot */
        Dev vec = make({K}, t, vb), mv = make({N}, t, {});
        RUN(S, aclnnMatmul, vec.t, b.t, mv.t, 0);
        std::vector<double> w3(static_cast<size_t>(N), 0);
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += vb[static_cast<size_t>(k)] * vb[static_cast<size_t>(k * N + j)];
            w3[static_cast<size_t>(j)] = as_type(s, t);
        }
        compare(name("Matmul 1-D @ 2-D", t, "").c_str(), read(mv), w3, tol * 10);
        Dev dot = make({}, t, {});
        RUN(S, aclnnDot, vec.t, vec.t, dot.t);
        double s = 0;
        for (int k = 0; k < K; k++) s += vb[static_cast<size_t>(k)] * vb[static_cast<size_t>(k)];
        compare(name("Dot", t, "").c_str(), read(dot), {as_type(s, t)}, tol * 10);
        release(vec);
        release(mv);
        release(dot);
        release(a);
        release(b);
        release(c);
        release(out);
    }
    printf("ok reduce/matmul\n");
}

/* ---- the cross-entropy and MSE paths of a training step ---- */
static void loss_tests() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        double tol = t == ACL_FLOAT ? 1e-5 : 1e-2;
        int N = 4, C = 5;
        auto v = values(N * C, t, 21);
        Dev x = make({N, C}, t, v, TRANSPOSED), ls = make({N, C}, t, {});
        RUN(S, aclnnLogSoftmax, x.t, 1, ls.t);
        std::vector<double> want(v.size());
        for (int i = 0; i < N; i++) {
            double m = -1e300, sum = 0;
            for (int j = 0; j < C; j++) m = std::max(m, v[static_cast<size_t>(i * C + j)]);
            for (int j = 0; j < C; j++) sum += std::exp(v[static_cast<size_t>(i * C + j)] - m);
            for (int j = 0; j < C; j++) want[static_cast<size_t>(i * C + j)] = as_type(v[static_cast<size_t>(i * C + j)] - m - std::log(sum), t);
        }
        compare(name("LogSoftmax", t, "transposed").c_str(), read(ls), want, tol);
        auto lsv = read(ls);
        /* NLLLoss mean with weights and an ignored target */
        std::vector<double> tg = {1, 4, -100, 0}, wv = {1, 2, 0.5, 1, 3};
        Dev target = make({N}, ACL_INT64, tg), weight = make({C}, t, wv), out = make({}, t, {}), tw = make({}, t, {});
        RUN(S, aclnnNLLLoss, ls.t, target.t, weight.t, 1, -100, out.t, tw.t);
        double num = 0, den = 0;
        for (int i = 0; i < N; i++) {
            if (tg[static_cast<size_t>(i)] == -100) continue;
            int k = static_cast<int>(tg[static_cast<size_t>(i)]);
            num -= wv[static_cast<size_t>(k)] * lsv[static_cast<size_t>(i * C + k)];
            den += wv[static_cast<size_t>(k)];
        }
        compare(name("NLLLoss mean", t, "").c_str(), read(out), {as_type(num / den, t)}, tol);
        compare(name("NLLLoss totalWeight", t, "").c_str(), read(tw), {den}, tol);
        Dev g = make({}, t, {1.0}), gi = make({N, C}, t, {});
        RUN(S, aclnnNLLLossBackward, g.t, ls.t, target.t, weight.t, 1, -100, tw.t, gi.t);
        std::vector<double> wg(v.size(), 0);
        for (int i = 0; i < N; i++) {
            if (tg[static_cast<size_t>(i)] == -100) continue;
            int k = static_cast<int>(tg[static_cast<size_t>(i)]);
            wg[static_cast<size_t>(i * C + k)] = as_type(-wv[static_cast<size_t>(k)] / den, t);
        }
        compare(name("NLLLossBackward", t, "").c_str(), read(gi), wg, tol);
        Dev gx = make({N, C}, t, {});
        RUN(S, aclnnLogSoftmaxBackward, gi.t, ls.t, 1, gx.t);
        auto giv = read(gi);
        for (int i = 0; i < N; i++) {
            double sg = 0;
            for (int j = 0; j < C; j++) sg += giv[static_cast<size_t>(i * C + j)];
            for (int j = 0; j < C; j++)
                want[static_cast<size_t>(i * C + j)] = as_type(giv[static_cast<size_t>(i * C + j)] - std::exp(lsv[static_cast<size_t>(i * C + j)]) * sg, t);
        }
        compare(name("LogSoftmaxBackward", t, "").c_str(), read(gx), want, tol);
        /* MSE: mean loss and its gradient */
        auto tv = values(N * C, t, 22);
        Dev tgt = make({N, C}, t, tv, STRIDED), mse = make({}, t, {}), mg = make({N, C}, t, {});
        RUN(S, aclnnMseLoss, x.t, tgt.t, 1, mse.t);
        double m = 0;
        for (size_t i = 0; i < v.size(); i++) m += (v[i] - tv[i]) * (v[i] - tv[i]);
        compare(name("MseLoss mean", t, "").c_str(), read(mse), {as_type(m / static_cast<double>(v.size()), t)}, tol);
        RUN(S, aclnnMseLossBackward, g.t, x.t, tgt.t, 1, mg.t);
        for (size_t i = 0; i < v.size(); i++) want[i] = as_type(2.0 * (v[i] - tv[i]) / static_cast<double>(v.size()), t);
        compare(name("MseLossBackward mean", t, "").c_str(), read(mg), want, tol);
        for (Dev *d : {&x, &ls, &target, &weight, &out, &tw, &g, &gi, &gx, &tgt, &mse, &mg}) release(*d);
    }
    printf("ok losses\n");
}

/* ---- the optimizer updates: in-place pointwise and the Foreach family (V1 and V2) ---- */
static void optimizer_tests() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        auto p = values(10, t, 31), g = values(10, t, 32), q = values(10, t, 33, true, true);
        Dev dp = make({10}, t, p), dg = make({10}, t, g), dq = make({10}, t, q);
        float val = -0.5f;
        aclScalar *sv = aclCreateScalar(&val, ACL_FLOAT);
        RUN(S, aclnnInplaceAddcmul, dp.t, dg.t, dq.t, sv);
        std::vector<double> want(10);
        for (size_t i = 0; i < 10; i++) want[i] = as_type(static_cast<float>(p[i]) + -0.5f * static_cast<float>(g[i]) * static_cast<float>(q[i]), t);
        compare(name("InplaceAddcmul", t, "").c_str(), read(dp), want, 0);
        auto p2 = read(dp);
        RUN(S, aclnnInplaceAddcdiv, dp.t, dg.t, dq.t, sv);
        for (size_t i = 0; i < 10; i++) want[i] = as_type(static_cast<float>(p2[i]) + -0.5f * static_cast<float>(g[i]) / static_cast<float>(q[i]), t);
        compare(name("InplaceAddcdiv", t, "").c_str(), read(dp), want, 0);
        p2 = read(dp);
        float w = 0.1f;
        aclScalar *sw = aclCreateScalar(&w, ACL_FLOAT);
        RUN(S, aclnnInplaceLerps, dp.t, dg.t, sw);
        float wr = static_cast<float>(as_type(0.1, t));
        for (size_t i = 0; i < 10; i++) want[i] = as_type(static_cast<float>(p2[i]) + wr * (static_cast<float>(g[i]) - static_cast<float>(p2[i])), t);
        compare(name("InplaceLerps", t, "").c_str(), read(dp), want, 0);
        aclDestroyScalar(sv);
        aclDestroyScalar(sw);
        release(dp);
        release(dg);
        release(dq);
    }
    /* Foreach over two tensors of different shapes */
    Shape s1{3, 4}, s2{5};
    auto a1 = values(12, ACL_FLOAT, 41), a2 = values(5, ACL_FLOAT, 42), b1 = values(12, ACL_FLOAT, 43), b2 = values(5, ACL_FLOAT, 44);
    auto c1 = values(12, ACL_FLOAT, 45, true, true), c2 = values(5, ACL_FLOAT, 46, true, true);
    Dev x1 = make(s1, ACL_FLOAT, a1), x2 = make(s2, ACL_FLOAT, a2, STRIDED), y1 = make(s1, ACL_FLOAT, b1, TRANSPOSED), y2 = make(s2, ACL_FLOAT, b2);
    Dev z1 = make(s1, ACL_FLOAT, c1), z2 = make(s2, ACL_FLOAT, c2);
    const aclTensor *xs[] = {x1.t, x2.t}, *ys[] = {y1.t, y2.t}, *zs[] = {z1.t, z2.t};
    /* lists do own their tensors: use separate lists whose destruction we skip for the shared
       tensors by creating them last and destroying only the list objects at exit */
    aclTensorList *lx = aclCreateTensorList(xs, 2), *ly = aclCreateTensorList(ys, 2), *lz = aclCreateTensorList(zs, 2);
    auto both = [&](const std::vector<double> &w1, const std::vector<double> &w2, const char *what) {
        compare((std::string(what) + " [0]").c_str(), read(x1), w1, 0);
        compare((std::string(what) + " [1]").c_str(), read(x2), w2, 0);
    };
    std::vector<double> e1(12), e2(5);
    float alpha = -0.25f;
    aclScalar *sa = aclCreateScalar(&alpha, ACL_FLOAT);
    RUN(S, aclnnForeachAddListV2, lx, ly, sa, lx);
    for (size_t i = 0; i < 12; i++) e1[i] = a1[i] = static_cast<float>(a1[i]) + -0.25f * static_cast<float>(b1[i]);
    for (size_t i = 0; i < 5; i++) e2[i] = a2[i] = static_cast<float>(a2[i]) + -0.25f * static_cast<float>(b2[i]);
    both(e1, e2, "ForeachAddListV2");
    /* V1: alpha as a one-element device tensor */
    Dev alpha_t = make({1}, ACL_FLOAT, {0.5});
    RUN(S, aclnnForeachAddList, lx, ly, alpha_t.t, lx);
    for (size_t i = 0; i < 12; i++) e1[i] = a1[i] = static_cast<float>(a1[i]) + 0.5f * static_cast<float>(b1[i]);
    for (size_t i = 0; i < 5; i++) e2[i] = a2[i] = static_cast<float>(a2[i]) + 0.5f * static_cast<float>(b2[i]);
    both(e1, e2, "ForeachAddList (V1)");
    float m = 0.9f;
    aclScalar *sm = aclCreateScalar(&m, ACL_FLOAT);
    RUN(S, aclnnForeachMulScalarV2, lx, sm, lx);
    for (size_t i = 0; i < 12; i++) e1[i] = a1[i] = static_cast<float>(a1[i]) * 0.9f;
    for (size_t i = 0; i < 5; i++) e2[i] = a2[i] = static_cast<float>(a2[i]) * 0.9f;
    both(e1, e2, "ForeachMulScalarV2");
    Dev st = make({1}, ACL_FLOAT, {3.0});
    RUN(S, aclnnForeachMulScalar, lx, st.t, lx);
    for (size_t i = 0; i < 12; i++) e1[i] = a1[i] = static_cast<float>(a1[i]) * 3.0f;
    for (size_t i = 0; i < 5; i++) e2[i] = a2[i] = static_cast<float>(a2[i]) * 3.0f;
    both(e1, e2, "ForeachMulScalar (V1)");
    RUN(S, aclnnForeachAddScalar, lx, st.t, lx);
    for (size_t i = 0; i < 12; i++) e1[i] = a1[i] = static_cast<float>(a1[i]) + 3.0f;
    for (size_t i = 0; i < 5; i++) e2[i] = a2[i] = static_cast<float>(a2[i]) + 3.0f;
    both(e1, e2, "ForeachAddScalar (V1)");
    RUN(S, aclnnForeachAddcmulScalarV2, lx, ly, lz, sa, lx);
    for (size_t i = 0; i < 12; i++) e1[i] = a1[i] = static_cast<float>(a1[i]) + -0.25f * static_cast<float>(b1[i]) * static_cast<float>(c1[i]);
    for (size_t i = 0; i < 5; i++) e2[i] = a2[i] = static_cast<float>(a2[i]) + -0.25f * static_cast<float>(b2[i]) * static_cast<float>(c2[i]);
    both(e1, e2, "ForeachAddcmulScalarV2");
    RUN(S, aclnnForeachAddcdivScalarV2, lx, ly, lz, sa, lx);
    for (size_t i = 0; i < 12; i++) e1[i] = a1[i] = static_cast<float>(a1[i]) + -0.25f * static_cast<float>(b1[i]) / static_cast<float>(c1[i]);
    for (size_t i = 0; i < 5; i++) e2[i] = a2[i] = static_cast<float>(a2[i]) + -0.25f * static_cast<float>(b2[i]) / static_cast<float>(c2[i]);
    both(e1, e2, "ForeachAddcdivScalarV2");
    RUN(S, aclnnForeachLerpScalar, lx, ly, sm, lx);
    for (size_t i = 0; i < 12; i++) {
        float s = static_cast<float>(a1[i]), e = static_cast<float>(b1[i]);
        e1[i] = a1[i] = e - (e - s) * (1.0f - 0.9f);
    }
    for (size_t i = 0; i < 5; i++) {
        float s = static_cast<float>(a2[i]), e = static_cast<float>(b2[i]);
        e2[i] = a2[i] = e - (e - s) * (1.0f - 0.9f);
    }
    both(e1, e2, "ForeachLerpScalar");
    RUN(S, aclnnForeachSqrt, lz, lz);
    for (size_t i = 0; i < 12; i++) c1[i] = std::sqrt(static_cast<float>(c1[i]));
    for (size_t i = 0; i < 5; i++) c2[i] = std::sqrt(static_cast<float>(c2[i]));
    compare("ForeachSqrt [0]", read(z1), c1, 0);
    compare("ForeachSqrt [1]", read(z2), c2, 0);
    RUN(S, aclnnForeachDivScalarV2, lz, sm, lz);
    for (size_t i = 0; i < 12; i++) c1[i] = static_cast<float>(c1[i]) / 0.9f;
    for (size_t i = 0; i < 5; i++) c2[i] = static_cast<float>(c2[i]) / 0.9f;
    compare("ForeachDivScalarV2 [0]", read(z1), c1, 0);
    Dev n1 = make({}, ACL_FLOAT, {}), n2 = make({}, ACL_FLOAT, {});
    const aclTensor *ns[] = {n1.t, n2.t};
    aclTensorList *ln = aclCreateTensorList(ns, 2);
    float two = 2;
    aclScalar *s2p = aclCreateScalar(&two, ACL_FLOAT);
    RUN(S, aclnnForeachNorm, ly, s2p, ln);
    double q1 = 0, q2 = 0;
    for (double v : b1) q1 += v * v;
    for (double v : b2) q2 += v * v;
    compare("ForeachNorm [0]", read(n1), {std::sqrt(q1)}, 1e-6);
    compare("ForeachNorm [1]", read(n2), {std::sqrt(q2)}, 1e-6);
    aclDestroyScalar(sa);
    aclDestroyScalar(sm);
    aclDestroyScalar(s2p);
    printf("ok optimizer\n");
}

/* ---- random: reproducible per (seed, offset), plausible moments ---- */
static void random_tests() {
    Dev a = make({64, 64}, ACL_FLOAT, {}), b = make({4096}, ACL_FLOAT, {}, STRIDED);
    RUN(S, aclnnInplaceNormal, a.t, 1.0f, 2.0f, 1234, 16);
    RUN(S, aclnnInplaceNormal, b.t, 1.0f, 2.0f, 1234, 16);
    auto va = read(a), vb = read(b);
    compare("InplaceNormal reproducible", vb, va, 0);
    double mean = 0, var = 0;
    for (double v : va) mean += v;
    mean /= 4096;
    for (double v : va) var += (v - mean) * (v - mean);
    var /= 4096;
    g_checks++;
    if (std::fabs(mean - 1.0) > 0.15 || std::fabs(std::sqrt(var) - 2.0) > 0.15) {
        printf("FAIL InplaceNormal moments: mean %f std %f\n", mean, std::sqrt(var));
        g_fail++;
    }
    RUN(S, aclnnInplaceNormal, b.t, 1.0f, 2.0f, 1234, 17);
    g_checks++;
    if (read(b) == va) {
        printf("FAIL InplaceNormal: another offset gave the same numbers\n");
        g_fail++;
    }
    release(a);
    release(b);
    printf("ok random\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    binary_tests();
    unary_tests();
    copy_tests();
    reduce_matmul_tests();
    loss_tests();
    optimizer_tests();
    random_tests();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
