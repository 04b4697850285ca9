/* The quantisation modes of aclnnQuantMatmulV5 (and V3/V4) beyond per-tensor/per-channel
 * INT8, against host references written from the documentation's formulas:
 * - G-B (pergroup-perblock, groupSize [1, 128, 128]): out = sum over k blocks of
 *   (x1 . x2) * x1Scale[m, b] * x2Scale[n / 128, b] + bias, BFLOAT16;
 * - A8W4 (INT8 x1, INT32 x2 holding eight int4 a word, low nibble first): per channel and
 *   K-G (groups of 256 along k): out = ((x1 @ (x2 * x2Scale)) + yOffset) * x1Scale;
 * - int4 x1 and x2 (INT32-packed) in the T-C and K-C modes, x2 plain and transposed;
 * - aclnnDynamicQuantV2 with groupIndexOptional (per-expert smoothScales [E, H], row r takes
 *   the first expert whose cumulative end exceeds r) and the int4 output (dstType 3, INT32
 *   words of eight), symmetric and asymmetric, computed in float as the page's formulas;
 * - aclnnConvertWeightToINT4Pack (INT32 one value a word -> INT32 eight a word), and its
 *   output feeding the A8W4 QuantMatmulV5;
 * and the documented argument errors (161001 ACLNN_ERR_PARAM_NULLPTR, 161002
 * ACLNN_ERR_PARAM_INVALID). References compute in double; tolerances are the output
 * type's rounding (bf16 1e-2, fp16 2e-3 relative). */
#include <algorithm>
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_quant_matmul_v4.h"
#include "aclnnop/aclnn_quant_matmul_v5.h"
#include "aclnnop/aclnn_dynamic_quant_v2.h"
#include "aclnnop/aclnn_convert_weight_to_int4_pack.h"

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

static uint32_t rng = 12345u;
static int rnd(int lo, int hi) { /* inclusive */
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return lo + static_cast<int>(rng % static_cast<uint32_t>(hi - lo + 1));
}

static std::vector<double> ints(int64_t n, int lo, int hi) {
    std::vector<double> v(static_cast<size_t>(n));
    for (auto &e : v) e = rnd(lo, hi);
    return v;
}

/* positive scales with few mantissa bits (exact through the 64-bit parameter's 19 bits) */
static std::vector<double> scales(int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (auto &e : v) e = rnd(1, 15) / 64.0;
    return v;
}

/* int4 values [rows, cols] (row-major) packed eight a word along cols */
static std::vector<double> pack4(const std::vector<double> &v, int64_t rows, int64_t cols) {
    std::vector<double> w(static_cast<size_t>(rows * cols / 8));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols / 8; c++) {
            uint32_t word = 0;
            for (int i = 0; i < 8; i++)
                word |= (static_cast<uint32_t>(static_cast<int32_t>(v[static_cast<size_t>(r * cols + c * 8 + i)])) & 0xF) << (4 * i);
            w[static_cast<size_t>(r * cols / 8 + c)] = static_cast<int32_t>(word);
        }
    return w;
}

/* the 64-bit quantisation parameter of a scale (aclnnTransQuantParamV2's layout) */
static double qparam(double s) {
    float f = static_cast<float>(s);
    uint32_t b;
    memcpy(&b, &f, 4);
    return static_cast<double>((static_cast<uint64_t>(b & 0xFFFFE000u)) | (1ull << 46));
}

static std::vector<double> transpose(const std::vector<double> &v, int64_t r, int64_t c) {
    std::vector<double> t(v.size());
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) t[static_cast<size_t>(j * r + i)] = v[static_cast<size_t>(i * c + j)];
    return t;
}

#define V5(x1, x2, s1, s2, ys, yo, b, t1, t2, gs, out) \
    aclnnQuantMatmulV5GetWorkspaceSize(x1, x2, s1, s2, ys, nullptr, nullptr, yo, b, t1, t2, gs, out, &ws, &ex)

