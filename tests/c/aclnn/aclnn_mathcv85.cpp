/* Operators of CANN 8.5's ops-math set (aclnn_grouped_bias_add_grad.h, aclnn_segsum.h,
 * aclnn_exp_segsum_backward.h, aclnn_slice_v3.h, aclnn_fill_v2.h, aclnn_add_lora.h,
 * aclnn_masked_scale.h)
 * against float64 host references written from the documented formulas, with transposed and
 * strided views, and their documented argument errors (161001 / 161002).
 * Tolerances: data movement exactly; sums and exponentials computed in float64 and rounded
 * once: float32 to 1e-6 relative, float16 1e-3, bfloat16 8e-3. */
#include <cmath>
#include <string>
#include "ops_ref.h"
#include "aclnnop/aclnn_grouped_bias_add_grad.h"
#include "aclnnop/aclnn_segsum.h"
#include "aclnnop/aclnn_exp_segsum_backward.h"
#include "aclnnop/aclnn_slice_v3.h"
#include "aclnnop/aclnn_fill_v2.h"
#include "aclnnop/aclnn_masked_scale.h"
#include "aclnnop/aclnn_add_lora.h"
#include "aclnnop/aclnn_trans_convolution_weight.h"

static aclrtStream S;
static uint64_t WS;
static aclOpExecutor *EX;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, test_msg());
    }
}

static double tol(aclDataType t) { return t == ACL_FLOAT ? 1e-6 : t == ACL_FLOAT16 ? 1e-3 : 8e-3; }

static std::vector<double> rounded(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

/* out[g, h] = sum of grad rows [start_g, end_g) */
static std::vector<double> group_ref(const std::vector<double> &g, int64_t h, const std::vector<int64_t> &ends) {
    std::vector<double> o(ends.size() * h, 0.0);
    int64_t s = 0;
    for (size_t j = 0; j < ends.size(); j++) {
        for (int64_t r = s; r < ends[j]; r++)
            for (int64_t c = 0; c < h; c++) o[j * h + c] += g[r * h + c];
        s = ends[j];
    }
    return o;
}

static void grouped() {
    const int64_t rows = 10, h = 6;
    const std::vector<int64_t> ends{3, 3, 7, 10};   /* an empty group included */
    const std::vector<double> sizes{3, 0, 4, 3};
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (Layout l : {CONTIG, TRANSPOSED, STRIDED}) {
            char what[96];
            std::vector<double> g = values(rows * h, t, 7);
            std::vector<double> want = rounded(group_ref(g, h, ends), t);
            Dev G = make({rows, h}, t, g, l);
            for (aclDataType it : {ACL_INT32, ACL_INT64}) {
                Dev I = make({4}, it, std::vector<double>(ends.begin(), ends.end()));
                Dev O = make({4, h}, t, {});
                RUN(S, aclnnGroupedBiasAddGrad, G.t, I.t, O.t);
                snprintf(what, sizeof what, "GroupedBiasAddGrad %s %s idx %s", dname(t), lname(l), dname(it));
                compare(what, read(O), want, tol(t));
                release(O);
                O = make({4, h}, t, {}, l);
                RUN(S, aclnnGroupedBiasAddGradV2, G.t, I.t, 0, O.t);
                snprintf(what, sizeof what, "GroupedBiasAddGradV2 type 0 %s %s idx %s", dname(t), lname(l), dname(it));
                compare(what, read(O), want, tol(t));
                release(O);
                release(I);
                Dev Z = make({4}, it, sizes);
                O = make({4, h}, t, {});
                RUN(S, aclnnGroupedBiasAddGradV2, G.t, Z.t, 1, O.t);
                snprintf(what, sizeof what, "GroupedBiasAddGradV2 type 1 %s %s idx %s", dname(t), lname(l), dname(it));
                compare(what, read(O), want, tol(t));
                release(O);
                release(Z);
            }
            release(G);
            /* without groupIdx: [G, C, H] summed over C */
            std::vector<double> g3 = values(3 * 4 * 5, t, 8);
            std::vector<double> w3(3 * 5, 0.0);
            for (int64_t a = 0; a < 3; a++)
                for (int64_t c = 0; c < 4; c++)
                    for (int64_t x = 0; x < 5; x++) w3[a * 5 + x] += g3[(a * 4 + c) * 5 + x];
            Dev G3 = make({3, 4, 5}, t, g3, l), O3 = make({3, 5}, t, {});
            RUN(S, aclnnGroupedBiasAddGrad, G3.t, nullptr, O3.t);
            snprintf(what, sizeof what, "GroupedBiasAddGrad 3-D %s %s", dname(t), lname(l));
            compare(what, read(O3), rounded(w3, t), tol(t));
            release(G3);
            release(O3);
        }
    }
    Dev G = make({rows, h}, ACL_FLOAT, values(rows * h, ACL_FLOAT, 1)), I = make({4}, ACL_INT64, {3, 3, 7, 10});
    Dev O = make({4, h}, ACL_FLOAT, {}), Bad = make({3, h}, ACL_FLOAT, {}), I8 = make({4}, ACL_INT8, {1});
    expect_code("GroupedBiasAddGrad gradY NULL", aclnnGroupedBiasAddGradGetWorkspaceSize(nullptr, I.t, O.t, &WS, &EX), 161001);
    expect_code("GroupedBiasAddGrad out shape", aclnnGroupedBiasAddGradGetWorkspaceSize(G.t, I.t, Bad.t, &WS, &EX), 161002);
    expect_code("GroupedBiasAddGrad groupIdx INT8", aclnnGroupedBiasAddGradGetWorkspaceSize(G.t, I8.t, O.t, &WS, &EX), 161002);
    expect_code("GroupedBiasAddGradV2 groupIdxType 2", aclnnGroupedBiasAddGradV2GetWorkspaceSize(G.t, I.t, 2, O.t, &WS, &EX), 161002);
    expect_code("GroupedBiasAddGrad 2-D gradY without groupIdx", aclnnGroupedBiasAddGradGetWorkspaceSize(G.t, nullptr, O.t, &WS, &EX), 161002);
    /* group ends that do not end at the row count fail the task */
    Dev Short = make({4}, ACL_INT64, {3, 3, 7, 9});
    NN(aclnnGroupedBiasAddGradGetWorkspaceSize(G.t, Short.t, O.t, &WS, &EX));
    NN(aclnnGroupedBiasAddGrad(nullptr, 0, EX, S));
    expect_code("GroupedBiasAddGrad groupIdx ends at 9 of 10 rows", aclrtSynchronizeStream(S), ACL_ERROR_INTERNAL_ERROR);
    for (Dev *d : {&G, &I, &O, &Bad, &I8, &Short}) release(*d);
    printf("ok grouped\n");
}

