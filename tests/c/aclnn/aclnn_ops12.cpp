/* 3-D pooling of the aclnn reference against float64 host references: AvgPool3d (+Backward),
 * AdaptiveAvgPool3d (+Backward), MaxPool3dWithArgmax (+Backward), AdaptiveMaxPool3d
 * (+Backward), ReflectionPad3d, ReplicationPad3d, CircularPad2d, CircularPad3d (+Backward),
 * GridSampler2D, GridSampler3D (+Backward: the gradients checked against finite differences
 * of the host reference, in double), AffineGrid, UpsampleTrilinear3d, UpsampleBicubic2d (+Backward);
 * each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR /
 * ACLNN_ERR_PARAM_INVALID). Tolerances: max values and indices exactly; averages to 1e-6
 * relative in float32 (computed in float64 and rounded once), 1e-3 in float16 and 1e-2 in
 * bfloat16. Inputs include transposed and strided views and an empty batch. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_avgpool3d.h"
#include "aclnnop/aclnn_avgpool3d_backward.h"
#include "aclnnop/aclnn_adaptive_avg_pool3d.h"
#include "aclnnop/aclnn_adaptive_avg_pool3d_backward.h"
#include "aclnnop/aclnn_max_pool3d_with_argmax.h"
#include "aclnnop/aclnn_max_pool3d_with_argmax_backward.h"
#include "aclnnop/aclnn_adaptive_max_pool3d.h"
#include "aclnnop/aclnn_adaptive_max_pool3d_backward.h"
#include "aclnnop/aclnn_reflection_pad3d.h"
#include "aclnnop/aclnn_reflection_pad3d_backward.h"
#include "aclnnop/aclnn_replication_pad3d.h"
#include "aclnnop/aclnn_replication_pad3d_backward.h"
#include "aclnnop/aclnn_circular_pad2d.h"
#include "aclnnop/aclnn_circular_pad2d_backward.h"
#include "aclnnop/aclnn_circular_pad3d.h"
#include "aclnnop/aclnn_circular_pad3d_backward.h"
#include "aclnnop/aclnn_grid_sampler2d.h"
#include "aclnnop/aclnn_grid_sampler2d_backward.h"
#include "aclnnop/aclnn_affine_grid.h"
#include "aclnnop/aclnn_grid_sampler3d.h"
#include "aclnnop/aclnn_grid_sampler3d_backward.h"
#include "aclnnop/aclnn_upsample_trilinear_3d.h"
#include "aclnnop/aclnn_upsample_trilinear_3d_backward.h"
#include "aclnnop/aclnn_upsample_bicubic_2d.h"
#include "aclnnop/aclnn_upsample_bicubic_2d_backward.h"

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

/* The pooling geometry of one call, every array already expanded to three values. */
struct Geo {
    int64_t k[3], s[3], p[3], d[3];
    bool ceil;
};

/* PyTorch's output length of one dimension. */
static int64_t out_len(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
    int64_t num = i + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
    int64_t o = num / s + 1;
    if (ceil && (o - 1) * s >= i + p) o--;
    return o;
}

/* Shape of x ([..., D, H, W]) with the last three dimensions replaced by o. */
static Shape with_spatial(const Shape &x, const int64_t o[3]) {
    Shape r(x);
    size_t n = r.size();
    for (int j = 0; j < 3; j++) r[n - 3 + j] = o[j];
    return r;
}

static void spatial(const Shape &x, int64_t i[3], int64_t *planes) {
    size_t n = x.size();
    for (int j = 0; j < 3; j++) i[j] = x[n - 3 + j];
    *planes = numel(x) / std::max<int64_t>(1, i[0] * i[1] * i[2]);
}

/* avg_pool3d of dense x; divisor 0 means none. */
static std::vector<double> avg_ref(const std::vector<double> &x, const Shape &xs, const Geo &g, bool cip, int64_t divisor,
                                   Shape *os) {
    int64_t i[3], o[3], P;
    spatial(xs, i, &P);
    for (int j = 0; j < 3; j++) o[j] = out_len(i[j], g.k[j], g.s[j], g.p[j], 1, g.ceil);
    *os = with_spatial(xs, o);
    std::vector<double> y(static_cast<size_t>(P * o[0] * o[1] * o[2]));
    size_t q = 0;
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t a = 0; a < o[0]; a++)
            for (int64_t b = 0; b < o[1]; b++)
                for (int64_t c = 0; c < o[2]; c++) {
                    int64_t st[3] = {a * g.s[0] - g.p[0], b * g.s[1] - g.p[1], c * g.s[2] - g.p[2]}, en[3];
                    int64_t padded = 1, real = 1;
                    for (int j = 0; j < 3; j++) {
                        en[j] = std::min(st[j] + g.k[j], i[j] + g.p[j]);
                        padded *= en[j] - st[j];
                        st[j] = std::max<int64_t>(st[j], 0);
                        en[j] = std::min(en[j], i[j]);
                        real *= en[j] - st[j];
                    }
                    double sum = 0;
                    for (int64_t z = st[0]; z < en[0]; z++)
                        for (int64_t yy = st[1]; yy < en[1]; yy++)
                            for (int64_t xx = st[2]; xx < en[2]; xx++)
                                sum += x[static_cast<size_t>(((pl * i[0] + z) * i[1] + yy) * i[2] + xx)];
                    double div = divisor ? divisor : cip ? padded : real;
                    y[q++] = sum / div;
                }
    return y;
}

/* The gradient of avg_ref: each output's gradient spread over its window. */
static std::vector<double> avg_bwd_ref(const std::vector<double> &gy, const Shape &xs, const Geo &g, bool cip,
                                       int64_t divisor) {
    int64_t i[3], o[3], P;
    spatial(xs, i, &P);
    for (int j = 0; j < 3; j++) o[j] = out_len(i[j], g.k[j], g.s[j], g.p[j], 1, g.ceil);
    std::vector<double> gx(static_cast<size_t>(numel(xs)), 0.0);
    size_t q = 0;
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t a = 0; a < o[0]; a++)
            for (int64_t b = 0; b < o[1]; b++)
                for (int64_t c = 0; c < o[2]; c++) {
                    int64_t st[3] = {a * g.s[0] - g.p[0], b * g.s[1] - g.p[1], c * g.s[2] - g.p[2]}, en[3];
                    int64_t padded = 1, real = 1;
                    for (int j = 0; j < 3; j++) {
                        en[j] = std::min(st[j] + g.k[j], i[j] + g.p[j]);
                        padded *= en[j] - st[j];
                        st[j] = std::max<int64_t>(st[j], 0);
                        en[j] = std::min(en[j], i[j]);
                        real *= en[j] - st[j];
                    }
                    double v = gy[q++] / (divisor ? divisor : cip ? padded : real);
                    for (int64_t z = st[0]; z < en[0]; z++)
                        for (int64_t yy = st[1]; yy < en[1]; yy++)
                            for (int64_t xx = st[2]; xx < en[2]; xx++)
                                gx[static_cast<size_t>(((pl * i[0] + z) * i[1] + yy) * i[2] + xx)] += v;
                }
    return gx;
}

/* max_pool3d: values and flat per-plane indices (the first maximum of each window). */
static std::vector<double> max_ref(const std::vector<double> &x, const Shape &xs, const Geo &g, std::vector<double> *idx,
                                   Shape *os) {
    int64_t i[3], o[3], P;
    spatial(xs, i, &P);
    for (int j = 0; j < 3; j++) o[j] = out_len(i[j], g.k[j], g.s[j], g.p[j], g.d[j], g.ceil);
    *os = with_spatial(xs, o);
    std::vector<double> y;
    idx->clear();
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t a = 0; a < o[0]; a++)
            for (int64_t b = 0; b < o[1]; b++)
                for (int64_t c = 0; c < o[2]; c++) {
                    double best = -INFINITY;
                    int64_t bi = -1;
                    for (int64_t u = 0; u < g.k[0]; u++)
                        for (int64_t v = 0; v < g.k[1]; v++)
                            for (int64_t w = 0; w < g.k[2]; w++) {
                                int64_t z = a * g.s[0] - g.p[0] + u * g.d[0];
                                int64_t yy = b * g.s[1] - g.p[1] + v * g.d[1];
                                int64_t xx = c * g.s[2] - g.p[2] + w * g.d[2];
                                if (z < 0 || z >= i[0] || yy < 0 || yy >= i[1] || xx < 0 || xx >= i[2]) continue;
                                int64_t f = (z * i[1] + yy) * i[2] + xx;
                                double val = x[static_cast<size_t>(pl * i[0] * i[1] * i[2] + f)];
                                if (bi < 0 || val > best) {
                                    best = val;
                                    bi = f;
                                }
                            }
                    y.push_back(best);
                    idx->push_back(static_cast<double>(bi));
                }
    return y;
}

/* Scatter-add of gy to the indexed positions of each plane of an xs-shaped gradient. */
static std::vector<double> scatter_ref(const std::vector<double> &gy, const std::vector<double> &idx, const Shape &xs) {
    int64_t i[3], P;
    spatial(xs, i, &P);
    int64_t pin = i[0] * i[1] * i[2], per = static_cast<int64_t>(gy.size()) / std::max<int64_t>(P, 1);
    std::vector<double> gx(static_cast<size_t>(numel(xs)), 0.0);
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t q = 0; q < per; q++)
            gx[static_cast<size_t>(pl * pin + static_cast<int64_t>(idx[static_cast<size_t>(pl * per + q)]))] +=
                gy[static_cast<size_t>(pl * per + q)];
    return gx;
}

/* Adaptive pooling: average (idx null) or max with indices. */
static std::vector<double> adaptive_ref(const std::vector<double> &x, const Shape &xs, const int64_t o[3],
                                        std::vector<double> *idx) {
    int64_t i[3], P;
    spatial(xs, i, &P);
    std::vector<double> y;
    if (idx) idx->clear();
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t a = 0; a < o[0]; a++)
            for (int64_t b = 0; b < o[1]; b++)
                for (int64_t c = 0; c < o[2]; c++) {
                    int64_t pos[3] = {a, b, c}, st[3], en[3];
                    for (int j = 0; j < 3; j++) {
                        st[j] = pos[j] * i[j] / o[j];
                        en[j] = ((pos[j] + 1) * i[j] + o[j] - 1) / o[j];
                    }
                    double sum = 0, best = -INFINITY;
                    int64_t bi = -1;
                    for (int64_t z = st[0]; z < en[0]; z++)
                        for (int64_t yy = st[1]; yy < en[1]; yy++)
                            for (int64_t xx = st[2]; xx < en[2]; xx++) {
                                int64_t f = (z * i[1] + yy) * i[2] + xx;
                                double v = x[static_cast<size_t>(pl * i[0] * i[1] * i[2] + f)];
                                sum += v;
                                if (bi < 0 || v > best) {
                                    best = v;
                                    bi = f;
                                }
                            }
                    if (idx) {
                        y.push_back(best);
                        idx->push_back(static_cast<double>(bi));
                    } else {
                        y.push_back(sum / static_cast<double>((en[0] - st[0]) * (en[1] - st[1]) * (en[2] - st[2])));
                    }
                }
    return y;
}