/* ---- G-B ---- */
static void gb() {
    const int64_t m = 3, k = 512, n = 256, kb = 4, nb = 2;
    auto a = ints(m * k, -128, 127), w = ints(n * k, -128, 127); /* w is x2 as [n, k] */
    auto s1 = scales(m * kb), s2 = scales(nb * kb), bias = ints(n, -50, 50);
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t b = 0; b < kb; b++) {
                double dot = 0;
                for (int64_t p = b * 128; p < (b + 1) * 128; p++) dot += a[i * k + p] * w[j * k + p];
                acc += dot * s1[i * kb + b] * s2[(j / 128) * kb + b];
            }
            want[i * n + j] = acc + bias[j] / 4.0;
        }
    for (auto &b : bias) b /= 4.0;
    Dev x1 = make({m, k}, ACL_INT8, a), x2 = make({n, k}, ACL_INT8, w);
    Dev ps = make({m, kb}, ACL_FLOAT, s1), sc = make({nb, kb}, ACL_FLOAT, s2), bi = make({n}, ACL_FLOAT, bias);
    Dev out = make({m, n}, ACL_BF16, {});
    int64_t gs = (1ll << 32) | (128 << 16) | 128;
    RUN(S, aclnnQuantMatmulV5, x1.t, x2.t, ps.t, sc.t, nullptr, nullptr, nullptr, nullptr, bi.t, false, true, gs, out.t);
    compare("G-B x2 [n, k] transposeX2", read(out), want, 1e-2);
    /* groupSize 0: inferred from the scales */
    RUN(S, aclnnQuantMatmulV5, x1.t, x2.t, ps.t, sc.t, nullptr, nullptr, nullptr, nullptr, bi.t, false, true, 0, out.t);
    compare("G-B groupSize 0", read(out), want, 1e-2);
    /* torch_npu's form: x2 the [k, n] view of the [n, k] weight, its scale likewise */
    Dev x2t = make({k, n}, ACL_INT8, transpose(w, n, k), TRANSPOSED);
    Dev sct = make({kb, nb}, ACL_FLOAT, transpose(s2, nb, kb), TRANSPOSED);
    RUN(S, aclnnQuantMatmulV5, x1.t, x2t.t, ps.t, sct.t, nullptr, nullptr, nullptr, nullptr, bi.t, false, false, gs, out.t);
    compare("G-B x2 transposed view", read(out), want, 1e-2);
    /* no bias */
    for (int64_t i = 0; i < m * n; i++) want[i] -= bias[i % n];
    RUN(S, aclnnQuantMatmulV5, x1.t, x2.t, ps.t, sc.t, nullptr, nullptr, nullptr, nullptr, nullptr, false, true, gs, out.t);
    compare("G-B no bias", read(out), want, 1e-2);

    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    expect_code("G-B groupSize [1, 64, 128]",
                V5(x1.t, x2.t, ps.t, sc.t, nullptr, nullptr, bi.t, false, true, (1ll << 32) | (64 << 16) | 128, out.t),
                161002);
    Dev sbad = make({nb, kb + 1}, ACL_FLOAT, {1});
    expect_code("G-B x2Scale [2, 5]", V5(x1.t, x2.t, ps.t, sbad.t, nullptr, nullptr, bi.t, false, true, gs, out.t), 161002);
    Dev o16 = make({m, n}, ACL_FLOAT16, {});
    expect_code("G-B FLOAT16 out", V5(x1.t, x2.t, ps.t, sc.t, nullptr, nullptr, bi.t, false, true, gs, o16.t), 161002);
    Dev x1s = make({m, 256}, ACL_INT8, {1}), x2s = make({n, 256}, ACL_INT8, {1});
    Dev ps2 = make({m, 2}, ACL_FLOAT, {1}), sc2 = make({nb, 2}, ACL_FLOAT, {1});
    expect_code("G-B k 256 (not a multiple of 512)",
                V5(x1s.t, x2s.t, ps2.t, sc2.t, nullptr, nullptr, bi.t, false, true, gs, out.t), 161002);
    expect_code("G-B null x2Scale", V5(x1.t, x2.t, ps.t, nullptr, nullptr, nullptr, bi.t, false, true, gs, out.t), 161001);
    Dev ys = make({1, n}, ACL_INT64, {1});
    expect_code("yScale (T-CG, Ascend 950 only)", V5(x1.t, x2.t, ps.t, sc.t, ys.t, nullptr, bi.t, false, true, gs, out.t),
                161002);
    for (Dev *d : {&x1, &x2, &ps, &sc, &bi, &out, &x2t, &sct, &sbad, &o16, &x1s, &x2s, &ps2, &sc2, &ys}) release(*d);
    printf("ok gb\n");
}