/* ExpSegsum's reference: out[i, j] = exp(x[j+1] + ... + x[i]) for j <= i, 0 above */
static std::vector<double> segsum_ref(const std::vector<double> &x, int64_t t) {
    int64_t rows = static_cast<int64_t>(x.size()) / t;
    std::vector<double> o(rows * t * t, 0.0);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < t; i++)
            for (int64_t j = 0; j <= i; j++) {
                double s = 0;
                for (int64_t k = j + 1; k <= i; k++) s += x[r * t + k];
                o[(r * t + i) * t + j] = std::exp(s);
            }
    return o;
}

/* gradient by the chain rule: d out[k, j] / d x[i] = out[k, j] for j < i <= k */
static std::vector<double> segsum_grad_ref(const std::vector<double> &go, const std::vector<double> &y, int64_t t) {
    int64_t rows = static_cast<int64_t>(go.size()) / (t * t);
    std::vector<double> g(rows * t, 0.0);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < t; i++)
            for (int64_t k = i; k < t; k++)
                for (int64_t j = 0; j < i; j++) g[r * t + i] += go[(r * t + k) * t + j] * y[(r * t + k) * t + j];
    return g;
}

static void segsum() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (Layout l : {CONTIG, TRANSPOSED, STRIDED}) {
            for (const Shape &sh : {Shape{2, 3, 6}, Shape{2, 2, 3, 5}}) {
                char what[96];
                int64_t T = sh.back();
                std::vector<double> x = values(numel(sh), t, 11);
                for (auto &v : x) v = as_type(v / 8, t);
                Shape osh(sh);
                osh.push_back(T);
                std::vector<double> y = segsum_ref(x, T);
                Dev X = make(sh, t, x, l), O = make(osh, t, {}, l == STRIDED ? STRIDED : CONTIG);
                RUN(S, aclnnExpSegsum, X.t, O.t);
                snprintf(what, sizeof what, "ExpSegsum %s %s %zu-D", dname(t), lname(l), sh.size());
                compare(what, read(O), rounded(y, t), tol(t));
                /* backward, with the forward output rounded to t as gradSelf */
                std::vector<double> yt = rounded(y, t), go = values(numel(osh), t, 12);
                Dev GO = make(osh, t, go, l), Y = make(osh, t, yt), GI = make(sh, t, {}, l);
                RUN(S, aclnnExpSegsumBackward, GO.t, Y.t, GI.t);
                snprintf(what, sizeof what, "ExpSegsumBackward %s %s %zu-D", dname(t), lname(l), osh.size());
                compare(what, read(GI), rounded(segsum_grad_ref(go, yt, T), t), t == ACL_FLOAT ? 1e-5 : tol(t));
                for (Dev *d : {&X, &O, &GO, &Y, &GI}) release(*d);
            }
        }
    }
    Dev X2 = make({4, 5}, ACL_FLOAT, {1}), O3 = make({4, 5, 5}, ACL_FLOAT, {}), X3 = make({2, 4, 5}, ACL_FLOAT, {1});
    Dev O4 = make({2, 4, 5, 4}, ACL_FLOAT, {}), XI = make({2, 4, 5}, ACL_INT32, {1}), O5 = make({2, 4, 5, 5}, ACL_FLOAT, {});
    Dev GI = make({2, 4, 5}, ACL_FLOAT, {}), G16 = make({2, 4, 5, 5}, ACL_FLOAT16, {});
    expect_code("ExpSegsum self NULL", aclnnExpSegsumGetWorkspaceSize(nullptr, O3.t, &WS, &EX), 161001);
    expect_code("ExpSegsum 2-D self", aclnnExpSegsumGetWorkspaceSize(X2.t, O3.t, &WS, &EX), 161002);
    expect_code("ExpSegsum out last dim", aclnnExpSegsumGetWorkspaceSize(X3.t, O4.t, &WS, &EX), 161002);
    expect_code("ExpSegsum INT32 self", aclnnExpSegsumGetWorkspaceSize(XI.t, O5.t, &WS, &EX), 161002);
    expect_code("ExpSegsumBackward gradInput NULL", aclnnExpSegsumBackwardGetWorkspaceSize(O5.t, O5.t, nullptr, &WS, &EX), 161001);
    expect_code("ExpSegsumBackward gradSelf FLOAT16", aclnnExpSegsumBackwardGetWorkspaceSize(O5.t, G16.t, GI.t, &WS, &EX), 161002);
    expect_code("ExpSegsumBackward last dims differ", aclnnExpSegsumBackwardGetWorkspaceSize(O4.t, O4.t, GI.t, &WS, &EX), 161002);
    for (Dev *d : {&X2, &O3, &X3, &O4, &XI, &O5, &GI, &G16}) release(*d);
    printf("ok segsum\n");
}