static std::vector<double> adaptive_avg_bwd_ref(const std::vector<double> &gy, const Shape &xs, const int64_t o[3]) {
    int64_t i[3], P;
    spatial(xs, i, &P);
    std::vector<double> gx(static_cast<size_t>(numel(xs)), 0.0);
    size_t q = 0;
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t a = 0; a < o[0]; a++)
            for (int64_t b = 0; b < o[1]; b++)
                for (int64_t c = 0; c < o[2]; c++) {
                    int64_t pos[3] = {a, b, c}, st[3], en[3];
                    for (int j = 0; j < 3; j++) {
                        st[j] = pos[j] * i[j] / o[j];
                        en[j] = ((pos[j] + 1) * i[j] + o[j] - 1) / o[j];
                    }
                    double v = gy[q++] / static_cast<double>((en[0] - st[0]) * (en[1] - st[1]) * (en[2] - st[2]));
                    for (int64_t z = st[0]; z < en[0]; z++)
                        for (int64_t yy = st[1]; yy < en[1]; yy++)
                            for (int64_t xx = st[2]; xx < en[2]; xx++)
                                gx[static_cast<size_t>(((pl * i[0] + z) * i[1] + yy) * i[2] + xx)] += v;
                }
    return gx;
}

static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

static double tol_of(aclDataType t) { return t == ACL_FLOAT ? 1e-6 : t == ACL_FLOAT16 ? 1e-3 : 1e-2; }

/* One AvgPool3d + AvgPool3dBackward case. */
static void avg_case(const char *what, const Shape &xs, aclDataType dt, Layout l, Geo g, std::vector<int64_t> karr,
                     std::vector<int64_t> sarr, std::vector<int64_t> parr, bool cip, int64_t divisor, unsigned seed) {
    char name[256];
    std::vector<double> X = values(numel(xs), dt, seed);
    Shape os;
    std::vector<double> want = avg_ref(X, xs, g, cip, divisor, &os);
    Dev x = make(xs, dt, X, l), o = make(os, dt, {0});
    aclIntArray *k = ia(karr), *s = ia(sarr), *p = ia(parr);
    RUN(S, aclnnAvgPool3d, x.t, k, s, p, g.ceil, cip, divisor, o.t);
    snprintf(name, sizeof name, "AvgPool3d %s %s %s", what, dname(dt), lname(l));
    compare(name, read(o), as(want, dt), tol_of(dt));
    std::vector<double> G = values(numel(os), dt, seed + 7);
    Dev gy = make(os, dt, G, l), gx = make(xs, dt, {0});
    RUN(S, aclnnAvgPool3dBackward, gy.t, x.t, k, s, p, g.ceil, cip, divisor, gx.t);
    snprintf(name, sizeof name, "AvgPool3dBackward %s %s %s", what, dname(dt), lname(l));
    compare(name, read(gx), as(avg_bwd_ref(G, xs, g, cip, divisor), dt), tol_of(dt));
    aclDestroyIntArray(k);
    aclDestroyIntArray(s);
    aclDestroyIntArray(p);
    for (Dev *d : {&x, &o, &gy, &gx}) release(*d);
}

