/* The mHC operators and the causal 1-D convolutions from C.
 * aclnnMhcPost (hRes^T·x + hOut ⊗ hPost, and x + hOut ⊗ hPost without hRes) and
 * aclnnMhcPostBackward (gradX = hRes·g, gradHRes = x·g^T, gradHOut = Σ_j g·hPost,
 * gradHPost = Σ_d g·hOut) against float64 host loops of the reference page's formulas, in TND
 * and BSND layouts, float16 and bfloat16, strided inputs; the backward is the only way to
 * reach the gradient, since torch_npu 2.9 refuses npu_mhc_post_backward below CANN 9.0. Errors:
 * a NULL hRes in the backward 161001, its Atlas A2 limits (n = 4, D a multiple of 128) 161002,
 * a bad dtype 161002; and the Ascend 950-only operators (MhcSinkhorn(+Backward),
 * MaskedCausalConv1d(+Backward), FusedCausalConv1d) refused with 161002 naming the platform. */
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_mhc_post.h"
#include "aclnnop/aclnn_mhc_post_backward.h"
#include "aclnnop/aclnn_mhc_sinkhorn.h"
#include "aclnnop/aclnn_mhc_sinkhorn_backward.h"
#include "aclnnop/aclnn_masked_causal_conv1d.h"
#include "aclnnop/aclnn_masked_causal_conv1d_backward.h"
#include "aclnnop/aclnn_fused_causal_conv1d.h"

static aclrtStream S;
static uint64_t ws = 0;
static aclOpExecutor *ex = nullptr;

static void expect_code(const char *what, aclnnStatus got, int want, const char *word) {
    g_checks++;
    const char *m = test_msg();
    if (static_cast<int>(got) != want || (word && strstr(m, word) == nullptr)) {
        printf("FAIL %s: returned %d, expected %d naming '%s' (%s)\n", what, static_cast<int>(got), want,
               word ? word : "", m);
        g_fail++;
    } else {
        printf("error %s: %s\n", what, m);
    }
}

static void section(const char *name, int fails_before) {
    if (g_fail == fails_before) printf("ok %s\n", name);
}

static Shape with(Shape lead, std::initializer_list<int64_t> tail) {
    for (auto t : tail) lead.push_back(t);
    return lead;
}

static std::vector<double> rounded(std::vector<double> v, aclDataType dt) {
    for (auto &e : v) e = as_type(e, dt);
    return v;
}

static void post_case(const Shape &lead, int64_t n, int64_t d, aclDataType dt, bool with_res, Layout lx) {
    int before = g_fail;
    int64_t rows = numel(lead);
    auto xv = values(rows * n * d, dt, 1);
    auto hrv = values(rows * n * n, ACL_FLOAT, 2);
    auto hov = values(rows * d, dt, 3);
    auto hpv = values(rows * n, ACL_FLOAT, 4);
    Dev x = make(with(lead, {n, d}), dt, xv, lx);
    Dev hr = make(with(lead, {n, n}), ACL_FLOAT, hrv);
    Dev ho = make(with(lead, {d}), dt, hov, lx);
    Dev hp = make(with(lead, {n}), ACL_FLOAT, hpv);
    Dev out = make(with(lead, {n, d}), dt, {});
    RUN(S, aclnnMhcPost, x.t, with_res ? hr.t : nullptr, ho.t, hp.t, out.t);
    std::vector<double> want(static_cast<size_t>(rows * n * d));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t k = 0; k < d; k++) {
                double s = hov[r * d + k] * hpv[r * n + j];
                if (with_res) {
                    for (int64_t i = 0; i < n; i++) s += hrv[(r * n + i) * n + j] * xv[(r * n + i) * d + k];
                } else {
                    s += xv[(r * n + j) * d + k];
                }
                want[(r * n + j) * d + k] = s;
            }
    char what[128];
    snprintf(what, sizeof what, "mhc_post %s %s%s", dname(dt), lname(lx), with_res ? "" : " no hRes");
    compare(what, read(out), rounded(want, dt), dt == ACL_BF16 ? 1e-2 : 2e-3);
    release(x), release(hr), release(ho), release(hp), release(out);
    section(what, before);
}