/* ---- A8W4: INT8 x1, int4 x2 ---- */
static void a8w4() {
    const int64_t m = 3, k = 512, n = 16, g = 256;
    auto a = ints(m * k, -128, 127), w = ints(k * n, -8, 7);
    auto s1 = scales(m), yo = ints(n, -20, 20);
    for (auto &v : s1) v /= 16;
    for (int pass = 0; pass < 2; pass++) {
        bool grouped = pass == 0;
        int64_t groups = grouped ? k / g : 1;
        auto s2 = scales(groups * n);
        std::vector<double> q2(s2.size());
        for (size_t i = 0; i < s2.size(); i++) q2[i] = qparam(s2[i]);
        std::vector<double> want(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t p = 0; p < k; p++) acc += a[i * k + p] * w[p * n + j] * s2[(grouped ? p / g : 0) * n + j];
                want[i * n + j] = (acc + yo[j]) * s1[i];
            }
        Dev x1 = make({m, k}, ACL_INT8, a), x2 = make({k, n / 8}, ACL_INT32, pack4(w, k, n));
        Dev ps = make({m, 1}, ACL_FLOAT, s1), y = make({n}, ACL_FLOAT, yo);
        Dev sc = grouped ? make({groups, n}, ACL_INT64, q2) : make({n}, ACL_INT64, q2);
        int64_t gs = grouped ? 256 : 0;
        for (aclDataType ot : {ACL_FLOAT16, ACL_BF16}) {
            Dev out = make({m, n}, ot, {});
            RUN(S, aclnnQuantMatmulV5, x1.t, x2.t, ps.t, sc.t, nullptr, nullptr, nullptr, y.t, nullptr, false, false, gs,
                out.t);
            compare(grouped ? (ot == ACL_BF16 ? "K-G A8W4 bf16" : "K-G A8W4 fp16")
                            : (ot == ACL_BF16 ? "A8W4 per channel bf16" : "A8W4 per channel fp16"),
                    read(out), want, ot == ACL_BF16 ? 1e-2 : 2e-3);
            release(out);
        }
        if (grouped) {
            uint64_t ws = 0;
            aclOpExecutor *ex = nullptr;
            Dev out = make({m, n}, ACL_FLOAT16, {});
            expect_code("A8W4 without yOffset", V5(x1.t, x2.t, ps.t, sc.t, nullptr, nullptr, nullptr, false, false, 256, out.t),
                        161002);
            expect_code("K-G groupSize 128", V5(x1.t, x2.t, ps.t, sc.t, nullptr, y.t, nullptr, false, false, 128, out.t),
                        161002);
            expect_code("A8W4 without x1Scale", V5(x1.t, x2.t, nullptr, sc.t, nullptr, y.t, nullptr, false, false, 256, out.t),
                        161002);
            Dev o8 = make({m, n}, ACL_INT8, {});
            expect_code("A8W4 INT8 out", V5(x1.t, x2.t, ps.t, sc.t, nullptr, y.t, nullptr, false, false, 256, o8.t), 161002);
            Dev sf = make({groups, n}, ACL_FLOAT, {1});
            expect_code("A8W4 FLOAT x2Scale", V5(x1.t, x2.t, ps.t, sf.t, nullptr, y.t, nullptr, false, false, 256, out.t),
                        161002);
            Dev onbad = make({m, n + 8}, ACL_FLOAT16, {});
            expect_code("A8W4 out n 24 (x2 packs 16)", V5(x1.t, x2.t, ps.t, sc.t, nullptr, y.t, nullptr, false, false, 256, onbad.t),
                        161002);
            for (Dev *d : {&out, &o8, &sf, &onbad}) release(*d);
        }
        for (Dev *d : {&x1, &x2, &ps, &y, &sc}) release(*d);
    }
    printf("ok a8w4\n");
}