static void avg_pool3d() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Geo g2 = {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false};
    avg_case("k2 (stride empty = kernel)", {2, 3, 4, 5, 6}, ACL_FLOAT, CONTIG, g2, {2}, {}, {0}, true, 0, 1);
    Geo g3 = {{3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1}, false};
    avg_case("k(3,2,3) s(2,1,2) p1", {2, 2, 5, 4, 7}, ACL_FLOAT, TRANSPOSED, g3, {3, 2, 3}, {2, 1, 2}, {1}, true, 0, 2);
    avg_case("k(3,2,3) s(2,1,2) p1 no pad count", {3, 5, 4, 7}, ACL_FLOAT, STRIDED, g3, {3, 2, 3}, {2, 1, 2}, {1, 1, 1},
             false, 0, 3);
    Geo gc = {{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true};
    avg_case("k2 s2 p1 ceil", {1, 2, 5, 6, 3}, ACL_FLOAT, CONTIG, gc, {2}, {2}, {1}, false, 0, 4);
    Geo gd = {{2, 3, 2}, {1, 1, 1}, {0, 1, 0}, {1, 1, 1}, false};
    avg_case("divisor 5", {2, 3, 4, 3}, ACL_FLOAT, CONTIG, gd, {2, 3, 2}, {1}, {0, 1, 0}, true, 5, 5);
    avg_case("k2", {1, 2, 4, 4, 6}, ACL_FLOAT16, TRANSPOSED, g2, {2, 2, 2}, {2, 2, 2}, {0}, true, 0, 6);
    avg_case("k2", {2, 4, 4, 4}, ACL_BF16, CONTIG, g2, {2}, {}, {0}, true, 0, 7);
    /* an empty batch */
    Dev e = make({0, 2, 4, 4, 4}, ACL_FLOAT, {}), eo = make({0, 2, 2, 2, 2}, ACL_FLOAT, {});
    aclIntArray *k2 = ia({2}), *none = ia({}), *p0 = ia({0}), *k22 = ia({2, 2}), *p2 = ia({2}), *sz = ia({0});
    RUN(S, aclnnAvgPool3d, e.t, k2, none, p0, false, true, 0, eo.t);
    g_checks++;
    /* errors */
    Dev x = make({1, 2, 4, 4, 4}, ACL_FLOAT, {1}), o = make({1, 2, 2, 2, 2}, ACL_FLOAT, {0});
    Dev xi = make({1, 2, 4, 4, 4}, ACL_INT32, {1}), x3 = make({4, 4, 4}, ACL_FLOAT, {1});
    Dev oh = make({1, 2, 2, 2, 2}, ACL_FLOAT16, {0}), o3 = make({1, 2, 3, 2, 2}, ACL_FLOAT, {0});
    Dev gx = make({1, 2, 4, 4, 4}, ACL_FLOAT, {0}), gxs = make({1, 2, 4, 4, 3}, ACL_FLOAT, {0});
    expect_code("AvgPool3d null self", aclnnAvgPool3dGetWorkspaceSize(nullptr, k2, none, p0, false, true, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AvgPool3d null kernelSize",
                aclnnAvgPool3dGetWorkspaceSize(x.t, nullptr, none, p0, false, true, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AvgPool3d null out", aclnnAvgPool3dGetWorkspaceSize(x.t, k2, none, p0, false, true, 0, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AvgPool3d int32 self", aclnnAvgPool3dGetWorkspaceSize(xi.t, k2, none, p0, false, true, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3d 3-D self", aclnnAvgPool3dGetWorkspaceSize(x3.t, k2, none, p0, false, true, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3d kernelSize of 2 values",
                aclnnAvgPool3dGetWorkspaceSize(x.t, k22, none, p0, false, true, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3d stride 0", aclnnAvgPool3dGetWorkspaceSize(x.t, k2, sz, p0, false, true, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3d padding 2 with kernel 2",
                aclnnAvgPool3dGetWorkspaceSize(x.t, k2, none, p2, false, true, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3d float16 out of a float self",
                aclnnAvgPool3dGetWorkspaceSize(x.t, k2, none, p0, false, true, 0, oh.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3d out [1, 2, 3, 2, 2]",
                aclnnAvgPool3dGetWorkspaceSize(x.t, k2, none, p0, false, true, 0, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3dBackward null gradOutput",
                aclnnAvgPool3dBackwardGetWorkspaceSize(nullptr, x.t, k2, none, p0, false, true, 0, gx.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AvgPool3dBackward gradOutput [1, 2, 3, 2, 2]",
                aclnnAvgPool3dBackwardGetWorkspaceSize(o3.t, x.t, k2, none, p0, false, true, 0, gx.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AvgPool3dBackward output of another shape",
                aclnnAvgPool3dBackwardGetWorkspaceSize(o.t, x.t, k2, none, p0, false, true, 0, gxs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {k2, none, p0, k22, p2, sz}) aclDestroyIntArray(a);
    for (Dev *d : {&e, &eo, &x, &o, &xi, &x3, &oh, &o3, &gx, &gxs}) release(*d);
    printf("ok avg pool3d\n");
}

static void adaptive_avg_pool3d() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct Case {
        Shape xs;
        int64_t o[3];
        aclDataType dt;
        Layout l;
    } cases[] = {
        {{2, 3, 6, 7, 5}, {3, 4, 2}, ACL_FLOAT, CONTIG},
        {{3, 5, 6, 4}, {4, 4, 3}, ACL_FLOAT, TRANSPOSED},
        {{1, 2, 3, 4, 5}, {5, 6, 7}, ACL_FLOAT, STRIDED},
        {{2, 2, 5, 5, 5}, {2, 3, 1}, ACL_FLOAT16, CONTIG},
        {{2, 4, 4, 6}, {2, 2, 3}, ACL_BF16, STRIDED},
    };
    unsigned seed = 20;
    for (auto &c : cases) {
        char name[256];
        std::vector<double> X = values(numel(c.xs), c.dt, seed++);
        Shape os = with_spatial(c.xs, c.o);
        Dev x = make(c.xs, c.dt, X, c.l), o = make(os, c.dt, {0});
        aclIntArray *sz = ia({c.o[0], c.o[1], c.o[2]});
        RUN(S, aclnnAdaptiveAvgPool3d, x.t, sz, o.t);
        snprintf(name, sizeof name, "AdaptiveAvgPool3d to %lldx%lldx%lld %s %s", (long long)c.o[0], (long long)c.o[1],
                 (long long)c.o[2], dname(c.dt), lname(c.l));
        compare(name, read(o), as(adaptive_ref(X, c.xs, c.o, nullptr), c.dt), tol_of(c.dt));
        std::vector<double> G = values(numel(os), c.dt, seed++);
        Dev gy = make(os, c.dt, G, c.l), gx = make(c.xs, c.dt, {0});
        RUN(S, aclnnAdaptiveAvgPool3dBackward, gy.t, x.t, gx.t);
        snprintf(name, sizeof name, "AdaptiveAvgPool3dBackward to %lldx%lldx%lld %s %s", (long long)c.o[0],
                 (long long)c.o[1], (long long)c.o[2], dname(c.dt), lname(c.l));
        compare(name, read(gx), as(adaptive_avg_bwd_ref(G, c.xs, c.o), c.dt), tol_of(c.dt));
        aclDestroyIntArray(sz);
        for (Dev *d : {&x, &o, &gy, &gx}) release(*d);
    }
    /* errors */
    Dev x = make({1, 2, 4, 4, 4}, ACL_FLOAT, {1}), o = make({1, 2, 2, 2, 2}, ACL_FLOAT, {0});
    Dev xd = make({1, 2, 4, 4, 4}, ACL_DOUBLE, {1}), xe = make({1, 2, 0, 4, 4}, ACL_FLOAT, {});
    Dev gbad = make({2, 2, 2, 2, 2}, ACL_FLOAT, {0}), gx = make({1, 2, 4, 4, 4}, ACL_FLOAT, {0});
    aclIntArray *sz = ia({2, 2, 2}), *sz2 = ia({2, 2}), *szn = ia({2, 0, 2});
    expect_code("AdaptiveAvgPool3d null self", aclnnAdaptiveAvgPool3dGetWorkspaceSize(nullptr, sz, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AdaptiveAvgPool3d null outputSize", aclnnAdaptiveAvgPool3dGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AdaptiveAvgPool3d double self", aclnnAdaptiveAvgPool3dGetWorkspaceSize(xd.t, sz, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveAvgPool3d outputSize of 2 values", aclnnAdaptiveAvgPool3dGetWorkspaceSize(x.t, sz2, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveAvgPool3d outputSize with a 0", aclnnAdaptiveAvgPool3dGetWorkspaceSize(x.t, szn, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveAvgPool3d empty depth", aclnnAdaptiveAvgPool3dGetWorkspaceSize(xe.t, sz, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveAvgPool3dBackward null out", aclnnAdaptiveAvgPool3dBackwardGetWorkspaceSize(o.t, x.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AdaptiveAvgPool3dBackward gradOutput of another batch",
                aclnnAdaptiveAvgPool3dBackwardGetWorkspaceSize(gbad.t, x.t, gx.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveAvgPool3dBackward out of gradOutput's shape",
                aclnnAdaptiveAvgPool3dBackwardGetWorkspaceSize(o.t, x.t, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {sz, sz2, szn}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &xd, &xe, &gbad, &gx}) release(*d);
    printf("ok adaptive avg pool3d\n");
}

/* One MaxPool3dWithArgmax + Backward case. */
static void max_case(const char *what, const Shape &xs, aclDataType dt, aclDataType it, Layout l, Geo g,
                     std::vector<int64_t> karr, std::vector<int64_t> sarr, std::vector<int64_t> parr,
                     std::vector<int64_t> darr, unsigned seed) {
    char name[256];
    std::vector<double> X = values(numel(xs), dt, seed);
    Shape os;
    std::vector<double> idx;
    std::vector<double> want = max_ref(X, xs, g, &idx, &os);
    Dev x = make(xs, dt, X, l), o = make(os, dt, {0}), ix = make(os, it, {0});
    aclIntArray *k = ia(karr), *s = ia(sarr), *p = ia(parr), *d = ia(darr);
    RUN(S, aclnnMaxPool3dWithArgmax, x.t, k, s, p, d, g.ceil, o.t, ix.t);
    snprintf(name, sizeof name, "MaxPool3dWithArgmax %s %s %s values", what, dname(dt), lname(l));
    compare(name, read(o), want, 0);
    snprintf(name, sizeof name, "MaxPool3dWithArgmax %s %s %s indices", what, dname(dt), lname(l));
    compare(name, read(ix), idx, 0);
    std::vector<double> G = values(numel(os), dt, seed + 3);
    Dev gy = make(os, dt, G, l), gx = make(xs, dt, {0});
    RUN(S, aclnnMaxPool3dWithArgmaxBackward, gy.t, x.t, ix.t, k, s, p, d, g.ceil, gx.t);
    snprintf(name, sizeof name, "MaxPool3dWithArgmaxBackward %s %s %s", what, dname(dt), lname(l));
    compare(name, read(gx), as(scatter_ref(G, idx, xs), dt), tol_of(dt));
    for (aclIntArray *a : {k, s, p, d}) aclDestroyIntArray(a);
    for (Dev *e : {&x, &o, &ix, &gy, &gx}) release(*e);
}

static void max_pool3d() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Geo g2 = {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false};
    max_case("k2 (stride empty)", {2, 3, 4, 6, 5}, ACL_FLOAT, ACL_INT32, CONTIG, g2, {2}, {}, {0}, {1}, 40);
    Geo g3 = {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false};
    max_case("k3 s2 p1", {1, 2, 5, 6, 7}, ACL_FLOAT, ACL_INT32, TRANSPOSED, g3, {3}, {2}, {1}, {1, 1, 1}, 41);
    Geo gc = {{2, 3, 2}, {2, 2, 1}, {1, 1, 0}, {1, 1, 1}, true};
    max_case("k(2,3,2) s(2,2,1) p(1,1,0) ceil", {3, 5, 6, 4}, ACL_FLOAT, ACL_INT64, STRIDED, gc, {2, 3, 2}, {2, 2, 1},
             {1, 1, 0}, {1}, 42);
    Geo gd = {{2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {2, 1, 2}, false};
    max_case("k2 s1 dilation(2,1,2)", {1, 2, 5, 4, 6}, ACL_FLOAT, ACL_INT32, CONTIG, gd, {2}, {1}, {0}, {2, 1, 2}, 43);
    max_case("k2", {2, 2, 4, 4, 4}, ACL_FLOAT16, ACL_INT32, TRANSPOSED, g2, {2}, {2}, {0}, {1}, 44);
    max_case("k3 s2 p1", {2, 5, 5, 5}, ACL_BF16, ACL_INT32, CONTIG, g3, {3}, {2}, {1}, {1}, 45);
    /* NaN wins a window */
    {
        Dev x = make({1, 1, 2, 2, 2}, ACL_FLOAT, {1, 2, NAN, 4, 5, 6, 7, 8}), o = make({1, 1, 1, 1, 1}, ACL_FLOAT, {0});
        Dev ix = make({1, 1, 1, 1, 1}, ACL_INT32, {0});
        aclIntArray *k = ia({2}), *s = ia({}), *p = ia({0}), *d = ia({1});
        RUN(S, aclnnMaxPool3dWithArgmax, x.t, k, s, p, d, false, o.t, ix.t);
        g_checks++;
        if (!std::isnan(read(o)[0]) || read(ix)[0] != 2) {
            printf("FAIL MaxPool3dWithArgmax NaN window: %g at %g, expected nan at 2\n", read(o)[0], read(ix)[0]);
            g_fail++;
        }
        for (aclIntArray *a : {k, s, p, d}) aclDestroyIntArray(a);
        for (Dev *e : {&x, &o, &ix}) release(*e);
    }
    /* errors */
    Dev x = make({1, 2, 4, 4, 4}, ACL_FLOAT, {1}), o = make({1, 2, 2, 2, 2}, ACL_FLOAT, {0});
    Dev ix = make({1, 2, 2, 2, 2}, ACL_INT32, {0}), ixf = make({1, 2, 2, 2, 2}, ACL_FLOAT, {0});
    Dev x6 = make({1, 1, 2, 4, 4, 4}, ACL_FLOAT, {1}), gx = make({1, 2, 4, 4, 4}, ACL_FLOAT, {0});
    Dev ixs = make({1, 2, 2, 2, 1}, ACL_INT32, {0});
    aclIntArray *k = ia({2}), *s = ia({}), *p = ia({0}), *d = ia({1}), *d0 = ia({0}), *s2 = ia({2, 2});
    expect_code("MaxPool3dWithArgmax null self",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(nullptr, k, s, p, d, false, o.t, ix.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MaxPool3dWithArgmax null indices",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(x.t, k, s, p, d, false, o.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MaxPool3dWithArgmax null dilation",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(x.t, k, s, p, nullptr, false, o.t, ix.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MaxPool3dWithArgmax float indices",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(x.t, k, s, p, d, false, o.t, ixf.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool3dWithArgmax 6-D self",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(x6.t, k, s, p, d, false, o.t, ix.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool3dWithArgmax dilation 0",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(x.t, k, s, p, d0, false, o.t, ix.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool3dWithArgmax stride of 2 values",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(x.t, k, s2, p, d, false, o.t, ix.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool3dWithArgmax indices of another shape",
                aclnnMaxPool3dWithArgmaxGetWorkspaceSize(x.t, k, s, p, d, false, o.t, ixs.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxPool3dWithArgmaxBackward null gradOutput",
                aclnnMaxPool3dWithArgmaxBackwardGetWorkspaceSize(nullptr, x.t, ix.t, k, s, p, d, false, gx.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MaxPool3dWithArgmaxBackward gradInput of the output's shape",
                aclnnMaxPool3dWithArgmaxBackwardGetWorkspaceSize(o.t, x.t, ix.t, k, s, p, d, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* an index outside the plane fails the task, at synchronisation */
    {
        Dev bad = make({1, 2, 2, 2, 2}, ACL_INT32, {64});
        uint64_t w = 0;
        aclOpExecutor *e = nullptr;
        NN(aclnnMaxPool3dWithArgmaxBackwardGetWorkspaceSize(o.t, x.t, bad.t, k, s, p, d, false, gx.t, &w, &e));
        NN(aclnnMaxPool3dWithArgmaxBackward(nullptr, 0, e, S));
        aclError r = aclrtSynchronizeStream(S);
        g_checks++;
        if (r == ACL_SUCCESS) {
            printf("FAIL MaxPool3dWithArgmaxBackward index 64 of a 64-element plane succeeded\n");
            g_fail++;
        } else {
            printf("error MaxPool3dWithArgmaxBackward index 64: %s\n", test_msg());
        }
        release(bad);
    }
    for (aclIntArray *a : {k, s, p, d, d0, s2}) aclDestroyIntArray(a);
    for (Dev *e : {&x, &o, &ix, &ixf, &x6, &gx, &ixs}) release(*e);
    printf("ok max pool3d with argmax\n");
}

static void adaptive_max_pool3d() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct Case {
        Shape xs;
        int64_t o[3];
        aclDataType dt, it;
        Layout l;
    } cases[] = {
        {{2, 3, 6, 7, 5}, {3, 4, 2}, ACL_FLOAT, ACL_INT32, CONTIG},
        {{3, 5, 6, 4}, {2, 4, 3}, ACL_FLOAT, ACL_INT64, TRANSPOSED},
        {{1, 2, 3, 4, 5}, {4, 5, 6}, ACL_FLOAT, ACL_INT32, STRIDED},
        {{2, 2, 5, 5, 5}, {2, 3, 1}, ACL_FLOAT16, ACL_INT32, CONTIG},
        {{2, 4, 4, 6}, {3, 2, 4}, ACL_BF16, ACL_INT32, STRIDED},
    };
    unsigned seed = 60;
    for (auto &c : cases) {
        char name[256];
        std::vector<double> X = values(numel(c.xs), c.dt, seed++);
        Shape os = with_spatial(c.xs, c.o);
        std::vector<double> idx;
        std::vector<double> want = adaptive_ref(X, c.xs, c.o, &idx);
        Dev x = make(c.xs, c.dt, X, c.l), o = make(os, c.dt, {0}), ix = make(os, c.it, {0});
        aclIntArray *sz = ia({c.o[0], c.o[1], c.o[2]});
        RUN(S, aclnnAdaptiveMaxPool3d, x.t, sz, o.t, ix.t);
        snprintf(name, sizeof name, "AdaptiveMaxPool3d to %lldx%lldx%lld %s %s values", (long long)c.o[0],
                 (long long)c.o[1], (long long)c.o[2], dname(c.dt), lname(c.l));
        compare(name, read(o), want, 0);
        snprintf(name, sizeof name, "AdaptiveMaxPool3d %s %s indices", dname(c.dt), lname(c.l));
        compare(name, read(ix), idx, 0);
        std::vector<double> G = values(numel(os), c.dt, seed++);
        Dev gy = make(os, c.dt, G, c.l), gx = make(c.xs, c.dt, {0});
        RUN(S, aclnnAdaptiveMaxPool3dBackward, gy.t, x.t, ix.t, gx.t);
        snprintf(name, sizeof name, "AdaptiveMaxPool3dBackward %s %s", dname(c.dt), lname(c.l));
        compare(name, read(gx), as(scatter_ref(G, idx, c.xs), c.dt), tol_of(c.dt));
        aclDestroyIntArray(sz);
        for (Dev *d : {&x, &o, &ix, &gy, &gx}) release(*d);
    }
    /* errors */
    Dev x = make({1, 2, 4, 4, 4}, ACL_FLOAT, {1}), o = make({1, 2, 2, 2, 2}, ACL_FLOAT, {0});
    Dev ix = make({1, 2, 2, 2, 2}, ACL_INT32, {0}), ix8 = make({1, 2, 2, 2, 2}, ACL_INT8, {0});
    Dev oh = make({1, 2, 2, 2, 2}, ACL_FLOAT16, {0}), gx = make({1, 2, 4, 4, 4}, ACL_FLOAT, {0});
    aclIntArray *sz = ia({2, 2, 2}), *szm = ia({2, -1, 2});
    expect_code("AdaptiveMaxPool3d null outputOut", aclnnAdaptiveMaxPool3dGetWorkspaceSize(x.t, sz, nullptr, ix.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AdaptiveMaxPool3d int8 indices", aclnnAdaptiveMaxPool3dGetWorkspaceSize(x.t, sz, o.t, ix8.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveMaxPool3d float16 out of a float self",
                aclnnAdaptiveMaxPool3dGetWorkspaceSize(x.t, sz, oh.t, ix.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveMaxPool3d outputSize -1", aclnnAdaptiveMaxPool3dGetWorkspaceSize(x.t, szm, o.t, ix.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveMaxPool3dBackward null indices",
                aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize(o.t, x.t, nullptr, gx.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AdaptiveMaxPool3dBackward int8 indices",
                aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize(o.t, x.t, ix8.t, gx.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaptiveMaxPool3dBackward float16 gradInput",
                aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize(o.t, x.t, ix.t, oh.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {sz, szm}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &ix, &ix8, &oh, &gx}) release(*d);
    printf("ok adaptive max pool3d\n");
}

enum PadKind { REFLECT, REPLICATE, CIRCULAR };

/* Source index of output position o of a dimension of size n padded by `before`. */
static int64_t pad_src(int64_t o, int64_t before, int64_t n, PadKind k) {
    int64_t i = o - before;
    if (k == REPLICATE) return std::min(std::max<int64_t>(i, 0), n - 1);
    if (k == CIRCULAR) return ((i % n) + n) % n;
    if (n == 1) return 0;
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
}

/* Pad the last `dims` dimensions of dense x (pads: left, right, top, bottom, front, back);
 * with `grad`, the backward: gy (the padded shape) summed into an xs-shaped result. */
static std::vector<double> pad_ref(const std::vector<double> &x, const Shape &xs, const std::vector<int64_t> &pads,
                                   PadKind k, Shape *os, const std::vector<double> *grad = nullptr) {
    int dims = static_cast<int>(pads.size() / 2), nd = static_cast<int>(xs.size());
    *os = xs;
    for (int j = 0; j < dims; j++) (*os)[nd - 1 - j] += pads[2 * j] + pads[2 * j + 1];
    std::vector<double> r(static_cast<size_t>(grad ? numel(xs) : numel(*os)), 0.0);
    for (int64_t o = 0; o < numel(*os); o++) {
        int64_t rem = o, src = 0, mul = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t idx = rem % (*os)[d];
            rem /= (*os)[d];
            int j = nd - 1 - d;
            if (j < dims) idx = pad_src(idx, pads[2 * j], xs[d], k);
            src += idx * mul;
            mul *= xs[d];
        }
        if (grad) r[static_cast<size_t>(src)] += (*grad)[static_cast<size_t>(o)];
        else r[static_cast<size_t>(o)] = x[static_cast<size_t>(src)];
    }
    return r;
}

typedef aclnnStatus (*PadGet)(const aclTensor *, const aclIntArray *, aclTensor *, uint64_t *, aclOpExecutor **);
typedef aclnnStatus (*PadBwdGet)(const aclTensor *, const aclTensor *, const aclIntArray *, aclTensor *, uint64_t *,
                                  aclOpExecutor **);
typedef aclnnStatus (*Run)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/* The second phase after a first phase `got` that filled *ws and *ex (passed by pointer:
 * the order in which a call's arguments are evaluated is unspecified). */
static void run2(aclnnStatus got, const uint64_t *wsp, aclOpExecutor *const *exp, Run run) {
    uint64_t ws = *wsp;
    aclOpExecutor *ex = *exp;
    if (got != 0) {
        printf("FAIL GetWorkspaceSize returned %d: %s\n", static_cast<int>(got), test_msg());
        g_fail++;
        return;
    }
    void *w = nullptr;
    if (ws > 0) CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
    NN(run(w, ws, ex, S));
    CHECK(aclrtSynchronizeStream(S));
    if (w) aclrtFree(w);
}

/* One padding case, forward (any dtype) and, when `bwd`, backward. */
static void pad_case(const char *op, PadGet get, Run run, PadBwdGet bget, Run brun, PadKind k, const Shape &xs,
                     aclDataType dt, Layout l, std::vector<int64_t> pads, unsigned seed) {
    char name[256];
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    std::vector<double> X = values(numel(xs), dt, seed);
    Shape os;
    std::vector<double> want = pad_ref(X, xs, pads, k, &os);
    Dev x = make(xs, dt, X, l), o = make(os, dt, {0});
    aclIntArray *p = ia(pads);
    run2(get(x.t, p, o.t, &ws, &ex), &ws, &ex, run);
    snprintf(name, sizeof name, "%s %s %s", op, dname(dt), lname(l));
    compare(name, read(o), want, 0);
    if (bget) {
        std::vector<double> G = values(numel(os), dt, seed + 1);
        Dev gy = make(os, dt, G, l), gx = make(xs, dt, {0});
        Shape unused;
        run2(bget(gy.t, x.t, p, gx.t, &ws, &ex), &ws, &ex, brun);
        snprintf(name, sizeof name, "%sBackward %s %s", op, dname(dt), lname(l));
        compare(name, read(gx), as(pad_ref(X, xs, pads, k, &unused, &G), dt), tol_of(dt));
        release(gy);
        release(gx);
    }
    aclDestroyIntArray(p);
    release(x);
    release(o);
}

static void pads() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    pad_case("ReflectionPad3d", aclnnReflectionPad3dGetWorkspaceSize, aclnnReflectionPad3d,
             aclnnReflectionPad3dBackwardGetWorkspaceSize, aclnnReflectionPad3dBackward, REFLECT, {2, 3, 4, 5, 6}, ACL_FLOAT,
             CONTIG, {1, 2, 0, 3, 2, 1}, 80);
    pad_case("ReflectionPad3d", aclnnReflectionPad3dGetWorkspaceSize, aclnnReflectionPad3d,
             aclnnReflectionPad3dBackwardGetWorkspaceSize, aclnnReflectionPad3dBackward, REFLECT, {3, 3, 4, 5}, ACL_FLOAT16,
             TRANSPOSED, {4, 0, 1, 1, 2, 2}, 81);
    pad_case("ReflectionPad3d", aclnnReflectionPad3dGetWorkspaceSize, aclnnReflectionPad3d, nullptr, nullptr, REFLECT,
             {1, 2, 3, 3, 3}, ACL_INT64, STRIDED, {2, 2, 2, 2, 2, 2}, 82);
    pad_case("ReflectionPad3d", aclnnReflectionPad3dGetWorkspaceSize, aclnnReflectionPad3d, nullptr, nullptr, REFLECT,
             {2, 2, 2, 2}, ACL_BOOL, CONTIG, {1, 1, 1, 1, 1, 1}, 83);
    pad_case("ReplicationPad3d", aclnnReplicationPad3dGetWorkspaceSize, aclnnReplicationPad3d,
             aclnnReplicationPad3dBackwardGetWorkspaceSize, aclnnReplicationPad3dBackward, REPLICATE, {2, 2, 3, 4, 5},
             ACL_FLOAT, STRIDED, {3, 1, 0, 2, 5, 1}, 84);
    pad_case("ReplicationPad3d", aclnnReplicationPad3dGetWorkspaceSize, aclnnReplicationPad3d,
             aclnnReplicationPad3dBackwardGetWorkspaceSize, aclnnReplicationPad3dBackward, REPLICATE, {2, 1, 3, 2},
             ACL_DOUBLE, TRANSPOSED, {1, 1, 2, 0, 0, 3}, 85);
    pad_case("ReplicationPad3d", aclnnReplicationPad3dGetWorkspaceSize, aclnnReplicationPad3d, nullptr, nullptr, REPLICATE,
             {1, 2, 2, 3, 3}, ACL_INT8, CONTIG, {2, 2, 2, 2, 2, 2}, 86);
    pad_case("CircularPad2d", aclnnCircularPad2dGetWorkspaceSize, aclnnCircularPad2d,
             aclnnCircularPad2dBackwardGetWorkspaceSize, aclnnCircularPad2dBackward, CIRCULAR, {2, 3, 4, 5}, ACL_FLOAT,
             TRANSPOSED, {2, 4, 3, 1}, 87);
    pad_case("CircularPad2d", aclnnCircularPad2dGetWorkspaceSize, aclnnCircularPad2d,
             aclnnCircularPad2dBackwardGetWorkspaceSize, aclnnCircularPad2dBackward, CIRCULAR, {3, 4, 4}, ACL_BF16, STRIDED,
             {1, 1, 0, 3}, 88);
    pad_case("CircularPad2d", aclnnCircularPad2dGetWorkspaceSize, aclnnCircularPad2d, nullptr, nullptr, CIRCULAR,
             {2, 3, 3}, ACL_INT32, CONTIG, {2, 2, 2, 2}, 89);
    pad_case("CircularPad3d", aclnnCircularPad3dGetWorkspaceSize, aclnnCircularPad3d,
             aclnnCircularPad3dBackwardGetWorkspaceSize, aclnnCircularPad3dBackward, CIRCULAR, {1, 2, 3, 4, 5}, ACL_FLOAT,
             CONTIG, {1, 4, 2, 0, 2, 2}, 90);
    pad_case("CircularPad3d", aclnnCircularPad3dGetWorkspaceSize, aclnnCircularPad3d,
             aclnnCircularPad3dBackwardGetWorkspaceSize, aclnnCircularPad3dBackward, CIRCULAR, {2, 3, 3, 3}, ACL_FLOAT16,
             TRANSPOSED, {2, 2, 1, 1, 0, 2}, 91);
    /* the reference's CircularPad2dBackward example: ones [1, 1, 7] into [1, 1, 5] with (1, 1, 0, 0) */
    {
        Dev g = make({1, 1, 7}, ACL_FLOAT, {1}), x = make({1, 1, 5}, ACL_FLOAT, {1}), gx = make({1, 1, 5}, ACL_FLOAT, {0});
        aclIntArray *p = ia({1, 1, 0, 0});
        run2(aclnnCircularPad2dBackwardGetWorkspaceSize(g.t, x.t, p, gx.t, &ws, &ex), &ws, &ex, aclnnCircularPad2dBackward);
        compare("CircularPad2dBackward reference example", read(gx), {2, 1, 1, 1, 2}, 0);
        aclDestroyIntArray(p);
        for (Dev *d : {&g, &x, &gx}) release(*d);
    }
    /* errors */
    Dev x = make({1, 2, 3, 4, 5}, ACL_FLOAT, {1}), o = make({1, 2, 5, 6, 7}, ACL_FLOAT, {0});
    Dev x3 = make({3, 4, 5}, ACL_FLOAT, {1}), xc = make({1, 2, 3, 4, 5}, ACL_INT16, {1});
    Dev xb = make({1, 2, 3, 4, 5}, ACL_BF16, {1}), ob = make({1, 2, 5, 6, 7}, ACL_BF16, {0});
    Dev oh = make({1, 2, 5, 6, 7}, ACL_FLOAT16, {0}), gx = make({1, 2, 3, 4, 5}, ACL_FLOAT, {0});
    Dev oi = make({1, 2, 5, 6, 7}, ACL_INT32, {0}), xi = make({1, 2, 3, 4, 5}, ACL_INT32, {1});
    aclIntArray *p1 = ia({1, 1, 1, 1, 1, 1}), *p4 = ia({1, 1, 1, 1}), *pbig = ia({5, 1, 1, 1, 1, 1}),
                *pneg = ia({1, 1, -1, 3, 1, 1});
    expect_code("ReflectionPad3d null self", aclnnReflectionPad3dGetWorkspaceSize(nullptr, p1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ReflectionPad3d null padding", aclnnReflectionPad3dGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ReflectionPad3d padding 5 of a dimension of 5",
                aclnnReflectionPad3dGetWorkspaceSize(x.t, pbig, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReflectionPad3d padding of 4 values", aclnnReflectionPad3dGetWorkspaceSize(x.t, p4, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ReflectionPad3d 3-D self", aclnnReflectionPad3dGetWorkspaceSize(x3.t, p1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ReflectionPad3d float16 out", aclnnReflectionPad3dGetWorkspaceSize(x.t, p1, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ReflectionPad3dBackward int32 self",
                aclnnReflectionPad3dBackwardGetWorkspaceSize(oi.t, xi.t, p1, xi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReflectionPad3dBackward gradInput of the output's shape",
                aclnnReflectionPad3dBackwardGetWorkspaceSize(o.t, x.t, p1, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReplicationPad3d bfloat16 self", aclnnReplicationPad3dGetWorkspaceSize(xb.t, p1, ob.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ReplicationPad3d negative padding", aclnnReplicationPad3dGetWorkspaceSize(x.t, pneg, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ReplicationPad3dBackward null gradInput",
                aclnnReplicationPad3dBackwardGetWorkspaceSize(o.t, x.t, p1, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CircularPad3d int16 self", aclnnCircularPad3dGetWorkspaceSize(xc.t, p1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CircularPad2d 5-D self", aclnnCircularPad2dGetWorkspaceSize(x.t, p4, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CircularPad2dBackward padding of 6 values",
                aclnnCircularPad2dBackwardGetWorkspaceSize(o.t, x3.t, p1, x3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("CircularPad3dBackward int32 self",
                aclnnCircularPad3dBackwardGetWorkspaceSize(oi.t, xi.t, p1, xi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("CircularPad3dBackward null gradOutput",
                aclnnCircularPad3dBackwardGetWorkspaceSize(nullptr, x.t, p1, gx.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    for (aclIntArray *a : {p1, p4, pbig, pneg}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &x3, &xc, &xb, &ob, &oh, &gx, &oi, &xi}) release(*d);
    printf("ok pads\n");
}

/* ---- grid sampling: PyTorch's grid_sampler_2d written from its definition ---- */

static double gs_unnorm(double c, int64_t n, bool align) {
    return align ? (c + 1) / 2 * (n - 1) : ((c + 1) * n - 1) / 2;
}

static double gs_reflect(double c, double lo2, double hi2) {
    if (lo2 == hi2) return 0;
    double lo = lo2 / 2, span = (hi2 - lo2) / 2;
    c = std::fabs(c - lo);
    double extra = std::fmod(c, span);
    int64_t flips = static_cast<int64_t>(std::floor(c / span));
    return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

static double gs_pad(double c, int64_t n, int pad, bool align) {
    if (pad == 2) c = align ? gs_reflect(c, 0, 2.0 * (n - 1)) : gs_reflect(c, -1, 2.0 * n - 1);
    if (pad >= 1) c = std::min(static_cast<double>(n - 1), std::max(c, 0.0));
    return c;
}

static double gs_cubic(double x) {
    const double A = -0.75;
    x = std::fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* x [N, C, H, W], g [N, Ho, Wo, 2] dense; mode 0 bilinear, 1 nearest, 2 bicubic. */
static std::vector<double> gs_ref(const std::vector<double> &x, const Shape &xs, const std::vector<double> &g,
                                  const Shape &gsh, int mode, int pad, bool align) {
    int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], Ho = gsh[1], Wo = gsh[2];
    std::vector<double> y(static_cast<size_t>(N * C * Ho * Wo));
    auto px = [&](int64_t n, int64_t c, int64_t xi, int64_t yi) {
        if (xi < 0 || yi < 0 || xi >= W || yi >= H) return 0.0;
        return x[static_cast<size_t>(((n * C + c) * H + yi) * W + xi)];
    };
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < Ho; h++)
            for (int64_t w = 0; w < Wo; w++) {
                double gx = g[static_cast<size_t>(((n * Ho + h) * Wo + w) * 2)];
                double gy = g[static_cast<size_t>(((n * Ho + h) * Wo + w) * 2 + 1)];
                for (int64_t c = 0; c < C; c++) {
                    double v = 0;
                    if (mode == 2) {
                        double ix = gs_unnorm(gx, W, align), iy = gs_unnorm(gy, H, align);
                        double fx = std::floor(ix), fy = std::floor(iy);
                        for (int j = -1; j <= 2; j++)
                            for (int i = -1; i <= 2; i++) {
                                double tx = gs_pad(fx + i, W, pad, align), ty = gs_pad(fy + j, H, pad, align);
                                v += px(n, c, static_cast<int64_t>(tx), static_cast<int64_t>(ty)) * gs_cubic(ix - (fx + i)) *
                                     gs_cubic(iy - (fy + j));
                            }
                    } else {
                        double ix = gs_pad(gs_unnorm(gx, W, align), W, pad, align);
                        double iy = gs_pad(gs_unnorm(gy, H, align), H, pad, align);
                        if (mode == 1) {
                            v = px(n, c, static_cast<int64_t>(std::nearbyint(ix)), static_cast<int64_t>(std::nearbyint(iy)));
                        } else {
                            double fx = std::floor(ix), fy = std::floor(iy), ax = ix - fx, ay = iy - fy;
                            int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
                            v = px(n, c, x0, y0) * (1 - ax) * (1 - ay) + px(n, c, x0 + 1, y0) * ax * (1 - ay) +
                                px(n, c, x0, y0 + 1) * (1 - ax) * ay + px(n, c, x0 + 1, y0 + 1) * ax * ay;
                        }
                    }
                    y[static_cast<size_t>(((n * C + c) * Ho + h) * Wo + w)] = v;
                }
            }
    return y;
}

static double dot(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); i++) s += a[i] * b[i];
    return s;
}

static void grid_sampler() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Shape xs = {2, 3, 5, 6}, gsh = {2, 4, 3, 2}, os = {2, 3, 4, 3};
    std::vector<double> X = values(numel(xs), ACL_FLOAT, 100), G(static_cast<size_t>(numel(gsh)));
    uint32_t r = 12345;
    for (auto &v : G) {
        r = r * 1103515245u + 12345u;
        v = ((r >> 8) % 24001) / 10000.0 - 1.2; /* [-1.2, 1.2]: some points outside */
    }
    const char *mname[] = {"bilinear", "nearest", "bicubic"}, *pname[] = {"zeros", "border", "reflection"};
    for (int mode = 0; mode < 3; mode++)
        for (int pad = 0; pad < 3; pad++)
            for (int align = 0; align < 2; align++) {
                aclDataType dt = (mode + pad + align) % 3 == 2 ? ACL_FLOAT16 : ACL_FLOAT;
                Layout l = (pad + align) % 2 ? TRANSPOSED : CONTIG;
                std::vector<double> Xd = as(X, dt), Gd = as(G, dt);
                Dev x = make(xs, dt, Xd, l), g = make(gsh, dt, Gd, l), o = make(os, dt, {0});
                RUN(S, aclnnGridSampler2D, x.t, g.t, mode, pad, align == 1, o.t);
                char name[160];
                snprintf(name, sizeof name, "GridSampler2D %s %s align %d %s %s", mname[mode], pname[pad], align, dname(dt),
                         lname(l));
                compare(name, read(o), as(gs_ref(Xd, xs, Gd, gsh, mode, pad, align == 1), dt), dt == ACL_FLOAT ? 1e-5 : 2e-3);
                for (Dev *d : {&x, &g, &o}) release(*d);
            }
    /* backward in double: the input gradient (the forward is linear in the input) and the
     * grid gradient against central differences of the reference */
    for (int mode = 0; mode < 2; mode++)
        for (int pad = 0; pad < 3; pad++) {
            bool align = pad == 1;
            std::vector<double> GO = values(numel(os), ACL_DOUBLE, 110 + pad);
            Dev go = make(os, ACL_DOUBLE, GO, STRIDED), x = make(xs, ACL_DOUBLE, X), g = make(gsh, ACL_DOUBLE, G);
            Dev gi = make(xs, ACL_DOUBLE, {0}), gg = make(gsh, ACL_DOUBLE, {0});
            bool m[2] = {true, true};
            aclBoolArray *mask = aclCreateBoolArray(m, 2);
            RUN(S, aclnnGridSampler2DBackward, go.t, x.t, g.t, mode, pad, align, mask, gi.t, gg.t);
            double base = dot(gs_ref(X, xs, G, gsh, mode, pad, align), GO);
            std::vector<double> wi(X.size()), wg(G.size());
            for (size_t i = 0; i < X.size(); i++) {
                std::vector<double> X2(X);
                X2[i] += 1;
                wi[i] = dot(gs_ref(X2, xs, G, gsh, mode, pad, align), GO) - base;
            }
            for (size_t i = 0; i < G.size(); i++) {
                std::vector<double> Gp(G), Gm(G);
                Gp[i] += 1e-7;
                Gm[i] -= 1e-7;
                wg[i] = (dot(gs_ref(X, xs, Gp, gsh, mode, pad, align), GO) - dot(gs_ref(X, xs, Gm, gsh, mode, pad, align), GO)) /
                        2e-7;
            }
            char name[160];
            snprintf(name, sizeof name, "GridSampler2DBackward %s %s inputGrad", mname[mode], pname[pad]);
            compare(name, read(gi), wi, 1e-9);
            snprintf(name, sizeof name, "GridSampler2DBackward %s %s gridGrad (finite differences)", mname[mode], pname[pad]);
            compare(name, read(gg), wg, 1e-5);
            aclDestroyBoolArray(mask);
            for (Dev *d : {&go, &x, &g, &gi, &gg}) release(*d);
        }
    /* only the grid gradient asked for: inputGrad may be NULL */
    {
        Dev go = make(os, ACL_FLOAT, {1}), x = make(xs, ACL_FLOAT, X), g = make(gsh, ACL_FLOAT, G), gg = make(gsh, ACL_FLOAT, {0});
        bool m[2] = {false, true};
        aclBoolArray *mask = aclCreateBoolArray(m, 2);
        RUN(S, aclnnGridSampler2DBackward, go.t, x.t, g.t, 0, 0, false, mask, nullptr, gg.t);
        g_checks++;
        aclDestroyBoolArray(mask);
        for (Dev *d : {&go, &x, &g, &gg}) release(*d);
    }
    /* errors */
    Dev x = make(xs, ACL_FLOAT, X), g = make(gsh, ACL_FLOAT, G), o = make(os, ACL_FLOAT, {0});
    Dev gh = make(gsh, ACL_FLOAT16, G), g3 = make({2, 4, 3, 3}, ACL_FLOAT, {0}), xi = make(xs, ACL_INT32, {1});
    Dev x3 = make({3, 5, 6}, ACL_FLOAT, {1}), gi = make(xs, ACL_FLOAT, {0}), gg = make(gsh, ACL_FLOAT, {0});
    bool m[2] = {true, true}, m3[3] = {true, true, true};
    aclBoolArray *mask = aclCreateBoolArray(m, 2), *mask3 = aclCreateBoolArray(m3, 3);
    expect_code("GridSampler2D null grid", aclnnGridSampler2DGetWorkspaceSize(x.t, nullptr, 0, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GridSampler2D int32 input", aclnnGridSampler2DGetWorkspaceSize(xi.t, g.t, 0, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2D float16 grid of a float input",
                aclnnGridSampler2DGetWorkspaceSize(x.t, gh.t, 0, 0, false, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2D grid [2, 4, 3, 3]", aclnnGridSampler2DGetWorkspaceSize(x.t, g3.t, 0, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2D 3-D input", aclnnGridSampler2DGetWorkspaceSize(x3.t, g.t, 0, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2D interpolationMode 3", aclnnGridSampler2DGetWorkspaceSize(x.t, g.t, 3, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2D paddingMode -1", aclnnGridSampler2DGetWorkspaceSize(x.t, g.t, 0, -1, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2DBackward null outputMask",
                aclnnGridSampler2DBackwardGetWorkspaceSize(o.t, x.t, g.t, 0, 0, false, nullptr, gi.t, gg.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GridSampler2DBackward outputMask of 3 values",
                aclnnGridSampler2DBackwardGetWorkspaceSize(o.t, x.t, g.t, 0, 0, false, mask3, gi.t, gg.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2DBackward bicubic",
                aclnnGridSampler2DBackwardGetWorkspaceSize(o.t, x.t, g.t, 2, 0, false, mask, gi.t, gg.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler2DBackward null inputGrad asked for",
                aclnnGridSampler2DBackwardGetWorkspaceSize(o.t, x.t, g.t, 0, 0, false, mask, nullptr, gg.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GridSampler2DBackward gridGrad of the input's shape",
                aclnnGridSampler2DBackwardGetWorkspaceSize(o.t, x.t, g.t, 0, 0, false, mask, gi.t, gi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyBoolArray(mask);
    aclDestroyBoolArray(mask3);
    for (Dev *d : {&x, &g, &o, &gh, &g3, &xi, &x3, &gi, &gg}) release(*d);
    printf("ok grid sampler\n");
}

/* grid_sampler_3d of x [N, C, D, H, W] at g [N, Do, Ho, Wo, 3]: mode 0 trilinear, 1 nearest. */
static std::vector<double> gs3_ref(const std::vector<double> &x, const Shape &xs, const std::vector<double> &g,
                                   const Shape &gsh, int mode, int pad, bool align) {
    int64_t N = xs[0], C = xs[1], sz[3] = {xs[4], xs[3], xs[2]}, P = gsh[1] * gsh[2] * gsh[3];
    std::vector<double> y(static_cast<size_t>(N * C * P), 0.0);
    for (int64_t n = 0; n < N; n++)
        for (int64_t p = 0; p < P; p++) {
            double ix[3];
            for (int d = 0; d < 3; d++) ix[d] = gs_pad(gs_unnorm(g[static_cast<size_t>((n * P + p) * 3 + d)], sz[d], align), sz[d], pad, align);
            for (int corner = 0; corner < (mode == 0 ? 8 : 1); corner++) {
                int64_t q[3];
                double w = 1;
                for (int d = 0; d < 3; d++) {
                    if (mode == 1) {
                        q[d] = static_cast<int64_t>(std::nearbyint(ix[d]));
                    } else {
                        double f = std::floor(ix[d]);
                        int b = (corner >> d) & 1;
                        q[d] = static_cast<int64_t>(f) + b;
                        w *= b ? ix[d] - f : 1 - (ix[d] - f);
                    }
                }
                bool in = true;
                for (int d = 0; d < 3; d++) in = in && q[d] >= 0 && q[d] < sz[d];
                if (!in) continue;
                for (int64_t c = 0; c < C; c++)
                    y[static_cast<size_t>((n * C + c) * P + p)] +=
                        w * x[static_cast<size_t>((((n * C + c) * sz[2] + q[2]) * sz[1] + q[1]) * sz[0] + q[0])];
            }
        }
    return y;
}

static void grid_sampler_3d() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Shape xs = {2, 2, 3, 4, 5}, gsh = {2, 2, 3, 2, 3}, os = {2, 2, 2, 3, 2};
    std::vector<double> X = values(numel(xs), ACL_FLOAT, 130), G(static_cast<size_t>(numel(gsh)));
    uint32_t r = 777;
    for (auto &v : G) {
        r = r * 1103515245u + 12345u;
        v = ((r >> 8) % 24001) / 10000.0 - 1.2;
    }
    const char *mname[] = {"trilinear", "nearest"}, *pname[] = {"zeros", "border", "reflection"};
    for (int mode = 0; mode < 2; mode++)
        for (int pad = 0; pad < 3; pad++)
            for (int align = 0; align < 2; align++) {
                aclDataType dt = (mode + pad + align) % 3 == 2 ? ACL_BF16 : ACL_FLOAT;
                Layout l = (pad + align) % 2 ? STRIDED : CONTIG;
                std::vector<double> Xd = as(X, dt), Gd = as(G, dt);
                Dev x = make(xs, dt, Xd, l), g = make(gsh, dt, Gd, l), o = make(os, dt, {0});
                RUN(S, aclnnGridSampler3D, x.t, g.t, mode, pad, align == 1, o.t);
                char name[160];
                snprintf(name, sizeof name, "GridSampler3D %s %s align %d %s %s", mname[mode], pname[pad], align, dname(dt),
                         lname(l));
                compare(name, read(o), as(gs3_ref(Xd, xs, Gd, gsh, mode, pad, align == 1), dt), dt == ACL_FLOAT ? 1e-5 : 1e-2);
                for (Dev *d : {&x, &g, &o}) release(*d);
            }
    for (int mode = 0; mode < 2; mode++)
        for (int pad = 0; pad < 3; pad++) {
            bool align = pad != 1;
            std::vector<double> GO = values(numel(os), ACL_DOUBLE, 140 + pad);
            Dev go = make(os, ACL_DOUBLE, GO), x = make(xs, ACL_DOUBLE, X, TRANSPOSED), g = make(gsh, ACL_DOUBLE, G);
            Dev gi = make(xs, ACL_DOUBLE, {0}), gg = make(gsh, ACL_DOUBLE, {0});
            bool m[2] = {true, true};
            aclBoolArray *mask = aclCreateBoolArray(m, 2);
            RUN(S, aclnnGridSampler3DBackward, go.t, x.t, g.t, mode, pad, align, mask, gi.t, gg.t);
            double base = dot(gs3_ref(X, xs, G, gsh, mode, pad, align), GO);
            std::vector<double> wi(X.size()), wg(G.size());
            for (size_t i = 0; i < X.size(); i++) {
                std::vector<double> X2(X);
                X2[i] += 1;
                wi[i] = dot(gs3_ref(X2, xs, G, gsh, mode, pad, align), GO) - base;
            }
            for (size_t i = 0; i < G.size(); i++) {
                std::vector<double> Gp(G), Gm(G);
                Gp[i] += 1e-7;
                Gm[i] -= 1e-7;
                wg[i] = (dot(gs3_ref(X, xs, Gp, gsh, mode, pad, align), GO) - dot(gs3_ref(X, xs, Gm, gsh, mode, pad, align), GO)) /
                        2e-7;
            }
            char name[160];
            snprintf(name, sizeof name, "GridSampler3DBackward %s %s inputGrad", mname[mode], pname[pad]);
            compare(name, read(gi), wi, 1e-9);
            snprintf(name, sizeof name, "GridSampler3DBackward %s %s gridGrad (finite differences)", mname[mode], pname[pad]);
            compare(name, read(gg), wg, 1e-5);
            aclDestroyBoolArray(mask);
            for (Dev *d : {&go, &x, &g, &gi, &gg}) release(*d);
        }
    Dev x = make(xs, ACL_FLOAT, X), g = make(gsh, ACL_FLOAT, G), o = make(os, ACL_FLOAT, {0});
    Dev g2 = make({2, 2, 3, 2, 2}, ACL_FLOAT, {0}), x4 = make({2, 2, 4, 5}, ACL_FLOAT, {1});
    bool m[2] = {true, true};
    aclBoolArray *mask = aclCreateBoolArray(m, 2);
    expect_code("GridSampler3D null input", aclnnGridSampler3DGetWorkspaceSize(nullptr, g.t, 0, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GridSampler3D grid of 2 coordinates", aclnnGridSampler3DGetWorkspaceSize(x.t, g2.t, 0, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler3D 4-D input", aclnnGridSampler3DGetWorkspaceSize(x4.t, g.t, 0, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler3D bicubic", aclnnGridSampler3DGetWorkspaceSize(x.t, g.t, 2, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GridSampler3DBackward null gridGrad asked for",
                aclnnGridSampler3DBackwardGetWorkspaceSize(o.t, x.t, g.t, 0, 0, false, mask, x.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyBoolArray(mask);
    for (Dev *d : {&x, &g, &o, &g2, &x4}) release(*d);
    printf("ok grid sampler 3d\n");
}

/* PyTorch's base coordinates of affine_grid. */
static double ag_base(int64_t i, int64_t n, bool align) {
    if (n <= 1) return 0;
    double v = -1 + 2.0 * i / (n - 1);
    return align ? v : v * (n - 1) / n;
}

static void affine_grid() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* 2-D: theta [2, 2, 3], size (2, 3, 4, 5) */
    for (int align = 0; align < 2; align++) {
        aclDataType dt = align ? ACL_FLOAT16 : ACL_FLOAT;
        std::vector<double> T = values(12, dt, 120 + align);
        Dev t = make({2, 2, 3}, dt, T, align ? TRANSPOSED : CONTIG), o = make({2, 4, 5, 2}, dt, {0});
        aclIntArray *sz = ia({2, 3, 4, 5});
        RUN(S, aclnnAffineGrid, t.t, sz, align == 1, o.t);
        std::vector<double> want;
        for (int n = 0; n < 2; n++)
            for (int h = 0; h < 4; h++)
                for (int w = 0; w < 5; w++) {
                    double b[3] = {ag_base(w, 5, align), ag_base(h, 4, align), 1};
                    for (int i = 0; i < 2; i++)
                        want.push_back(T[n * 6 + i * 3] * b[0] + T[n * 6 + i * 3 + 1] * b[1] + T[n * 6 + i * 3 + 2] * b[2]);
                }
        compare(align ? "AffineGrid 2-D align float16 transposed" : "AffineGrid 2-D float", read(o), as(want, dt),
                align ? 2e-3 : 1e-6);
        aclDestroyIntArray(sz);
        release(t);
        release(o);
    }
    /* 3-D: theta [1, 3, 4], size (1, 2, 2, 3, 1) (a single W step is 0) */
    {
        std::vector<double> T = values(12, ACL_FLOAT, 125);
        Dev t = make({1, 3, 4}, ACL_FLOAT, T), o = make({1, 2, 3, 1, 3}, ACL_FLOAT, {0});
        aclIntArray *sz = ia({1, 2, 2, 3, 1});
        RUN(S, aclnnAffineGrid, t.t, sz, false, o.t);
        std::vector<double> want;
        for (int d = 0; d < 2; d++)
            for (int h = 0; h < 3; h++) {
                double b[4] = {0, ag_base(h, 3, false), ag_base(d, 2, false), 1};
                for (int i = 0; i < 3; i++) want.push_back(dot({T[i * 4], T[i * 4 + 1], T[i * 4 + 2], T[i * 4 + 3]}, {b[0], b[1], b[2], b[3]}));
            }
        compare("AffineGrid 3-D float, W of 1", read(o), want, 1e-6);
        aclDestroyIntArray(sz);
        release(t);
        release(o);
    }
    Dev t = make({2, 2, 3}, ACL_FLOAT, {1}), o = make({2, 4, 5, 2}, ACL_FLOAT, {0}), td = make({2, 2, 3}, ACL_DOUBLE, {1});
    Dev t34 = make({2, 3, 4}, ACL_FLOAT, {1});
    aclIntArray *sz = ia({2, 3, 4, 5}), *sz3 = ia({2, 3, 4}), *szb = ia({3, 3, 4, 5});
    expect_code("AffineGrid null size", aclnnAffineGridGetWorkspaceSize(t.t, nullptr, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AffineGrid double theta", aclnnAffineGridGetWorkspaceSize(td.t, sz, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AffineGrid size of 3 values", aclnnAffineGridGetWorkspaceSize(t.t, sz3, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AffineGrid theta [2, 3, 4] with a 2-D size", aclnnAffineGridGetWorkspaceSize(t34.t, sz, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AffineGrid size N 3 for theta N 2", aclnnAffineGridGetWorkspaceSize(t.t, szb, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {sz, sz3, szb}) aclDestroyIntArray(a);
    for (Dev *d : {&t, &o, &td, &t34}) release(*d);
    printf("ok affine grid\n");
}

/* PyTorch's linear source index of output o (area_pixel_compute_source_index). */
static void lin_tap(int64_t o, int64_t in, int64_t out, double scale, bool align, int64_t *i0, int64_t *i1, double *l1) {
    double r = align ? (out > 1 ? static_cast<double>(in - 1) / (out - 1) : 0) : (scale > 0 ? 1.0 / scale : static_cast<double>(in) / out);
    double src = align ? r * o : std::max(r * (o + 0.5) - 0.5, 0.0);
    *i0 = static_cast<int64_t>(src);
    *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
    *l1 = src - *i0;
}

/* trilinear of x [N, C, D, H, W] to o (D, H, W); with `gy`, the backward into x's shape. */
static std::vector<double> tri_ref(const std::vector<double> &x, const Shape &xs, const int64_t o[3], const double sc[3],
                                   bool align, const std::vector<double> *gy = nullptr) {
    int64_t NC = xs[0] * xs[1], in[3] = {xs[2], xs[3], xs[4]};
    std::vector<double> r(static_cast<size_t>(gy ? numel(xs) : NC * o[0] * o[1] * o[2]), 0.0);
    size_t q = 0;
    for (int64_t b = 0; b < NC; b++)
        for (int64_t d = 0; d < o[0]; d++)
            for (int64_t h = 0; h < o[1]; h++)
                for (int64_t w = 0; w < o[2]; w++, q++) {
                    int64_t p[3] = {d, h, w}, a0[3], a1[3];
                    double l1[3];
                    for (int k = 0; k < 3; k++) lin_tap(p[k], in[k], o[k], sc[k], align, &a0[k], &a1[k], &l1[k]);
                    for (int c = 0; c < 8; c++) {
                        int64_t idx[3];
                        double wgt = 1;
                        for (int k = 0; k < 3; k++) {
                            int bit = (c >> k) & 1;
                            idx[k] = bit ? a1[k] : a0[k];
                            wgt *= bit ? l1[k] : 1 - l1[k];
                        }
                        size_t src = static_cast<size_t>(((b * in[0] + idx[0]) * in[1] + idx[1]) * in[2] + idx[2]);
                        if (gy) r[src] += wgt * (*gy)[q];
                        else r[q] += wgt * x[src];
                    }
                }
    return r;
}

static void upsample_trilinear() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct Case {
        Shape xs;
        int64_t o[3];
        double sc[3];
        bool align;
        aclDataType dt;
        Layout l;
    } cases[] = {
        {{2, 3, 3, 4, 5}, {5, 7, 4}, {0, 0, 0}, false, ACL_FLOAT, CONTIG},
        {{1, 2, 4, 3, 6}, {3, 9, 8}, {0, 0, 0}, true, ACL_FLOAT, TRANSPOSED},
        {{1, 2, 4, 5, 3}, {6, 3, 6}, {1.5, 0.7, 2.0}, false, ACL_DOUBLE, STRIDED},
        {{2, 1, 2, 3, 4}, {4, 6, 8}, {0, 0, 0}, false, ACL_FLOAT16, CONTIG},
        {{1, 2, 3, 3, 3}, {1, 5, 2}, {0, 0, 0}, true, ACL_BF16, TRANSPOSED},
    };
    unsigned seed = 150;
    for (auto &c : cases) {
        char name[200];
        std::vector<double> X = values(numel(c.xs), c.dt, seed++);
        Shape os = {c.xs[0], c.xs[1], c.o[0], c.o[1], c.o[2]};
        Dev x = make(c.xs, c.dt, X, c.l), o = make(os, c.dt, {0});
        aclIntArray *sz = ia({c.o[0], c.o[1], c.o[2]}), *isz = ia(c.xs);
        RUN(S, aclnnUpsampleTrilinear3d, x.t, sz, c.align, c.sc[0], c.sc[1], c.sc[2], o.t);
        snprintf(name, sizeof name, "UpsampleTrilinear3d to %lldx%lldx%lld align %d %s %s", (long long)c.o[0],
                 (long long)c.o[1], (long long)c.o[2], c.align, dname(c.dt), lname(c.l));
        compare(name, read(o), as(tri_ref(X, c.xs, c.o, c.sc, c.align), c.dt), tol_of(c.dt));
        std::vector<double> G = values(numel(os), c.dt, seed++);
        Dev gy = make(os, c.dt, G, c.l), gx = make(c.xs, c.dt, {0});
        RUN(S, aclnnUpsampleTrilinear3dBackward, gy.t, sz, isz, c.align, c.sc[0], c.sc[1], c.sc[2], gx.t);
        snprintf(name, sizeof name, "UpsampleTrilinear3dBackward align %d %s %s", c.align, dname(c.dt), lname(c.l));
        compare(name, read(gx), as(tri_ref(X, c.xs, c.o, c.sc, c.align, &G), c.dt), tol_of(c.dt));
        aclDestroyIntArray(sz);
        aclDestroyIntArray(isz);
        for (Dev *d : {&x, &o, &gy, &gx}) release(*d);
    }
    Dev x = make({1, 2, 3, 4, 5}, ACL_FLOAT, {1}), o = make({1, 2, 6, 8, 10}, ACL_FLOAT, {0});
    Dev x4 = make({2, 3, 4, 5}, ACL_FLOAT, {1}), xi = make({1, 2, 3, 4, 5}, ACL_INT32, {1}), gx = make({1, 2, 3, 4, 5}, ACL_FLOAT, {0});
    aclIntArray *sz = ia({6, 8, 10}), *sz2 = ia({6, 8}), *isz = ia({1, 2, 3, 4, 5}), *isz4 = ia({1, 2, 3, 4});
    expect_code("UpsampleTrilinear3d null outputSize",
                aclnnUpsampleTrilinear3dGetWorkspaceSize(x.t, nullptr, false, 0, 0, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UpsampleTrilinear3d outputSize of 2 values",
                aclnnUpsampleTrilinear3dGetWorkspaceSize(x.t, sz2, false, 0, 0, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleTrilinear3d 4-D self", aclnnUpsampleTrilinear3dGetWorkspaceSize(x4.t, sz, false, 0, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleTrilinear3d int32 self", aclnnUpsampleTrilinear3dGetWorkspaceSize(xi.t, sz, false, 0, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleTrilinear3dBackward inputSize of 4 values",
                aclnnUpsampleTrilinear3dBackwardGetWorkspaceSize(o.t, sz, isz4, false, 0, 0, 0, gx.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleTrilinear3dBackward null gradInput",
                aclnnUpsampleTrilinear3dBackwardGetWorkspaceSize(o.t, sz, isz, false, 0, 0, 0, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (aclIntArray *a : {sz, sz2, isz, isz4}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &x4, &xi, &gx}) release(*d);
    printf("ok upsample trilinear\n");
}

/* bicubic resize of x [N, C, H, W] to o (H, W), taps clamped; with `gy`, the backward. */
static std::vector<double> bicubic_ref(const std::vector<double> &x, const Shape &xs, const int64_t o[2], const double sc[2],
                                       bool align, const std::vector<double> *gy = nullptr) {
    int64_t P = xs[0] * xs[1], in[2] = {xs[2], xs[3]};
    std::vector<double> r(static_cast<size_t>(gy ? numel(xs) : P * o[0] * o[1]), 0.0);
    size_t q = 0;
    for (int64_t p = 0; p < P; p++)
        for (int64_t y = 0; y < o[0]; y++)
            for (int64_t xo = 0; xo < o[1]; xo++, q++) {
                int64_t pos[2] = {y, xo}, base[2];
                double t[2];
                for (int k = 0; k < 2; k++) {
                    double ratio = align ? (o[k] > 1 ? static_cast<double>(in[k] - 1) / (o[k] - 1) : 0)
                                         : (sc[k] > 0 ? 1.0 / sc[k] : static_cast<double>(in[k]) / o[k]);
                    double src = align ? ratio * pos[k] : ratio * (pos[k] + 0.5) - 0.5;
                    base[k] = static_cast<int64_t>(std::floor(src));
                    t[k] = src - std::floor(src);
                }
                for (int j = -1; j <= 2; j++)
                    for (int i = -1; i <= 2; i++) {
                        int64_t yy = std::min(std::max<int64_t>(base[0] + j, 0), in[0] - 1);
                        int64_t xx = std::min(std::max<int64_t>(base[1] + i, 0), in[1] - 1);
                        double w = gs_cubic(t[0] - j) * gs_cubic(t[1] - i);
                        size_t src = static_cast<size_t>((p * in[0] + yy) * in[1] + xx);
                        if (gy) r[src] += w * (*gy)[q];
                        else r[q] += w * x[src];
                    }
            }
    return r;
}

static void upsample_bicubic() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct Case {
        Shape xs;
        int64_t o[2];
        double sc[2];
        bool align;
        aclDataType dt;
        Layout l;
    } cases[] = {
        {{2, 3, 5, 6}, {9, 4}, {0, 0}, false, ACL_FLOAT, CONTIG},
        {{1, 2, 4, 7}, {8, 13}, {0, 0}, true, ACL_FLOAT, TRANSPOSED},
        {{2, 2, 6, 5}, {10, 3}, {1.7, 0.6}, false, ACL_FLOAT, STRIDED},
        {{1, 3, 3, 4}, {7, 7}, {0, 0}, false, ACL_FLOAT16, CONTIG},
        {{2, 1, 4, 4}, {1, 6}, {0, 0}, true, ACL_BF16, TRANSPOSED},
    };
    unsigned seed = 170;
    for (auto &c : cases) {
        char name[200];
        std::vector<double> X = values(numel(c.xs), c.dt, seed++);
        Shape os = {c.xs[0], c.xs[1], c.o[0], c.o[1]};
        Dev x = make(c.xs, c.dt, X, c.l), o = make(os, c.dt, {0});
        aclIntArray *sz = ia({c.o[0], c.o[1]}), *isz = ia(c.xs);
        RUN(S, aclnnUpsampleBicubic2d, x.t, sz, c.align, c.sc[0], c.sc[1], o.t);
        snprintf(name, sizeof name, "UpsampleBicubic2d to %lldx%lld align %d %s %s", (long long)c.o[0], (long long)c.o[1],
                 c.align, dname(c.dt), lname(c.l));
        compare(name, read(o), as(bicubic_ref(X, c.xs, c.o, c.sc, c.align), c.dt), tol_of(c.dt));
        std::vector<double> G = values(numel(os), c.dt, seed++);
        Dev gy = make(os, c.dt, G, c.l), gx = make(c.xs, c.dt, {0});
        RUN(S, aclnnUpsampleBicubic2dBackward, gy.t, sz, isz, c.align, c.sc[0], c.sc[1], gx.t);
        snprintf(name, sizeof name, "UpsampleBicubic2dBackward align %d %s %s", c.align, dname(c.dt), lname(c.l));
        compare(name, read(gx), as(bicubic_ref(X, c.xs, c.o, c.sc, c.align, &G), c.dt), tol_of(c.dt));
        aclDestroyIntArray(sz);
        aclDestroyIntArray(isz);
        for (Dev *d : {&x, &o, &gy, &gx}) release(*d);
    }
    Dev x = make({1, 2, 4, 5}, ACL_FLOAT, {1}), o = make({1, 2, 8, 10}, ACL_FLOAT, {0}), xd = make({1, 2, 4, 5}, ACL_DOUBLE, {1});
    Dev x5 = make({1, 1, 2, 4, 5}, ACL_FLOAT, {1}), gx = make({1, 2, 4, 5}, ACL_FLOAT, {0});
    aclIntArray *sz = ia({8, 10}), *sz0 = ia({8, 0}), *isz = ia({1, 2, 4, 5}), *isz3 = ia({2, 4, 5});
    expect_code("UpsampleBicubic2d null self", aclnnUpsampleBicubic2dGetWorkspaceSize(nullptr, sz, false, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UpsampleBicubic2d double self", aclnnUpsampleBicubic2dGetWorkspaceSize(xd.t, sz, false, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBicubic2d outputSize with a 0", aclnnUpsampleBicubic2dGetWorkspaceSize(x.t, sz0, false, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBicubic2d 5-D self", aclnnUpsampleBicubic2dGetWorkspaceSize(x5.t, sz, false, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBicubic2dBackward inputSize of 3 values",
                aclnnUpsampleBicubic2dBackwardGetWorkspaceSize(o.t, sz, isz3, false, 0, 0, gx.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBicubic2dBackward null inputSize",
                aclnnUpsampleBicubic2dBackwardGetWorkspaceSize(o.t, sz, nullptr, false, 0, 0, gx.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UpsampleBicubic2dBackward gradOut of the input's shape",
                aclnnUpsampleBicubic2dBackwardGetWorkspaceSize(gx.t, sz, isz, false, 0, 0, gx.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {sz, sz0, isz, isz3}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &xd, &x5, &gx}) release(*d);
    printf("ok upsample bicubic\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    avg_pool3d();
    adaptive_avg_pool3d();
    max_pool3d();
    adaptive_max_pool3d();
    pads();
    grid_sampler();
    grid_sampler_3d();
    affine_grid();
    upsample_trilinear();
    upsample_bicubic();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