static void post_backward_case(const Shape &lead, int64_t d, aclDataType dt, Layout lg) {
    int before = g_fail;
    const int64_t n = 4;
    int64_t rows = numel(lead);
    auto gv = values(rows * n * d, dt, 5);
    auto xv = values(rows * n * d, dt, 6);
    auto hrv = values(rows * n * n, ACL_FLOAT, 7);
    auto hov = values(rows * d, dt, 8);
    auto hpv = values(rows * n, ACL_FLOAT, 9);
    Dev g = make(with(lead, {n, d}), dt, gv, lg);
    Dev x = make(with(lead, {n, d}), dt, xv);
    Dev hr = make(with(lead, {n, n}), ACL_FLOAT, hrv, lg);
    Dev ho = make(with(lead, {d}), dt, hov);
    Dev hp = make(with(lead, {n}), ACL_FLOAT, hpv);
    Dev gx = make(with(lead, {n, d}), dt, {});
    Dev ghr = make(with(lead, {n, n}), ACL_FLOAT, {});
    Dev gho = make(with(lead, {d}), dt, {});
    Dev ghp = make(with(lead, {n}), ACL_FLOAT, {});
    RUN(S, aclnnMhcPostBackward, g.t, x.t, hr.t, ho.t, hp.t, gx.t, ghr.t, gho.t, ghp.t);
    std::vector<double> wx(static_cast<size_t>(rows * n * d)), wr(static_cast<size_t>(rows * n * n)),
        wo(static_cast<size_t>(rows * d)), wp(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++) {
            for (int64_t k = 0; k < d; k++) {
                double s = 0;
                for (int64_t j = 0; j < n; j++) s += hrv[(r * n + i) * n + j] * gv[(r * n + j) * d + k];
                wx[(r * n + i) * d + k] = s;
            }
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t k = 0; k < d; k++) s += xv[(r * n + i) * d + k] * gv[(r * n + j) * d + k];
                wr[(r * n + i) * n + j] = s;
            }
        }
        for (int64_t k = 0; k < d; k++) {
            double s = 0;
            for (int64_t j = 0; j < n; j++) s += gv[(r * n + j) * d + k] * hpv[r * n + j];
            wo[r * d + k] = s;
        }
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t k = 0; k < d; k++) s += gv[(r * n + j) * d + k] * hov[r * d + k];
            wp[r * n + j] = s;
        }
    }
    double tol = dt == ACL_BF16 ? 1e-2 : 2e-3;
    char what[128];
    snprintf(what, sizeof what, "mhc_post_backward %s %s", dname(dt), lname(lg));
    compare("gradX", read(gx), rounded(wx, dt), tol);
    compare("gradHRes", read(ghr), wr, 1e-5);
    compare("gradHOut", read(gho), rounded(wo, dt), tol);
    compare("gradHPost", read(ghp), wp, 1e-5);
    release(g), release(x), release(hr), release(ho), release(hp);
    release(gx), release(ghr), release(gho), release(ghp);
    section(what, before);
}

