/* Convolutional-network and ordering operators against a host reference (float64 direct
 * sums): Convolution (1-D and 2-D; stride, padding, dilation, groups, transposed; float32
 * and float16; a transposed-layout input) and ConvolutionBackward (all three gradients),
 * BatchNorm (training, with the running statistics, and evaluation) and BatchNormBackward,
 * MaxPool2dWithIndices / WithMask and their backward forms, AvgPool2d (+Backward),
 * AdaptiveAvgPool2d, Sort, Topk, MedianDim, IndexAdd, Take, Roll; and their argument errors.
 * Tolerances: float32 products and statistics to 1e-4 relative (sums of at most a few
 * hundred float32 terms), float16 to 2e-3 (one float16 rounding of the result); pooling,
 * sorting, selection and indices exactly. */
#include <algorithm>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aclnnop/aclnn_batch_norm.h"
#include "aclnnop/aclnn_batch_norm_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_mask.h"
#include "aclnnop/aclnn_max_pool2d_with_mask_backward.h"
#include "aclnnop/aclnn_avgpool2d.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d.h"
#include "aclnnop/aclnn_sort.h"
#include "aclnnop/aclnn_topk.h"
#include "aclnnop/aclnn_median.h"
#include "aclnnop/aclnn_index_add.h"
#include "aclnnop/aclnn_take.h"
#include "aclnnop/aclnn_roll.h"

static aclrtStream S;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    }
}

static aclIntArray *ia(std::vector<int64_t> v) { return aclCreateIntArray(v.data(), v.size()); }

struct Conv {
    int64_t n, cin, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, g;
    bool transposed;
    int64_t oph, opw;
};

static int64_t olen(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d) { return (i + 2 * p - d * (k - 1) - 1) / s + 1; }

/* Plain-convolution geometry of c: image (ih, iw, ic channels), result (oh, ow, oc). For a
 * transposed convolution the image is its output. */
struct Plain {
    int64_t ic, ih, iw, oc, oh, ow;
};

static Plain plain_of(const Conv &c) {
    if (!c.transposed) return {c.cin, c.h, c.w, c.cout, olen(c.h, c.kh, c.sh, c.ph, c.dh), olen(c.w, c.kw, c.sw, c.pw, c.dw)};
    int64_t th = (c.h - 1) * c.sh - 2 * c.ph + c.dh * (c.kh - 1) + c.oph + 1;
    int64_t tw = (c.w - 1) * c.sw - 2 * c.pw + c.dw * (c.kw - 1) + c.opw + 1;
    return {c.cout, th, tw, c.cin, c.h, c.w};
}

/* y[n, oc, oh, ow] += x[n, ic, ih, iw] * w[oc, ic/g, kh, kw] over the plain geometry; `f`
 * visits every (x index, w index, y index) product. */
template <class F>
static void each_product(const Conv &c, const Plain &p, F f) {
    int64_t icg = p.ic / c.g, ocg = p.oc / c.g;
    for (int64_t b = 0; b < c.n; b++)
        for (int64_t o = 0; o < p.oc; o++)
            for (int64_t y = 0; y < p.oh; y++)
                for (int64_t x = 0; x < p.ow; x++)
                    for (int64_t i = 0; i < icg; i++)
                        for (int64_t a = 0; a < c.kh; a++)
                            for (int64_t e = 0; e < c.kw; e++) {
                                int64_t iy = y * c.sh - c.ph + a * c.dh, ix = x * c.sw - c.pw + e * c.dw;
                                if (iy < 0 || iy >= p.ih || ix < 0 || ix >= p.iw) continue;
                                int64_t ch = (o / ocg) * icg + i;
                                f(((b * p.ic + ch) * p.ih + iy) * p.iw + ix, ((o * icg + i) * c.kh + a) * c.kw + e,
                                  ((b * p.oc + o) * p.oh + y) * p.ow + x);
                            }
}