/* ---- int4 x1 and x2 (INT32-packed), T-C and K-C ---- */
static void int4() {
    const int64_t m = 4, k = 64, n = 24;
    auto a = ints(m * k, -8, 7), w = ints(k * n, -8, 7); /* w is [k, n] */
    std::vector<double> dot(static_cast<size_t>(m * n), 0);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t p = 0; p < k; p++) dot[i * n + j] += a[i * k + p] * w[p * n + j];
    Dev x1 = make({m, k / 8}, ACL_INT32, pack4(a, m, k));
    Dev x2 = make({k, n / 8}, ACL_INT32, pack4(w, k, n));
    Dev x2t = make({n, k / 8}, ACL_INT32, pack4(transpose(w, k, n), n, k)); /* [n, k] packed along k */
    /* torch_npu's form of the transposed weight: the [k / 8, n] view of [n, k / 8] */
    Dev x2v = make({k / 8, n}, ACL_INT32, transpose(pack4(transpose(w, k, n), n, k), n, k / 8), TRANSPOSED);
    /* T-C: UINT64 parameters, INT32 bias, FLOAT16 out: (x1 @ x2 + bias) * scale */
    auto s2 = scales(n), bias = ints(n, -30, 30);
    std::vector<double> q2(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; j++) q2[j] = qparam(s2[j]);
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m * n; i++) want[i] = (dot[i] + bias[i % n]) * s2[i % n];
    Dev sq = make({n}, ACL_INT64, q2), bi = make({n}, ACL_INT32, bias), out = make({m, n}, ACL_FLOAT16, {});
    RUN(S, aclnnQuantMatmulV5, x1.t, x2.t, nullptr, sq.t, nullptr, nullptr, nullptr, nullptr, bi.t, false, false, 0, out.t);
    compare("int4 T-C fp16", read(out), want, 2e-3);
    RUN(S, aclnnQuantMatmulV5, x1.t, x2t.t, nullptr, sq.t, nullptr, nullptr, nullptr, nullptr, bi.t, false, true, 0, out.t);
    compare("int4 T-C fp16, x2 [n, k / 8] transposeX2", read(out), want, 2e-3);
    RUN(S, aclnnQuantMatmulV5, x1.t, x2v.t, nullptr, sq.t, nullptr, nullptr, nullptr, nullptr, bi.t, false, false, 0, out.t);
    compare("int4 T-C fp16, x2 transposed view", read(out), want, 2e-3);
    RUN(S, aclnnQuantMatmulV4, x1.t, x2.t, sq.t, nullptr, nullptr, bi.t, false, false, out.t);
    compare("int4 T-C fp16 (V4)", read(out), want, 2e-3);
    /* K-C: FLOAT scales, per-token x1Scale, FLOAT bias, BFLOAT16 out: dot * s2 * s1 + bias */
    auto s1 = scales(m), fb = values(n, ACL_FLOAT, 3);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) want[i * n + j] = dot[i * n + j] * s2[j] * s1[i] + fb[j];
    Dev sf = make({n}, ACL_FLOAT, s2), ps = make({m}, ACL_FLOAT, s1), bf = make({n}, ACL_FLOAT, fb);
    Dev ob = make({m, n}, ACL_BF16, {});
    RUN(S, aclnnQuantMatmulV5, x1.t, x2.t, ps.t, sf.t, nullptr, nullptr, nullptr, nullptr, bf.t, false, false, 0, ob.t);
    compare("int4 K-C bf16", read(ob), want, 1e-2);

    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev o8 = make({m, n}, ACL_INT8, {});
    expect_code("int4 INT8 out", V5(x1.t, x2.t, nullptr, sq.t, nullptr, nullptr, nullptr, false, false, 0, o8.t), 161002);
    Dev x2i8 = make({k, n}, ACL_INT8, {1});
    expect_code("int4 x1 with INT8 x2", V5(x1.t, x2i8.t, nullptr, sq.t, nullptr, nullptr, nullptr, false, false, 0, out.t),
                161002);
    Dev x2bad = make({k + 8, n / 8}, ACL_INT32, {1});
    expect_code("int4 k mismatch (64 and 72)", V5(x1.t, x2bad.t, nullptr, sq.t, nullptr, nullptr, nullptr, false, false, 0, out.t),
                161002);
    expect_code("int4 groupSize without grouped scales",
                V5(x1.t, x2.t, nullptr, sq.t, nullptr, nullptr, nullptr, false, false, 256, out.t), 161002);
    expect_code("int4 null x1", V5(nullptr, x2.t, nullptr, sq.t, nullptr, nullptr, nullptr, false, false, 0, out.t), 161001);
    for (Dev *d : {&x1, &x2, &x2t, &x2v, &sq, &bi, &out, &sf, &ps, &bf, &ob, &o8, &x2i8, &x2bad}) release(*d);
    printf("ok int4\n");
}