static void slice_fill() {
    for (aclDataType t : {ACL_INT8, ACL_UINT8, ACL_INT16, ACL_INT32, ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (Layout l : {CONTIG, TRANSPOSED, STRIDED}) {
            char what[96];
            const Shape sh{3, 5, 6};
            std::vector<double> x = values(numel(sh), t, 21);
            int64_t b[3] = {1, 2, 0}, s[3] = {2, 3, 4};
            aclIntArray *B = aclCreateIntArray(b, 3), *Z = aclCreateIntArray(s, 3);
            std::vector<double> want;
            for (int64_t i = 0; i < 2; i++)
                for (int64_t j = 0; j < 3; j++)
                    for (int64_t k = 0; k < 4; k++) want.push_back(x[((1 + i) * 5 + 2 + j) * 6 + k]);
            Dev X = make(sh, t, x, l), Y = make({2, 3, 4}, t, {}, l);
            RUN(S, aclnnSliceV3, X.t, B, Z, Y.t);
            snprintf(what, sizeof what, "SliceV3 %s %s", dname(t), lname(l));
            compare(what, read(Y), want, 0);
            release(X);
            release(Y);
            aclDestroyIntArray(B);
            aclDestroyIntArray(Z);
        }
    }
    for (aclDataType t : {ACL_INT16, ACL_INT32, ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (Layout l : {CONTIG, TRANSPOSED, STRIDED}) {
            char what[96];
            double v = is_float(t) ? as_type(-2.71875, t) : -7;
            Dev X = make({4, 7}, t, values(28, t, 3), l), V = make({1}, t, {v});
            RUN(S, aclnnFillV2, X.t, V.t);
            snprintf(what, sizeof what, "FillV2 %s %s", dname(t), lname(l));
            compare(what, read(X), std::vector<double>(28, v), 0);
            release(X);
            release(V);
        }
    }
    int64_t b[2] = {1, 0}, s[2] = {3, 2}, b1[1] = {0};
    aclIntArray *B = aclCreateIntArray(b, 2), *Z = aclCreateIntArray(s, 2), *B1 = aclCreateIntArray(b1, 1);
    Dev X = make({3, 4}, ACL_INT8, {1}), Y = make({3, 2}, ACL_INT8, {}), Y2 = make({2, 2}, ACL_INT8, {});
    Dev X64 = make({3, 4}, ACL_INT64, {1}), V32 = make({1}, ACL_INT32, {1}), F = make({3, 4}, ACL_FLOAT, {1});
    Dev V2 = make({2}, ACL_FLOAT, {1});
    expect_code("SliceV3 begin NULL", aclnnSliceV3GetWorkspaceSize(X.t, nullptr, Z, Y.t, &WS, &EX), 161001);
    expect_code("SliceV3 past the end", aclnnSliceV3GetWorkspaceSize(X.t, B, Z, Y.t, &WS, &EX), 161002);
    expect_code("SliceV3 begin of 1 value", aclnnSliceV3GetWorkspaceSize(X.t, B1, Z, Y2.t, &WS, &EX), 161002);
    expect_code("SliceV3 INT64 x", aclnnSliceV3GetWorkspaceSize(X64.t, B1, B1, X64.t, &WS, &EX), 161002);
    expect_code("FillV2 xRef NULL", aclnnFillV2GetWorkspaceSize(nullptr, V32.t, &WS, &EX), 161001);
    expect_code("FillV2 INT32 value into FLOAT", aclnnFillV2GetWorkspaceSize(F.t, V32.t, &WS, &EX), 161002);
    expect_code("FillV2 two values", aclnnFillV2GetWorkspaceSize(F.t, V2.t, &WS, &EX), 161002);
    for (Dev *d : {&X, &Y, &Y2, &X64, &V32, &F, &V2}) release(*d);
    aclDestroyIntArray(B);
    aclDestroyIntArray(Z);
    aclDestroyIntArray(B1);
    printf("ok slice fill\n");
}

static void masked_scale() {
    Dev X = make({2, 3}, ACL_FLOAT, {1}), M = make({2, 3}, ACL_UINT8, {1}), O = make({2, 3}, ACL_FLOAT, {});
    expect_code("MaskedScale mask NULL", aclnnMaskedScaleGetWorkspaceSize(X.t, nullptr, 2.0f, O.t, &WS, &EX), 161001);
    expect_code("MaskedScale on Atlas A2", aclnnMaskedScaleGetWorkspaceSize(X.t, M.t, 2.0f, O.t, &WS, &EX), 161002);
    /* TransConvolutionWeight converts on Ascend 310P only */
    Dev W = make({4, 3, 2, 2}, ACL_FLOAT16, {1}), WO = make({4, 3, 2, 2}, ACL_FLOAT16, {});
    int64_t shape[4] = {4, 3, 2, 2};
    aclIntArray *TS = aclCreateIntArray(shape, 4);
    uint64_t size = 0;
    expect_code("CalculateConvolutionWeightSize NULL size", aclnnCalculateConvolutionWeightSize(TS, false, 1, ACL_FLOAT16, nullptr), 161001);
    expect_code("CalculateConvolutionWeightSize on Atlas A2", aclnnCalculateConvolutionWeightSize(TS, false, 1, ACL_FLOAT16, &size), 161002);
    expect_code("TransConvolutionWeight weightOut NULL", aclnnTransConvolutionWeightGetWorkspaceSize(W.t, false, 1, nullptr, &WS, &EX), 161001);
    expect_code("TransConvolutionWeight on Atlas A2", aclnnTransConvolutionWeightGetWorkspaceSize(W.t, false, 1, WO.t, &WS, &EX), 161002);
    aclDestroyIntArray(TS);
    for (Dev *d : {&X, &M, &O, &W, &WO}) release(*d);
    printf("ok masked scale\n");
}

/* AddLora: out = y; row b with w = indices[b] >= 0 gets
 * out[b, off + h] += scale * sum_r (x[b] . A[w, layer, r, :]) * B[w, layer, h, r] */
static void add_lora() {
    const int64_t Bt = 5, H1 = 32, H3 = 64, H2 = 32, R = 16, W = 3, L = 2;
    const int64_t layer = 1, off = 16;
    const double scale = 0.5;
    for (bool with_a : {true, false}) {
        for (Layout l : {CONTIG, STRIDED}) {
            char what[96];
            int64_t h1 = with_a ? H1 : R;
            std::vector<double> y = values(Bt * H3, ACL_FLOAT16, 31), x = values(Bt * h1, ACL_FLOAT16, 32);
            std::vector<double> wa = values(W * L * R * H1, ACL_FLOAT16, 33), wb = values(W * L * H2 * R, ACL_FLOAT16, 34);
            for (auto &v : x) v = as_type(v / 4, ACL_FLOAT16);
            for (auto &v : wa) v = as_type(v / 8, ACL_FLOAT16);
            for (auto &v : wb) v = as_type(v / 8, ACL_FLOAT16);
            std::vector<double> idx{2, 0, -1, 1, 2};
            std::vector<double> want(y);
            for (int64_t b = 0; b < Bt; b++) {
                if (idx[b] < 0) continue;
                int64_t m = static_cast<int64_t>(idx[b]) * L + layer;
                std::vector<double> z1(R);
                for (int64_t r = 0; r < R; r++) {
                    if (!with_a) { z1[r] = x[b * h1 + r]; continue; }
                    double s = 0;
                    for (int64_t k = 0; k < H1; k++) s += x[b * H1 + k] * wa[(m * R + r) * H1 + k];
                    z1[r] = s;
                }
                for (int64_t h = 0; h < H2; h++) {
                    double s = 0;
                    for (int64_t r = 0; r < R; r++) s += z1[r] * wb[(m * H2 + h) * R + r];
                    want[b * H3 + off + h] += s * scale;
                }
            }
            Dev Y = make({Bt, H3}, ACL_FLOAT16, y, l), X = make({Bt, h1}, ACL_FLOAT16, x, l);
            Dev WB = make({W, L, H2, R}, ACL_FLOAT16, wb, l), I = make({Bt}, ACL_INT32, idx);
            Dev WA = make({W, L, R, H1}, ACL_FLOAT16, wa), O = make({Bt, H3}, ACL_FLOAT16, {}, l);
            RUN(S, aclnnAddLora, Y.t, X.t, WB.t, I.t, with_a ? WA.t : nullptr, layer, scale, off, H2, O.t);
            snprintf(what, sizeof what, "AddLora %s weightA %s", with_a ? "with" : "without", lname(l));
            compare(what, read(O), rounded(want, ACL_FLOAT16), 2e-3);
            for (Dev *d : {&Y, &X, &WB, &I, &WA, &O}) release(*d);
        }
    }
    Dev Y = make({2, 32}, ACL_FLOAT16, {1}), X = make({2, 16}, ACL_FLOAT16, {1}), WB = make({1, 1, 32, 16}, ACL_FLOAT16, {1});
    Dev I = make({2}, ACL_INT32, {0}), O = make({2, 32}, ACL_FLOAT16, {}), F = make({2, 32}, ACL_FLOAT, {}), Big = make({2}, ACL_INT32, {0, 1});
    expect_code("AddLora indices NULL", aclnnAddLoraGetWorkspaceSize(Y.t, X.t, WB.t, nullptr, nullptr, 0, 1.0, 0, 32, O.t, &WS, &EX), 161001);
    expect_code("AddLora FLOAT out", aclnnAddLoraGetWorkspaceSize(Y.t, X.t, WB.t, I.t, nullptr, 0, 1.0, 0, 32, F.t, &WS, &EX), 161002);
    expect_code("AddLora layerIdx 1 of 1", aclnnAddLoraGetWorkspaceSize(Y.t, X.t, WB.t, I.t, nullptr, 1, 1.0, 0, 32, O.t, &WS, &EX), 561002);
    expect_code("AddLora ySliceSize 16", aclnnAddLoraGetWorkspaceSize(Y.t, X.t, WB.t, I.t, nullptr, 0, 1.0, 0, 16, O.t, &WS, &EX), 561002);
    NN(aclnnAddLoraGetWorkspaceSize(Y.t, X.t, WB.t, Big.t, nullptr, 0, 1.0, 0, 32, O.t, &WS, &EX));
    NN(aclnnAddLora(nullptr, 0, EX, S));
    expect_code("AddLora index 1 of 1 adapter", aclrtSynchronizeStream(S), ACL_ERROR_INTERNAL_ERROR);
    for (Dev *d : {&Y, &X, &WB, &I, &O, &F, &Big}) release(*d);
    printf("ok add lora\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    grouped();
    segsum();
    slice_fill();
    add_lora();
    masked_scale();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