static void convs() {
    const Conv cases[] = {
        {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, false, 0, 0},
        {1, 4, 9, 9, 6, 3, 2, 2, 1, 1, 0, 2, 1, 2, false, 0, 0},
        {2, 2, 1, 10, 3, 1, 3, 1, 2, 0, 1, 1, 1, 1, false, 0, 0}, /* a 1-D convolution as [N, C, 1, L] */
        {1, 2, 4, 4, 3, 3, 3, 2, 2, 0, 0, 1, 1, 1, true, 0, 0},
        {2, 4, 3, 5, 4, 2, 3, 2, 1, 1, 0, 1, 1, 2, true, 1, 0},
    };
    for (const Conv &c : cases) {
        for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16}) {
            for (Layout l : {CONTIG, TRANSPOSED}) {
                Plain p = plain_of(c);
                Shape xs{c.n, c.cin, c.h, c.w};
                Shape wsh = c.transposed ? Shape{c.cin, c.cout / c.g, c.kh, c.kw} : Shape{c.cout, c.cin / c.g, c.kh, c.kw};
                Shape ys = c.transposed ? Shape{c.n, c.cout, p.ih, p.iw} : Shape{c.n, c.cout, p.oh, p.ow};
                bool one_d = c.h == 1 && c.kh == 1 && !c.transposed;
                auto X = values(numel(xs), dt, 1), W = values(numel(wsh), dt, 2), B = values(c.cout, dt, 3);
                auto G = values(numel(ys), dt, 4);
                /* reference (plain geometry; for transposed, x is the plain result and y the image) */
                std::vector<double> Y(static_cast<size_t>(numel(ys)), 0), GX(X.size(), 0), GW(W.size(), 0), GB(B.size(), 0);
                each_product(c, p, [&](int64_t im, int64_t wi, int64_t re) {
                    if (!c.transposed) {
                        Y[re] += X[im] * W[wi];
                        GX[im] += G[re] * W[wi];
                        GW[wi] += G[re] * X[im];
                    } else {
                        Y[im] += X[re] * W[wi];
                        GX[re] += G[im] * W[wi];
                        GW[wi] += X[re] * G[im];
                    }
                });
                int64_t vol = numel(ys) / (c.n * c.cout);
                for (int64_t i = 0; i < numel(ys); i++) {
                    Y[i] += B[(i / vol) % c.cout];
                    GB[(i / vol) % c.cout] += G[i];
                }
                double tol = dt == ACL_FLOAT ? 1e-4 : 2e-3;
                auto rnd = [&](std::vector<double> v) {
                    for (auto &e : v) e = as_type(e, dt);
                    return v;
                };
                Shape xs1 = one_d ? Shape{c.n, c.cin, c.w} : xs, ws1 = one_d ? Shape{c.cout, c.cin / c.g, c.kw} : wsh;
                Shape ys1 = one_d ? Shape{c.n, c.cout, p.ow} : ys;
                Dev x = make(xs1, dt, X, l), w = make(ws1, dt, W), b = make({c.cout}, dt, B), y = make(ys1, dt, {0});
                std::vector<int64_t> st = one_d ? std::vector<int64_t>{c.sw} : std::vector<int64_t>{c.sh, c.sw};
                std::vector<int64_t> pd = one_d ? std::vector<int64_t>{c.pw} : std::vector<int64_t>{c.ph, c.pw};
                std::vector<int64_t> dl = one_d ? std::vector<int64_t>{c.dw} : std::vector<int64_t>{c.dh, c.dw};
                std::vector<int64_t> op = one_d ? std::vector<int64_t>{0} : std::vector<int64_t>{c.oph, c.opw};
                aclIntArray *as = ia(st), *ap = ia(pd), *ad = ia(dl), *ao = ia(op);
                RUN(S, aclnnConvolution, x.t, w.t, b.t, as, ap, ad, c.transposed, ao, c.g, y.t, 0);
                char what[128];
                snprintf(what, sizeof what, "Convolution %s%s %s g%ld %s", c.transposed ? "transposed " : "", one_d ? "1-D" : "2-D",
                         dname(dt), static_cast<long>(c.g), lname(l));
                compare(what, read(y), rnd(Y), tol);
                Dev gy = make(ys1, dt, G), gx = make(xs1, dt, {0}), gw = make(ws1, dt, {0}), gb = make({c.cout}, dt, {0});
                bool mask[3] = {true, true, true};
                aclBoolArray *am = aclCreateBoolArray(mask, 3);
                aclIntArray *bs = ia({c.cout});
                RUN(S, aclnnConvolutionBackward, gy.t, x.t, w.t, bs, as, ap, ad, c.transposed, ao, static_cast<int>(c.g), am, 0,
                    gx.t, gw.t, gb.t);
                std::string base(what);
                compare((base + " grad input").c_str(), read(gx), rnd(GX), tol);
                compare((base + " grad weight").c_str(), read(gw), rnd(GW), tol);
                compare((base + " grad bias").c_str(), read(gb), rnd(GB), tol);
                for (aclIntArray *arr : {as, ap, ad, ao, bs}) aclDestroyIntArray(arr);
                aclDestroyBoolArray(am);
                for (Dev *d : {&x, &w, &b, &y, &gy, &gx, &gw, &gb}) release(*d);
            }
        }
    }
    printf("ok conv\n");
}