/* ---- DynamicQuantV2: MoE groups, int4 output ---- */
static void dyn_quant() {
    const int64_t rows = 6, h = 32, E = 3;
    auto xv = values(rows * h, ACL_FLOAT16, 7);
    auto sv = values(E * h, ACL_FLOAT16, 8, true, true);
    std::vector<double> gv = {2, 2, 6}; /* expert 0: rows 0-1, expert 1: none, expert 2: rows 2-5 */
    for (int int4 = 0; int4 < 2; int4++)
        for (int asym = 0; asym < 2; asym++) {
            float qmax = int4 ? 7.f : 127.f, qmin = int4 ? -8.f : -128.f;
            std::vector<double> wy(static_cast<size_t>(rows * h)), ws_(static_cast<size_t>(rows)), wo(static_cast<size_t>(rows));
            for (int64_t r = 0; r < rows; r++) {
                int64_t e = 0;
                while (e < E - 1 && gv[static_cast<size_t>(e)] <= r) e++;
                std::vector<float> in(static_cast<size_t>(h));
                float mx = -INFINITY, mn = INFINITY, am = 0;
                for (int64_t c = 0; c < h; c++) {
                    in[c] = static_cast<float>(xv[r * h + c]) * static_cast<float>(sv[e * h + c]);
                    mx = std::max(mx, in[c]);
                    mn = std::min(mn, in[c]);
                    am = std::max(am, std::fabs(in[c]));
                }
                float sc = asym ? (mx - mn) / (qmax - qmin) : am / qmax;
                float off = asym ? qmax - mx / sc : 0.f;
                ws_[r] = sc;
                wo[r] = off;
                for (int64_t c = 0; c < h; c++) {
                    float q = in[c] / sc + off;
                    wy[r * h + c] = std::min(std::max(static_cast<double>(std::nearbyint(q)), static_cast<double>(qmin)), static_cast<double>(qmax));
                }
            }
            Dev x = make({rows, h}, ACL_FLOAT16, xv), sm = make({E, h}, ACL_FLOAT16, sv), g = make({E}, ACL_INT32, gv);
            Dev y = int4 ? make({rows, h / 8}, ACL_INT32, {}) : make({rows, h}, ACL_INT8, {});
            Dev sc = make({rows}, ACL_FLOAT, {}), of = make({rows}, ACL_FLOAT, {});
            RUN(S, aclnnDynamicQuantV2, x.t, sm.t, g.t, int4 ? 3 : 2, y.t, sc.t, asym ? of.t : nullptr);
            std::vector<double> got = read(y);
            if (int4) {
                std::vector<double> un;
                for (double w : got) {
                    uint32_t u = static_cast<uint32_t>(static_cast<int32_t>(w));
                    for (int i = 0; i < 8; i++) {
                        int q = (u >> (4 * i)) & 0xF;
                        un.push_back(q >= 8 ? q - 16 : q);
                    }
                }
                got = un;
            }
            const char *names[2][2] = {{"DynamicQuantV2 groups int8 symmetric y", "DynamicQuantV2 groups int8 asymmetric y"},
                                       {"DynamicQuantV2 groups int4 symmetric y", "DynamicQuantV2 groups int4 asymmetric y"}};
            compare(names[int4][asym], got, wy, 0);
            compare("DynamicQuantV2 groups scaleOut", read(sc), ws_, 1e-6);
            if (asym) compare("DynamicQuantV2 groups offsetOut", read(of), wo, 1e-5);
            for (Dev *d : {&x, &sm, &g, &y, &sc, &of}) release(*d);
        }

    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev x = make({rows, h}, ACL_FLOAT16, xv), sm = make({E, h}, ACL_FLOAT16, sv), g = make({E}, ACL_INT32, gv);
    Dev y8 = make({rows, h}, ACL_INT8, {}), y32 = make({rows, h / 8}, ACL_INT32, {}), sc = make({rows}, ACL_FLOAT, {});
    expect_code("DynamicQuantV2 groupIndex without smoothScales",
                aclnnDynamicQuantV2GetWorkspaceSize(x.t, nullptr, g.t, 2, y8.t, sc.t, nullptr, &ws, &ex), 161002);
    Dev sm1 = make({h}, ACL_FLOAT16, sv);
    expect_code("DynamicQuantV2 groupIndex with 1-D smoothScales",
                aclnnDynamicQuantV2GetWorkspaceSize(x.t, sm1.t, g.t, 2, y8.t, sc.t, nullptr, &ws, &ex), 161002);
    Dev g64 = make({E}, ACL_FLOAT, gv);
    expect_code("DynamicQuantV2 FLOAT groupIndex",
                aclnnDynamicQuantV2GetWorkspaceSize(x.t, sm.t, g64.t, 2, y8.t, sc.t, nullptr, &ws, &ex), 161002);
    expect_code("DynamicQuantV2 dstType 3 with INT8 y",
                aclnnDynamicQuantV2GetWorkspaceSize(x.t, sm.t, g.t, 3, y8.t, sc.t, nullptr, &ws, &ex), 161002);
    expect_code("DynamicQuantV2 dstType 2 with INT32 y",
                aclnnDynamicQuantV2GetWorkspaceSize(x.t, sm.t, g.t, 2, y32.t, sc.t, nullptr, &ws, &ex), 161002);
    Dev x12 = make({rows, 12}, ACL_FLOAT16, xv), y12 = make({rows, 1}, ACL_INT32, {});
    expect_code("DynamicQuantV2 int4 with h 12 (not divisible by 8)",
                aclnnDynamicQuantV2GetWorkspaceSize(x12.t, nullptr, nullptr, 3, y12.t, sc.t, nullptr, &ws, &ex), 161002);
    expect_code("DynamicQuantV2 null x",
                aclnnDynamicQuantV2GetWorkspaceSize(nullptr, sm.t, g.t, 2, y8.t, sc.t, nullptr, &ws, &ex), 161001);
    for (Dev *d : {&x, &sm, &g, &y8, &y32, &sc, &sm1, &g64, &x12, &y12}) release(*d);
    printf("ok dyn_quant\n");
}