static void post_errors() {
    int before = g_fail;
    Dev x = make({2, 4, 128}, ACL_FLOAT16, {1});
    Dev x6 = make({2, 6, 128}, ACL_FLOAT16, {1});
    Dev x96 = make({2, 4, 96}, ACL_FLOAT16, {1});
    Dev hr = make({2, 4, 4}, ACL_FLOAT, {1});
    Dev hr6 = make({2, 6, 6}, ACL_FLOAT, {1});
    Dev hr16 = make({2, 4, 4}, ACL_FLOAT16, {1});
    Dev ho = make({2, 128}, ACL_FLOAT16, {1});
    Dev ho96 = make({2, 96}, ACL_FLOAT16, {1});
    Dev hp = make({2, 4}, ACL_FLOAT, {1});
    Dev hp6 = make({2, 6}, ACL_FLOAT, {1});
    Dev hp5 = make({2, 5}, ACL_FLOAT, {1});
    Dev o = make({2, 4, 128}, ACL_FLOAT16, {});
    Dev o6 = make({2, 6, 128}, ACL_FLOAT16, {});
    Dev o96 = make({2, 4, 96}, ACL_FLOAT16, {});
    Dev gr = make({2, 4, 4}, ACL_FLOAT, {});
    Dev gr6 = make({2, 6, 6}, ACL_FLOAT, {});
    Dev go = make({2, 128}, ACL_FLOAT16, {});
    Dev go96 = make({2, 96}, ACL_FLOAT16, {});
    Dev gp = make({2, 4}, ACL_FLOAT, {});
    Dev gp6 = make({2, 6}, ACL_FLOAT, {});
    expect_code("MhcPost NULL x", aclnnMhcPostGetWorkspaceSize(nullptr, hr.t, ho.t, hp.t, o.t, &ws, &ex), 161001, "x");
    expect_code("MhcPost FLOAT16 hRes", aclnnMhcPostGetWorkspaceSize(x.t, hr16.t, ho.t, hp.t, o.t, &ws, &ex), 161002,
                "hRes");
    expect_code("MhcPost hPost [2, 5]", aclnnMhcPostGetWorkspaceSize(x.t, hr.t, ho.t, hp5.t, o.t, &ws, &ex), 161002,
                "hPost");
    expect_code("MhcPostBackward NULL hRes",
                aclnnMhcPostBackwardGetWorkspaceSize(o.t, x.t, nullptr, ho.t, hp.t, o.t, gr.t, go.t, gp.t, &ws, &ex),
                161001, "hRes");
    expect_code("MhcPostBackward n = 6",
                aclnnMhcPostBackwardGetWorkspaceSize(o6.t, x6.t, hr6.t, ho.t, hp6.t, o6.t, gr6.t, go.t, gp6.t, &ws,
                                                     &ex),
                161002, "must be 4");
    expect_code("MhcPostBackward D = 96",
                aclnnMhcPostBackwardGetWorkspaceSize(o96.t, x96.t, hr.t, ho96.t, hp.t, o96.t, gr.t, go96.t, gp.t,
                                                     &ws, &ex),
                161002, "multiple of 128");
    for (Dev *d : {&x, &x6, &x96, &hr, &hr6, &hr16, &ho, &ho96, &hp, &hp6, &hp5, &o, &o6, &o96, &gr, &gr6, &go, &go96,
                   &gp, &gp6})
        release(*d);
    section("mhc_post_errors", before);
}

static void ascend950_only() {
    int before = g_fail;
    Dev x = make({1, 8, 4, 4}, ACL_FLOAT, {1});
    Dev y = make({1, 8, 4, 4}, ACL_FLOAT, {});
    expect_code("MhcSinkhorn", aclnnMhcSinkhornGetWorkspaceSize(x.t, 1e-6f, 20, y.t, nullptr, nullptr, &ws, &ex),
                161002, "Ascend 950");
    expect_code("MhcSinkhornBackward", aclnnMhcSinkhornBackwardGetWorkspaceSize(x.t, x.t, x.t, y.t, &ws, &ex),
                161002, "Ascend 950");
    Dev cx = make({4, 2, 384}, ACL_FLOAT16, {1});
    Dev cw = make({3, 384}, ACL_FLOAT16, {1});
    Dev cy = make({4, 2, 384}, ACL_FLOAT16, {});
    expect_code("MaskedCausalConv1d", aclnnMaskedCausalConv1dGetWorkspaceSize(cx.t, cw.t, nullptr, cy.t, &ws, &ex),
                161002, "Ascend 950");
    expect_code("MaskedCausalConv1dBackward",
                aclnnMaskedCausalConv1dBackwardGetWorkspaceSize(cy.t, cx.t, cw.t, nullptr, cy.t, cw.t, &ws, &ex),
                161002, "Ascend 950");
    Dev fx = make({8, 128}, ACL_BF16, {1});
    Dev fw = make({3, 128}, ACL_BF16, {1});
    Dev fs = make({2, 2, 128}, ACL_BF16, {1});
    Dev fy = make({8, 128}, ACL_BF16, {});
    expect_code("FusedCausalConv1d",
                aclnnFusedCausalConv1dGetWorkspaceSize(fx.t, fw.t, fs.t, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                       0, -1, 0, 0, fy.t, &ws, &ex),
                161002, "Ascend 950");
    for (Dev *d : {&x, &y, &cx, &cw, &cy, &fx, &fw, &fs, &fy}) release(*d);
    section("ascend950_only", before);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    post_case({3}, 4, 40, ACL_FLOAT16, true, CONTIG);
    post_case({2, 3}, 6, 32, ACL_BF16, true, STRIDED);
    post_case({2, 2}, 8, 16, ACL_FLOAT16, false, TRANSPOSED);
    post_backward_case({3}, 128, ACL_FLOAT16, CONTIG);
    post_backward_case({2, 2}, 256, ACL_BF16, STRIDED);
    post_errors();
    ascend950_only();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