static void batch_norms() {
    const int64_t N = 4, C = 3, HW = 5;
    Shape xs{N, C, HW};
    auto X = values(numel(xs), ACL_FLOAT, 5), W = values(C, ACL_FLOAT, 6), B = values(C, ACL_FLOAT, 7);
    auto G = values(numel(xs), ACL_FLOAT, 8);
    const double eps = 1e-5, mom = 0.1;
    std::vector<double> mean(C, 0), var(C, 0), Y(X.size()), GX(X.size()), GW(C, 0), GB(C, 0), RM(C), RV(C);
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0, m = N * HW;
        for (int64_t b = 0; b < N; b++)
            for (int64_t k = 0; k < HW; k++) s += X[(b * C + c) * HW + k];
        mean[c] = s / m;
        for (int64_t b = 0; b < N; b++)
            for (int64_t k = 0; k < HW; k++) q += std::pow(X[(b * C + c) * HW + k] - mean[c], 2);
        var[c] = q / m;
        RM[c] = (1 - mom) * 0.5 + mom * mean[c];
        RV[c] = (1 - mom) * 2.0 + mom * q / (m - 1);
        double is = 1 / std::sqrt(var[c] + eps), sg = 0, sgx = 0;
        for (int64_t b = 0; b < N; b++)
            for (int64_t k = 0; k < HW; k++) {
                int64_t i = (b * C + c) * HW + k;
                Y[i] = (X[i] - mean[c]) * is * W[c] + B[c];
                sg += G[i];
                sgx += G[i] * (X[i] - mean[c]) * is;
            }
        GW[c] = sgx;
        GB[c] = sg;
        for (int64_t b = 0; b < N; b++)
            for (int64_t k = 0; k < HW; k++) {
                int64_t i = (b * C + c) * HW + k;
                GX[i] = W[c] * is * (G[i] - sg / m - (X[i] - mean[c]) * is * sgx / m);
            }
    }
    for (Layout l : {CONTIG, STRIDED}) {
        Dev x = make(xs, ACL_FLOAT, X, l), w = make({C}, ACL_FLOAT, W), b = make({C}, ACL_FLOAT, B);
        Dev rm = make({C}, ACL_FLOAT, {0.5}), rv = make({C}, ACL_FLOAT, {2.0}), y = make(xs, ACL_FLOAT, {0});
        Dev sm = make({C}, ACL_FLOAT, {0}), si = make({C}, ACL_FLOAT, {0});
        RUN(S, aclnnBatchNorm, x.t, w.t, b.t, rm.t, rv.t, true, mom, eps, y.t, sm.t, si.t);
        compare("BatchNorm training output", read(y), Y, 1e-4);
        compare("BatchNorm saveMean", read(sm), mean, 1e-5);
        compare("BatchNorm running mean", read(rm), RM, 1e-5);
        compare("BatchNorm running var", read(rv), RV, 1e-5);
        Dev g = make(xs, ACL_FLOAT, G), gx = make(xs, ACL_FLOAT, {0}), gw = make({C}, ACL_FLOAT, {0}), gb = make({C}, ACL_FLOAT, {0});
        bool mask[3] = {true, true, true};
        aclBoolArray *am = aclCreateBoolArray(mask, 3);
        RUN(S, aclnnBatchNormBackward, g.t, x.t, w.t, rm.t, rv.t, sm.t, si.t, true, eps, am, gx.t, gw.t, gb.t);
        compare("BatchNormBackward grad input", read(gx), GX, 1e-4);
        compare("BatchNormBackward grad weight", read(gw), GW, 1e-4);
        compare("BatchNormBackward grad bias", read(gb), GB, 1e-4);
        /* evaluation: the running statistics normalise */
        RUN(S, aclnnBatchNorm, x.t, w.t, b.t, rm.t, rv.t, false, mom, eps, y.t, sm.t, si.t);
        std::vector<double> YE(X.size());
        for (size_t i = 0; i < X.size(); i++) {
            int64_t c = (static_cast<int64_t>(i) / HW) % C;
            YE[i] = (X[i] - RM[c]) / std::sqrt(RV[c] + eps) * W[c] + B[c];
        }
        compare("BatchNorm evaluation output", read(y), YE, 1e-4);
        compare("BatchNorm evaluation leaves running mean", read(rm), RM, 1e-5);
        aclDestroyBoolArray(am);
        for (Dev *d : {&x, &w, &b, &rm, &rv, &y, &sm, &si, &g, &gx, &gw, &gb}) release(*d);
    }
    printf("ok batch norm\n");
}