/* ---- ConvertWeightToINT4Pack ---- */
static void convert_int4() {
    const int64_t m = 2, k = 256, n = 24;
    auto b = ints(k * n, -8, 7);
    Dev w = make({k, n}, ACL_INT32, b), p = make({k, n / 8}, ACL_INT32, {});
    RUN(S, aclnnConvertWeightToINT4Pack, w.t, p.t);
    compare("ConvertWeightToINT4Pack 2-D", read(p), pack4(b, k, n), 0);
    Dev w3 = make({2, 3, 16}, ACL_INT32, b), p3 = make({2, 3, 2}, ACL_INT32, {});
    RUN(S, aclnnConvertWeightToINT4Pack, w3.t, p3.t);
    compare("ConvertWeightToINT4Pack 3-D", read(p3), pack4(std::vector<double>(b.begin(), b.begin() + 96), 6, 16), 0);
    /* the packed weight in the A8W4 per-channel QuantMatmulV5 */
    auto a = ints(m * k, -128, 127), s2 = scales(n), yo = ints(n, -5, 5);
    std::vector<double> q2(static_cast<size_t>(n)), want(static_cast<size_t>(m * n));
    for (int64_t j = 0; j < n; j++) q2[j] = qparam(s2[j]);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t q = 0; q < k; q++) acc += a[i * k + q] * b[q * n + j];
            want[i * n + j] = (acc * s2[j] + yo[j]) * 0.5;
        }
    Dev x1 = make({m, k}, ACL_INT8, a), ps = make({m, 1}, ACL_FLOAT, {0.5}), sc = make({n}, ACL_INT64, q2);
    Dev y = make({n}, ACL_FLOAT, yo), out = make({m, n}, ACL_FLOAT16, {});
    RUN(S, aclnnQuantMatmulV5, x1.t, p.t, ps.t, sc.t, nullptr, nullptr, nullptr, y.t, nullptr, false, false, 0, out.t);
    compare("ConvertWeightToINT4Pack into A8W4 QuantMatmulV5", read(out), want, 2e-3);

    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev w12 = make({4, 12}, ACL_INT32, {1}), p12 = make({4, 1}, ACL_INT32, {});
    expect_code("ConvertWeightToINT4Pack last dimension 12",
                aclnnConvertWeightToINT4PackGetWorkspaceSize(w12.t, p12.t, &ws, &ex), 161002);
    Dev p8 = make({k, n / 8}, ACL_INT8, {});
    expect_code("ConvertWeightToINT4Pack INT8 output", aclnnConvertWeightToINT4PackGetWorkspaceSize(w.t, p8.t, &ws, &ex),
                161002);
    Dev pbad = make({k, n / 4}, ACL_INT32, {});
    expect_code("ConvertWeightToINT4Pack output [256, 6]",
                aclnnConvertWeightToINT4PackGetWorkspaceSize(w.t, pbad.t, &ws, &ex), 161002);
    Dev w1 = make({16}, ACL_INT32, {1}), p1 = make({2}, ACL_INT32, {});
    expect_code("ConvertWeightToINT4Pack 1-D weight", aclnnConvertWeightToINT4PackGetWorkspaceSize(w1.t, p1.t, &ws, &ex),
                161002);
    expect_code("ConvertWeightToINT4Pack null weight",
                aclnnConvertWeightToINT4PackGetWorkspaceSize(nullptr, p.t, &ws, &ex), 161001);
    for (Dev *d : {&w, &p, &w3, &p3, &x1, &ps, &sc, &y, &out, &w12, &p12, &p8, &pbad, &w1, &p1}) release(*d);
    printf("ok convert_int4\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    gb();
    a8w4();
    int4();
    dyn_quant();
    convert_int4();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