static void pools() {
    const int64_t N = 2, C = 3, H = 7, W = 6;
    Shape xs{N, C, H, W};
    auto X = values(numel(xs), ACL_FLOAT, 9);
    struct P {
        int64_t k, s, p;
        bool ceil;
    };
    for (P q : {P{2, 2, 0, false}, P{3, 2, 1, false}, P{3, 2, 1, true}}) {
        int64_t oh = q.ceil ? (H + 2 * q.p - q.k + q.s - 1) / q.s + 1 : (H + 2 * q.p - q.k) / q.s + 1;
        int64_t ow = q.ceil ? (W + 2 * q.p - q.k + q.s - 1) / q.s + 1 : (W + 2 * q.p - q.k) / q.s + 1;
        if (q.ceil && (oh - 1) * q.s >= H + q.p) oh--;
        if (q.ceil && (ow - 1) * q.s >= W + q.p) ow--;
        Shape os{N, C, oh, ow};
        std::vector<double> MX(numel(os)), IX(numel(os)), AV(numel(os)), GMX(X.size(), 0), GAV(X.size(), 0);
        auto G = values(numel(os), ACL_FLOAT, 10);
        for (int64_t pl = 0; pl < N * C; pl++)
            for (int64_t y = 0; y < oh; y++)
                for (int64_t x = 0; x < ow; x++) {
                    double best = -INFINITY, sum = 0;
                    int64_t bi = -1, h0 = y * q.s - q.p, w0 = x * q.s - q.p;
                    int64_t h1 = std::min(h0 + q.k, H + q.p), w1 = std::min(w0 + q.k, W + q.p);
                    double div = static_cast<double>((h1 - h0) * (w1 - w0));
                    for (int64_t iy = std::max<int64_t>(h0, 0); iy < std::min(h1, H); iy++)
                        for (int64_t ix = std::max<int64_t>(w0, 0); ix < std::min(w1, W); ix++) {
                            double v = X[(pl * H + iy) * W + ix];
                            sum += v;
                            if (bi < 0 || v > best) best = v, bi = iy * W + ix;
                        }
                    int64_t o = (pl * oh + y) * ow + x;
                    MX[o] = best;
                    IX[o] = static_cast<double>(bi);
                    AV[o] = sum / div;
                    GMX[pl * H * W + bi] += G[o];
                    for (int64_t iy = std::max<int64_t>(h0, 0); iy < std::min(h1, H); iy++)
                        for (int64_t ix = std::max<int64_t>(w0, 0); ix < std::min(w1, W); ix++) GAV[(pl * H + iy) * W + ix] += G[o] / div;
                }
        aclIntArray *k = ia({q.k, q.k}), *s = ia({q.s, q.s}), *p = ia({q.p, q.p}), *d = ia({1, 1});
        Dev x = make(xs, ACL_FLOAT, X, TRANSPOSED), o = make(os, ACL_FLOAT, {0}), idx = make(os, ACL_INT32, {0});
        RUN(S, aclnnMaxPool2dWithIndices, x.t, k, s, p, d, q.ceil, o.t, idx.t);
        compare("MaxPool2dWithIndices values", read(o), MX, 0);
        compare("MaxPool2dWithIndices indices", read(idx), IX, 0);
        Dev g = make(os, ACL_FLOAT, G), gx = make(xs, ACL_FLOAT, {7});
        RUN(S, aclnnMaxPool2dWithIndicesBackward, g.t, x.t, idx.t, k, s, p, d, q.ceil, gx.t);
        compare("MaxPool2dWithIndicesBackward", read(gx), GMX, 1e-6);
        int64_t mw = ((oh * ow + 15) / 16 + 1) * 32;
        Dev m = make({N, C, q.k * q.k, mw}, ACL_INT8, {0}), o2 = make(os, ACL_FLOAT, {0}), gx2 = make(xs, ACL_FLOAT, {7});
        RUN(S, aclnnMaxPool2dWithMask, x.t, k, s, p, d, q.ceil, o2.t, m.t);
        compare("MaxPool2dWithMask values", read(o2), MX, 0);
        RUN(S, aclnnMaxPool2dWithMaskBackward, g.t, x.t, m.t, k, s, p, d, q.ceil, gx2.t);
        compare("MaxPool2dWithMaskBackward", read(gx2), GMX, 1e-6);
        Dev a = make(os, ACL_FLOAT, {0}), ga = make(xs, ACL_FLOAT, {0});
        RUN(S, aclnnAvgPool2d, x.t, k, s, p, q.ceil, true, 0, 0, a.t);
        compare("AvgPool2d", read(a), AV, 1e-6);
        RUN(S, aclnnAvgPool2dBackward, g.t, x.t, k, s, p, q.ceil, true, 0, 0, ga.t);
        compare("AvgPool2dBackward", read(ga), GAV, 1e-6);
        for (aclIntArray *arr : {k, s, p, d}) aclDestroyIntArray(arr);
        for (Dev *dv : {&x, &o, &idx, &g, &gx, &m, &o2, &gx2, &a, &ga}) release(*dv);
    }
    /* adaptive average to 3 x 2: windows [floor(i*H/3), ceil((i+1)*H/3)) */
    Dev x = make(xs, ACL_FLOAT, X), o = make({N, C, 3, 2}, ACL_FLOAT, {0});
    aclIntArray *osz = ia({3, 2});
    RUN(S, aclnnAdaptiveAvgPool2d, x.t, osz, o.t);
    std::vector<double> AA;
    for (int64_t pl = 0; pl < N * C; pl++)
        for (int64_t y = 0; y < 3; y++)
            for (int64_t xx = 0; xx < 2; xx++) {
                int64_t h0 = y * H / 3, h1 = ((y + 1) * H + 2) / 3, w0 = xx * W / 2, w1 = ((xx + 1) * W + 1) / 2;
                double s = 0;
                for (int64_t iy = h0; iy < h1; iy++)
                    for (int64_t ix = w0; ix < w1; ix++) s += X[(pl * H + iy) * W + ix];
                AA.push_back(s / static_cast<double>((h1 - h0) * (w1 - w0)));
            }
    compare("AdaptiveAvgPool2d", read(o), AA, 1e-6);
    aclDestroyIntArray(osz);
    release(x);
    release(o);
    printf("ok pool\n");
}

static void orders() {
    /* ties (small integers) keep their order: a stable sort */
    for (aclDataType dt : {ACL_FLOAT, ACL_INT32, ACL_FLOAT16}) {
        Shape xs{4, 9};
        std::vector<double> X(36);
        for (size_t i = 0; i < X.size(); i++) X[i] = static_cast<double>((i * 7) % 5) - 2;
        for (bool desc : {false, true}) {
            Dev x = make(xs, dt, X, TRANSPOSED), v = make(xs, dt, {0}), ix = make(xs, ACL_INT64, {0});
            RUN(S, aclnnSort, x.t, false, 1, desc, v.t, ix.t);
            std::vector<double> V, I;
            for (int64_t r = 0; r < 4; r++) {
                std::vector<int64_t> o(9);
                std::iota(o.begin(), o.end(), 0);
                std::stable_sort(o.begin(), o.end(), [&](int64_t a, int64_t b) {
                    return desc ? X[r * 9 + a] > X[r * 9 + b] : X[r * 9 + a] < X[r * 9 + b];
                });
                for (int64_t j : o) V.push_back(X[r * 9 + j]), I.push_back(static_cast<double>(j));
            }
            compare(desc ? "Sort descending values" : "Sort values", read(v), V, 0);
            compare(desc ? "Sort descending indices" : "Sort indices", read(ix), I, 0);
            Dev tv = make({4, 3}, dt, {0}), ti = make({4, 3}, ACL_INT64, {0});
            RUN(S, aclnnTopk, x.t, 3, -1, desc, true, tv.t, ti.t);
            std::vector<double> TV, TI;
            for (int64_t r = 0; r < 4; r++)
                for (int64_t j = 0; j < 3; j++) TV.push_back(V[r * 9 + j]), TI.push_back(I[r * 9 + j]);
            compare("Topk values", read(tv), TV, 0);
            compare("Topk indices", read(ti), TI, 0);
            Dev mv = make({4}, dt, {0}), mi = make({4}, ACL_INT64, {0});
            RUN(S, aclnnMedianDim, x.t, 1, false, mv.t, mi.t);
            std::vector<double> MV, MI;
            for (int64_t r = 0; r < 4; r++) MV.push_back(desc ? V[r * 9 + 4] : V[r * 9 + 4]);
            compare("MedianDim values", read(mv), MV, 0);
            for (Dev *d : {&x, &v, &ix, &tv, &ti, &mv, &mi}) release(*d);
        }
    }
    /* IndexAdd with a repeated index and alpha, Take with a negative index */
    Dev x = make({4, 3}, ACL_FLOAT, {1, 2, 3}), src = make({3, 3}, ACL_FLOAT, {0.5, 1, 2, 4, 8, 16, 32, 64, 128});
    Dev idx = make({3}, ACL_INT64, {3, 0, 3}), o = make({4, 3}, ACL_FLOAT, {0});
    aclScalar *alpha = nullptr;
    float two = 2;
    alpha = aclCreateScalar(&two, ACL_FLOAT);
    RUN(S, aclnnIndexAdd, x.t, 0, idx.t, src.t, alpha, o.t);
    compare("IndexAdd", read(o), {9, 18, 35, 1, 2, 3, 1, 2, 3, 66, 132, 263}, 0);
    Dev ti = make({2, 2}, ACL_INT32, {0, -1, 5, 7}), to = make({2, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnTake, x.t, ti.t, to.t);
    compare("Take", read(to), {1, 3, 3, 2}, 0);
    aclDestroyScalar(alpha);
    /* Roll by (1, -1) along (0, 1), and the flattened tensor by 5, from a transposed view */
    std::vector<double> R(12);
    std::iota(R.begin(), R.end(), 0);
    Dev rx = make({4, 3}, ACL_INT32, R, TRANSPOSED), ro = make({4, 3}, ACL_INT32, {0});
    aclIntArray *sh = ia({1, -1}), *dm = ia({0, 1}), *s5 = ia({5}), *none = ia({});
    RUN(S, aclnnRoll, rx.t, sh, dm, ro.t);
    std::vector<double> RW(12), RF(12);
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < 3; j++) RW[static_cast<size_t>(((i + 1) % 4) * 3 + (j + 2) % 3)] = R[static_cast<size_t>(i * 3 + j)];
    compare("Roll two dims", read(ro), RW, 0);
    RUN(S, aclnnRoll, rx.t, s5, none, ro.t);
    for (int64_t i = 0; i < 12; i++) RF[static_cast<size_t>((i + 5) % 12)] = R[static_cast<size_t>(i)];
    compare("Roll flattened", read(ro), RF, 0);
    for (aclIntArray *arr : {sh, dm, s5, none}) aclDestroyIntArray(arr);
    for (Dev *d : {&x, &src, &idx, &o, &ti, &to, &rx, &ro}) release(*d);
    printf("ok order\n");
}

static void errors() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev x = make({1, 2, 5, 5}, ACL_FLOAT, {1}), w = make({3, 2, 3, 3}, ACL_FLOAT, {1}), y = make({1, 3, 3, 3}, ACL_FLOAT, {0});
    Dev wi = make({3, 2, 3, 3}, ACL_INT32, {1}), yb = make({1, 3, 4, 4}, ACL_FLOAT, {0}), w1 = make({3, 3, 3, 3}, ACL_FLOAT, {1});
    aclIntArray *one = ia({1, 1}), *zero = ia({0, 0}), *three = ia({1, 1, 1}), *neg = ia({-1, 1});
    expect_code("Convolution null input", aclnnConvolutionGetWorkspaceSize(nullptr, w.t, nullptr, one, zero, one, false, zero, 1, y.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Convolution null stride", aclnnConvolutionGetWorkspaceSize(x.t, w.t, nullptr, nullptr, zero, one, false, zero, 1, y.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Convolution int weight", aclnnConvolutionGetWorkspaceSize(x.t, wi.t, nullptr, one, zero, one, false, zero, 1, y.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Convolution wrong output shape",
                aclnnConvolutionGetWorkspaceSize(x.t, w.t, nullptr, one, zero, one, false, zero, 1, yb.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Convolution channels do not match",
                aclnnConvolutionGetWorkspaceSize(x.t, w1.t, nullptr, one, zero, one, false, zero, 1, y.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Convolution stride of 3 values",
                aclnnConvolutionGetWorkspaceSize(x.t, w.t, nullptr, three, zero, one, false, zero, 1, y.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Convolution negative stride",
                aclnnConvolutionGetWorkspaceSize(x.t, w.t, nullptr, neg, zero, one, false, zero, 1, y.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Convolution groups 0", aclnnConvolutionGetWorkspaceSize(x.t, w.t, nullptr, one, zero, one, false, zero, 0, y.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Convolution cubeMathType 9",
                aclnnConvolutionGetWorkspaceSize(x.t, w.t, nullptr, one, zero, one, false, zero, 1, y.t, 9, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    bool m2[2] = {true, true};
    aclBoolArray *bm = aclCreateBoolArray(m2, 2);
    expect_code("ConvolutionBackward outputMask of 2",
                aclnnConvolutionBackwardGetWorkspaceSize(y.t, x.t, w.t, nullptr, one, zero, one, false, zero, 1, bm, 0, x.t, w.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev c3 = make({3}, ACL_FLOAT, {0}), c2 = make({2}, ACL_FLOAT, {0});
    expect_code("BatchNorm weight of the wrong length",
                aclnnBatchNormGetWorkspaceSize(x.t, c3.t, nullptr, nullptr, nullptr, true, 0.1, 1e-5, x.t, c2.t, c2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("BatchNorm evaluation without running statistics",
                aclnnBatchNormGetWorkspaceSize(x.t, c2.t, c2.t, nullptr, nullptr, false, 0.1, 1e-5, x.t, c2.t, c2.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    Dev o1 = make({1, 2, 2, 2}, ACL_FLOAT, {0}), i1 = make({1, 2, 2, 2}, ACL_FLOAT, {0}), i2 = make({1, 2, 2, 2}, ACL_INT32, {0});
    aclIntArray *k2 = ia({2, 2}), *k1 = ia({1, 1}), *p2 = ia({2, 2});
    expect_code("MaxPool2dWithIndices float indices",
                aclnnMaxPool2dWithIndicesGetWorkspaceSize(x.t, k2, k2, zero, one, false, o1.t, i1.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool2dWithIndices padding over half the kernel",
                aclnnMaxPool2dWithIndicesGetWorkspaceSize(x.t, k2, k2, p2, one, false, o1.t, i2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool2dWithMask int32 mask", aclnnMaxPool2dWithMaskGetWorkspaceSize(x.t, k2, k2, zero, one, false, o1.t, i2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* CANN multiplies by 1 / divisorOverride for any nonzero value, a negative one too */
    expect_code("AvgPool2d negative divisor", aclnnAvgPool2dGetWorkspaceSize(x.t, k2, k2, zero, false, true, -3, 0, o1.t, &ws, &ex),
                ACLNN_SUCCESS);
    expect_code("AvgPool2d null kernel", aclnnAvgPool2dGetWorkspaceSize(x.t, nullptr, k2, zero, false, true, 0, 0, o1.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    Dev v = make({1, 2, 5, 5}, ACL_FLOAT, {0}), i32 = make({1, 2, 5, 5}, ACL_INT32, {0}), i64 = make({1, 2, 5, 5}, ACL_INT64, {0});
    expect_code("Sort int32 indices", aclnnSortGetWorkspaceSize(x.t, false, -1, false, v.t, i32.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Sort dim out of range", aclnnSortGetWorkspaceSize(x.t, false, 4, false, v.t, i64.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Sort null values", aclnnSortGetWorkspaceSize(x.t, false, 0, false, nullptr, i64.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Topk k larger than the dimension", aclnnTopkGetWorkspaceSize(x.t, 6, -1, true, true, v.t, i64.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *arr : {one, zero, three, neg, k2, k1, p2}) aclDestroyIntArray(arr);
    aclDestroyBoolArray(bm);
    for (Dev *d : {&x, &w, &y, &wi, &yb, &w1, &c3, &c2, &o1, &i1, &i2, &v, &i32, &i64}) release(*d);
    /* an index out of range fails the task at the synchronisation, naming it */
    Dev t = make({4}, ACL_FLOAT, {1}), bad = make({1}, ACL_INT64, {9}), to = make({1}, ACL_FLOAT, {0});
    NN(aclnnTakeGetWorkspaceSize(t.t, bad.t, to.t, &ws, &ex));
    NN(aclnnTake(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL Take with index 9 of 4 elements succeeded\n");
        g_fail++;
    }
    release(t);
    release(bad);
    release(to);
    printf("ok errors\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    convs();
    batch_norms();
    pools();
    orders();
    errors();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
