/* The operators of CANN 8.5's ops-nn example programs npu-emu lacked (aclnn_nn85):
 * - BinaryCrossEntropyGradV2 (experimental): z = weight * grad * (logits - labels), reduction
 *   0 none (grad elementwise), 1 sum (grad[0]), 2 mean (grad[0] / n), FLOAT, FLOAT16, INT32
 *   and INT16, against a float64 host loop;
 * - GatherElementsV3 (experimental): torch.gather with INT32 indices over FLOAT, FLOAT16,
 *   BFLOAT16 and INT32, negative indices and a non-contiguous x;
 * - DequantBias: INT32 x times weightScale (FLOAT -> FLOAT16, BFLOAT16 -> BFLOAT16) and
 *   activateScale, INT32 bias before / float bias after the scales, float32 host loop;
 * - QuantizedBatchNorm: INT8, UINT8 and INT32 NCHW against a float32 host loop of the page's
 *   three steps (round half to even, saturated), with and without weight/bias;
 * - ExpandIntoJaggedPermute: CANN's example and a random jagged case against a host loop;
 * - MaskedSoftmaxWithRelPosBias: 4-D and 5-D x, 3/4/5-D mask and bias, no mask, FLOAT, FLOAT16,
 *   BFLOAT16 against a float64 softmax;
 * - FlatQuant: P1 @ x[k] @ P2 per slice (products rounded to x's type), per-slice INT4
 *   quantisation packed eight to an INT32 word, FLOAT16 and BFLOAT16, clipRatio 1 and 0.8;
 * - DynamicBlockQuant (the Atlas A2 form: INT8, one-row blocks): scales and values against a
 *   float32 host loop, with and without minScale, 2-D and 3-D;
 * - ApplyFusedEmaAdam: modes 0 and 1, with and without bias correction, FLOAT, FLOAT16,
 *   BFLOAT16, against a float64 loop of the page's formula;
 * - AdaLayerNormQuant: [B, S, H] and [B1, B2, S, H], scale/shift [B, H] and [B, 1, H], with and
 *   without weight, bias and smoothScales, against a float64 layer norm and the per-row
 *   INT8 quantisation (values allowed one step off at rounding ties);
 * - BatchMatmulQuant: FLOAT16 products (2-D and batched 3-D, transposes, bias) requantised
 *   to INT8 through aclnnTransQuantParam's parameters (one, or per column of the 16-aligned
 *   list), against a host loop;
 * - GroupedDynamicMxQuant and FusedMatmul: Ascend 950 only, refused with 161002 naming the
 *   platform;
 * - the argument errors (nullptr 161001, data type, shape and attribute 161002). */
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_binary_cross_entropy_grad_v2.h"
#include "aclnnop/aclnn_gather_elements_v3.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant.h"
#include "aclnnop/aclnn_dequant_bias.h"
#include "aclnnop/aclnn_batchmatmul_quant.h"
#include "aclnnop/aclnn_trans_quant_param.h"
#include "aclnnop/aclnn_ada_layer_norm_quant.h"
#include "aclnnop/aclnn_apply_fused_ema_adam.h"
#include "aclnnop/aclnn_flat_quant.h"
#include "aclnnop/aclnn_dynamic_block_quant.h"
#include "aclnnop/aclnn_masked_softmax_with_rel_pos_bias.h"
#include "aclnnop/aclnn_quantized_batch_norm.h"
#include "aclnnop/aclnn_expand_into_jagged_permute.h"
#include "aclnnop/aclnn_fused_matmul.h"

static aclrtStream S;
static uint64_t ws = 0;
static aclOpExecutor *ex = nullptr;

static void expect_code(const char *what, aclnnStatus got, int want, const char *needle = nullptr) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (needle != nullptr && strstr(test_msg(), needle) == nullptr) {
        printf("FAIL %s: message '%s' lacks '%s'\n", what, test_msg(), needle);
        g_fail++;
    } else {
        printf("error %s: %s\n", what, test_msg());
    }
}

static void section(const char *name, int fails_before) {
    if (g_fail == fails_before) printf("ok %s\n", name);
}

static void bce_grad_v2() {
    int f0 = g_fail;
    /* CANN's example: grad 0.1, logits 0.3, labels 0.5, weight 1 -> -0.02 */
    {
        Dev g = make({2, 2}, ACL_FLOAT, {0.1}), x = make({2, 2}, ACL_FLOAT, {0.3}), y = make({2, 2}, ACL_FLOAT, {0.5}),
            w = make({2, 2}, ACL_FLOAT, {1}), z = make({2, 2}, ACL_FLOAT, {0});
        RUN(S, aclnnBinaryCrossEntropyGradV2, g.t, x.t, y.t, w.t, 0, z.t);
        compare("bce_grad_v2 CANN example", read(z), std::vector<double>(4, (double)(float)(0.1f * (0.3f - 0.5f))),
                1e-6);
    }
    const aclDataType types[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT16};
    for (aclDataType dt : types) {
        for (int red = 0; red < 3; red++) {
            Shape sh = {3, 5, 4};
            int64_t n = numel(sh);
            Dev x = make(sh, dt, values(n, dt, 1)), y = make(sh, dt, values(n, dt, 2)),
                w = make(sh, dt, values(n, dt, 3, false, true));
            Shape gs = red == 0 ? sh : Shape{1};
            Dev g = make(gs, dt, red == 0 ? values(n, dt, 4) : std::vector<double>{is_float(dt) ? 2.5 : 40.0});
            Dev z = make(sh, dt, {0}, red == 1 ? TRANSPOSED : CONTIG);
            RUN(S, aclnnBinaryCrossEntropyGradV2, g.t, x.t, y.t, w.t, red, z.t);
            auto hx = read(x), hy = read(y), hw = read(w), hg = read(g);
            std::vector<double> want(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; i++) {
                double s = red == 0 ? hg[i] : hg[0];
                if (red == 2) s = is_float(dt) ? s / n : std::trunc(s / n);
                double v = hw[i] * s * (hx[i] - hy[i]);
                if (dt == ACL_INT16) v = static_cast<double>(static_cast<int16_t>(static_cast<int64_t>(v)));
                want[i] = as_type(v, dt);
            }
            char what[96];
            snprintf(what, sizeof what, "bce_grad_v2 %s reduction %d", dname(dt), red);
            compare(what, read(z), want, dt == ACL_FLOAT16 ? 1e-3 : is_float(dt) ? 1e-6 : 0);
        }
    }
    section("bce_grad_v2", f0);
}

static void gather_elements_v3() {
    int f0 = g_fail;
    /* CANN's example: x [4, 2] = 0..7, index {0,1,2,3,3,2,1,0}, dim 0 */
    {
        Dev x = make({4, 2}, ACL_FLOAT, {0, 1, 2, 3, 4, 5, 6, 7}), i = make({4, 2}, ACL_INT32, {0, 1, 2, 3, 3, 2, 1, 0}),
            y = make({4, 2}, ACL_FLOAT, {0});
        RUN(S, aclnnGatherElementsV3, x.t, i.t, 0, y.t);
        compare("gather_elements_v3 CANN example", read(y), {0, 3, 4, 7, 6, 5, 2, 1}, 0);
    }
    const aclDataType types[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32};
    for (aclDataType dt : types) {
        for (int64_t dim = -3; dim < 3; dim++) {
            Shape xs = {4, 5, 6};
            int d = static_cast<int>(dim < 0 ? dim + 3 : dim);
            Shape is = {3, 4, 5};
            is[d] = 7;
            int64_t n = numel(is);
            std::vector<double> idx(static_cast<size_t>(n));
            for (int64_t k = 0; k < n; k++) idx[k] = static_cast<double>((k * 7 + 3) % (2 * xs[d]) - xs[d]);
            Dev x = make(xs, dt, values(numel(xs), dt, 9), dim == 1 ? TRANSPOSED : CONTIG);
            Dev i = make(is, ACL_INT32, idx), y = make(is, dt, {0});
            RUN(S, aclnnGatherElementsV3, x.t, i.t, dim, y.t);
            auto hx = read(x);
            std::vector<double> want(static_cast<size_t>(n));
            for (int64_t k = 0; k < n; k++) {
                int64_t c[3] = {k / (is[1] * is[2]), (k / is[2]) % is[1], k % is[2]};
                int64_t t = static_cast<int64_t>(idx[k]);
                c[d] = t < 0 ? t + xs[d] : t;
                want[k] = hx[(c[0] * xs[1] + c[1]) * xs[2] + c[2]];
            }
            char what[96];
            snprintf(what, sizeof what, "gather_elements_v3 %s dim %ld", dname(dt), static_cast<long>(dim));
            compare(what, read(y), want, 0);
        }
    }
    section("gather_elements_v3", f0);
}

static double rnd_half_even(double v) { return std::nearbyint(v); }

static void dequant_bias() {
    int f0 = g_fail;
    const int64_t M = 7, N = 12;
    for (int wsbf = 0; wsbf < 2; wsbf++) {
        for (int bk = 0; bk < 4; bk++) { /* no bias, INT32, FLOAT, FLOAT16 (BFLOAT16 with a BF16 scale) */
            for (int has_act = 0; has_act < 2; has_act++) {
                aclDataType wdt = wsbf ? ACL_BF16 : ACL_FLOAT, odt = wsbf ? ACL_BF16 : ACL_FLOAT16;
                aclDataType bdt = bk == 1 ? ACL_INT32 : bk == 2 ? ACL_FLOAT : wsbf ? ACL_BF16 : ACL_FLOAT16;
                std::vector<double> xv(M * N), wv(N), av(M), bv(N);
                for (int64_t i = 0; i < M * N; i++) xv[i] = static_cast<double>((i * 7919) % 2001 - 1000);
                for (int64_t i = 0; i < N; i++) wv[i] = as_type(0.001 * (i + 1), wdt);
                for (int64_t i = 0; i < M; i++) av[i] = as_type(0.5 + 0.25 * i, ACL_FLOAT);
                for (int64_t i = 0; i < N; i++) bv[i] = as_type(bk == 1 ? (i * 37 % 101) - 50 : 0.3 * i - 1.7, bdt);
                Dev x = make({M, N}, ACL_INT32, xv), w = make({N}, wdt, wv), a = make({M}, ACL_FLOAT, av),
                    b = make({N}, bdt, bv), o = make({M, N}, odt, {0});
                RUN(S, aclnnDequantBias, x.t, w.t, has_act ? a.t : nullptr, bk ? b.t : nullptr, wsbf ? 27 : 1, o.t);
                std::vector<double> want(M * N);
                for (int64_t r = 0; r < M; r++)
                    for (int64_t c = 0; c < N; c++) {
                        double A = xv[r * N + c];
                        if (bk == 1) A += bv[c];
                        float v = static_cast<float>(A) * static_cast<float>(wv[c]);
                        if (has_act) v *= static_cast<float>(av[r]);
                        if (bk >= 2) v += static_cast<float>(bv[c]);
                        want[r * N + c] = as_type(v, odt);
                    }
                char what[96];
                snprintf(what, sizeof what, "dequant_bias %s bias %d act %d", dname(wdt), bk, has_act);
                compare(what, read(o), want, 0);
            }
        }
    }
    section("dequant_bias", f0);
}

static void quantized_batch_norm() {
    int f0 = g_fail;
    const aclDataType types[] = {ACL_INT8, ACL_UINT8, ACL_INT32};
    for (aclDataType dt : types) {
        for (int wb = 0; wb < 2; wb++) {
            Shape sh = {2, 3, 4, 5};
            int64_t n = numel(sh), C = 3, inner = 20;
            std::vector<double> xv(n);
            for (int64_t i = 0; i < n; i++)
                xv[i] = dt == ACL_UINT8 ? (i * 53) % 256 : dt == ACL_INT8 ? (i * 53) % 256 - 128 : (i * 977) % 20001 - 10000;
            std::vector<double> mv = {0.5, -1.25, 3.0}, vv = {2.0, 0.75, 9.5}, wv = {1.5, -0.5, 0.8}, bv = {0.25, 2.0, -3.0};
            Dev x = make(sh, dt, xv), m = make({C}, ACL_FLOAT, mv), v = make({C}, ACL_FLOAT, vv),
                w = make({C}, ACL_FLOAT, wv), b = make({C}, ACL_FLOAT, bv), o = make(sh, dt, {0});
            float is = dt == ACL_INT32 ? 0.01f : 0.05f, os = dt == ACL_INT32 ? 0.002f : 0.03f, eps = 1e-5f;
            int32_t izp = dt == ACL_UINT8 ? 128 : 3, ozp = dt == ACL_UINT8 ? 120 : -2;
            aclScalar *sis = aclCreateScalar(&is, ACL_FLOAT), *sos = aclCreateScalar(&os, ACL_FLOAT),
                      *sizp = aclCreateScalar(&izp, ACL_INT32), *sozp = aclCreateScalar(&ozp, ACL_INT32);
            RUN(S, aclnnQuantizedBatchNorm, x.t, m.t, v.t, sis, sizp, sos, sozp, wb ? w.t : nullptr, wb ? b.t : nullptr,
                eps, o.t);
            double lo = dt == ACL_INT8 ? -128 : dt == ACL_UINT8 ? 0 : -2147483648.0;
            double hi = dt == ACL_INT8 ? 127 : dt == ACL_UINT8 ? 255 : 2147483647.0;
            std::vector<double> want(n);
            for (int64_t i = 0; i < n; i++) {
                int64_t c = (i / inner) % C;
                float xp = static_cast<float>(xv[i] - izp) * is;
                float y = (xp - static_cast<float>(mv[c])) / std::sqrt(static_cast<float>(vv[c]) + eps) *
                              (wb ? static_cast<float>(wv[c]) : 1.0f) +
                          (wb ? static_cast<float>(bv[c]) : 0.0f);
                double q = rnd_half_even(static_cast<double>(y / os + static_cast<float>(ozp)));
                want[i] = std::min(hi, std::max(lo, q));
            }
            char what[96];
            snprintf(what, sizeof what, "quantized_batch_norm %s weight/bias %d", dname(dt), wb);
            compare(what, read(o), want, 0);
            aclDestroyScalar(sis);
            aclDestroyScalar(sos);
            aclDestroyScalar(sizp);
            aclDestroyScalar(sozp);
        }
    }
    section("quantized_batch_norm", f0);
}

static void expand_into_jagged_permute() {
    int f0 = g_fail;
    {
        Dev p = make({3}, ACL_INT32, {1, 0, 2}), io = make({4}, ACL_INT32, {0, 3, 5, 8}),
            oo = make({4}, ACL_INT32, {0, 2, 4, 6}), o = make({6}, ACL_INT32, {0});
        RUN(S, aclnnExpandIntoJaggedPermute, p.t, io.t, oo.t, 6, o.t);
        compare("expand_into_jagged_permute CANN example", read(o), {3, 4, 0, 1, 5, 6}, 0);
    }
    const int T = 9;
    std::vector<double> perm = {4, 2, 7, 0, 8, 1, 3, 6, 5}, in_len = {3, 0, 5, 2, 7, 1, 4, 6, 2};
    std::vector<double> io(T + 1, 0), oo(T + 1, 0);
    for (int i = 0; i < T; i++) io[i + 1] = io[i] + in_len[i];
    for (int i = 0; i < T; i++) oo[i + 1] = oo[i] + in_len[static_cast<size_t>(perm[i])];
    int64_t size = static_cast<int64_t>(oo[T]);
    Dev p = make({T}, ACL_INT32, perm), dio = make({T + 1}, ACL_INT32, io), doo = make({T + 1}, ACL_INT32, oo),
        o = make({size}, ACL_INT32, {-1});
    RUN(S, aclnnExpandIntoJaggedPermute, p.t, dio.t, doo.t, size, o.t);
    std::vector<double> want;
    for (int i = 0; i < T; i++)
        for (int64_t j = 0; j < oo[i + 1] - oo[i]; j++) want.push_back(io[static_cast<size_t>(perm[i])] + j);
    compare("expand_into_jagged_permute 9 tables", read(o), want, 0);
    section("expand_into_jagged_permute", f0);
}

static void masked_softmax_rel_pos_bias() {
    int f0 = g_fail;
    const aclDataType types[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (aclDataType dt : types) {
        for (int form = 0; form < 4; form++) { /* 5-D + 3-D mask, 4-D + 4-D mask, 5-D + 5-D mask, 4-D without */
            const int64_t B = 2, W = 3, N = 2, S1 = 4, S2 = 9;
            Shape xs = form % 2 == 0 ? Shape{B, W, N, S1, S2} : Shape{B * W, N, S1, S2};
            Shape ms = form == 0 ? Shape{W, S1, S2} : form == 1 ? Shape{W, 1, S1, S2} : Shape{1, W, 1, S1, S2};
            Shape bs = form == 0 ? Shape{N, S1, S2} : form == 1 ? Shape{1, N, S1, S2} : Shape{1, 1, N, S1, S2};
            int64_t n = numel(xs);
            Dev x = make(xs, dt, values(n, dt, 11)), m = make(ms, dt, values(W * S1 * S2, dt, 12)),
                b = make(bs, dt, values(N * S1 * S2, dt, 13)), o = make(xs, dt, {0});
            double scale = 0.37;
            bool hm = form != 3;
            RUN(S, aclnnMaskedSoftmaxWithRelPosBias, x.t, hm ? m.t : nullptr, b.t, scale, 0, o.t);
            auto hx = read(x), hmv = read(m), hb = read(b);
            int64_t Wm = hm ? W : 1;
            std::vector<double> want(n);
            for (int64_t row = 0; row < n / S2; row++) {
                int64_t i = row % S1, h = (row / S1) % N, w = (row / (S1 * N)) % Wm;
                double mx = -INFINITY, sum = 0;
                std::vector<double> t(S2);
                for (int64_t j = 0; j < S2; j++) {
                    t[j] = scale * hx[row * S2 + j] + hb[(h * S1 + i) * S2 + j] + (hm ? hmv[(w * S1 + i) * S2 + j] : 0);
                    mx = std::max(mx, t[j]);
                }
                for (auto &v : t) sum += v = std::exp(v - mx);
                for (int64_t j = 0; j < S2; j++) want[row * S2 + j] = t[j] / sum;
            }
            char what[96];
            snprintf(what, sizeof what, "masked_softmax_rel_pos_bias %s form %d", dname(dt), form);
            compare(what, read(o), want, dt == ACL_FLOAT ? 1e-6 : dt == ACL_FLOAT16 ? 1e-3 : 8e-3);
        }
    }
    section("masked_softmax_rel_pos_bias", f0);
}

static float round_dt(float v, aclDataType dt) { return static_cast<float>(as_type(v, dt)); }

static void flat_quant() {
    int f0 = g_fail;
    const aclDataType types[] = {ACL_FLOAT16, ACL_BF16};
    for (aclDataType dt : types) {
        for (double clip : {1.0, 0.8}) {
            const int64_t K = 3, M = 5, N = 16;
            Dev x = make({K, M, N}, dt, values(K * M * N, dt, 21)), p1 = make({M, M}, dt, values(M * M, dt, 22)),
                p2 = make({N, N}, dt, values(N * N, dt, 23)), o = make({K, M, N / 8}, ACL_INT32, {0}),
                qs = make({K}, ACL_FLOAT, {0});
            RUN(S, aclnnFlatQuant, x.t, p1.t, p2.t, clip, o.t, qs.t);
            auto hx = read(x), ha = read(p1), hb = read(p2);
            std::vector<double> wo, ws_;
            for (int64_t k = 0; k < K; k++) {
                std::vector<float> t1(M * N), t2(M * N);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double acc = 0;
                        for (int64_t l = 0; l < N; l++) acc += hx[(k * M + i) * N + l] * hb[l * N + j];
                        t1[i * N + j] = round_dt(static_cast<float>(acc), dt);
                    }
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double acc = 0;
                        for (int64_t l = 0; l < M; l++) acc += ha[i * M + l] * t1[l * N + j];
                        t2[i * N + j] = round_dt(static_cast<float>(acc), dt);
                    }
                float mx = 0;
                for (float v : t2) mx = std::max(mx, std::fabs(v));
                float c = static_cast<float>(clip);
                ws_.push_back(mx * c / 7.0f);
                float mult = mx != 0 ? (7.0f / c) / mx : 7.0f;
                for (int64_t w = 0; w < M * N / 8; w++) {
                    uint32_t word = 0;
                    for (int e = 0; e < 8; e++) {
                        double q = std::nearbyint(round_dt(t2[w * 8 + e] * mult, dt));
                        q = std::min(7.0, std::max(-8.0, q));
                        word |= (static_cast<uint32_t>(static_cast<int32_t>(q)) & 0xF) << (4 * e);
                    }
                    wo.push_back(static_cast<double>(static_cast<int32_t>(word)));
                }
            }
            char what[96];
            snprintf(what, sizeof what, "flat_quant %s clip %.1f out", dname(dt), clip);
            compare(what, read(o), wo, 0);
            snprintf(what, sizeof what, "flat_quant %s clip %.1f quantScale", dname(dt), clip);
            compare(what, read(qs), ws_, 1e-6);
        }
    }
    section("flat_quant", f0);
}

static void dynamic_block_quant() {
    int f0 = g_fail;
    /* CANN's example: x [4, 2] = 1..8 FLOAT16, colBlockSize 128 */
    {
        Dev x = make({4, 2}, ACL_FLOAT16, {1, 2, 3, 4, 5, 6, 7, 8}), y = make({4, 2}, ACL_INT8, {0}),
            sc = make({4, 1}, ACL_FLOAT, {0});
        char rint[] = "rint";
        RUN(S, aclnnDynamicBlockQuant, x.t, 0.0, rint, 2, 1, 128, y.t, sc.t);
        compare("dynamic_block_quant CANN example y", read(y), {64, 127, 95, 127, 106, 127, 111, 127}, 0);
        compare("dynamic_block_quant CANN example scale", read(sc), {2.0 / 127, 4.0 / 127, 6.0 / 127, 8.0 / 127}, 1e-6);
    }
    const aclDataType types[] = {ACL_FLOAT16, ACL_BF16};
    for (aclDataType dt : types) {
        for (int form = 0; form < 3; form++) {
            int64_t cb = form == 0 ? 64 : form == 1 ? 192 : 256;
            double min_scale = form == 1 ? 200.0 : 0.0;
            Shape xs = form == 2 ? Shape{2, 3, 300} : Shape{5, 300};
            int64_t n = numel(xs), N = 300, nb = (N + cb - 1) / cb, R = n / N;
            Shape ss = xs;
            ss.back() = nb;
            Dev x = make(xs, dt, values(n, dt, 31)), y = make(xs, ACL_INT8, {0}), sc = make(ss, ACL_FLOAT, {0});
            RUN(S, aclnnDynamicBlockQuant, x.t, min_scale, nullptr, 2, 1, cb, y.t, sc.t);
            auto hx = read(x);
            std::vector<double> wy(n), wsc;
            for (int64_t r = 0; r < R; r++)
                for (int64_t b = 0; b < nb; b++) {
                    int64_t s0 = r * N + b * cb, s1 = std::min(r * N + N, s0 + cb);
                    float mx = 0;
                    for (int64_t i = s0; i < s1; i++) mx = std::max(mx, std::fabs(static_cast<float>(hx[i])));
                    float s = mx * (1.0f / 127.0f), q = mx > 0 ? 1.0f / mx * 127.0f : 0.0f;
                    if (min_scale > 0) {
                        s = std::min(s, 1.0f / static_cast<float>(min_scale));
                        if (mx > 0) q = std::max(q, static_cast<float>(min_scale));
                    }
                    wsc.push_back(s);
                    for (int64_t i = s0; i < s1; i++)
                        wy[i] = std::min(127.0, std::max(-128.0, static_cast<double>(std::nearbyint(static_cast<float>(hx[i]) * q))));
                }
            char what[96];
            snprintf(what, sizeof what, "dynamic_block_quant %s form %d y", dname(dt), form);
            compare(what, read(y), wy, 0);
            snprintf(what, sizeof what, "dynamic_block_quant %s form %d scale", dname(dt), form);
            compare(what, read(sc), wsc, 0);
        }
    }
    section("dynamic_block_quant", f0);
}

static void fused_ema_adam() {
    int f0 = g_fail;
    const aclDataType types[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (aclDataType dt : types) {
        for (int mode = 0; mode < 2; mode++) {
            for (int bc = 0; bc < 2; bc++) {
                Shape sh = {6, 33};
                int64_t n = numel(sh);
                auto gv = values(n, dt, 41), wv = values(n, dt, 42), mv = values(n, dt, 43),
                     vv = values(n, dt, 44, false, true), sv = values(n, dt, 45);
                Dev g = make(sh, dt, gv), w = make(sh, dt, wv), m = make(sh, dt, mv), v = make(sh, dt, vv),
                    s = make(sh, dt, sv), st = make({1}, ACL_INT64, {7});
                double lr = 0.01, ed = 0.9, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.05;
                RUN(S, aclnnApplyFusedEmaAdam, g.t, w.t, m.t, v.t, s.t, st.t, lr, ed, b1, b2, eps, mode, bc != 0, wd);
                std::vector<double> ww(n), wm(n), wvv(n), ws2(n);
                double c1 = bc ? 1 - std::pow(b1, 7) : 1, c2 = bc ? 1 - std::pow(b2, 7) : 1;
                for (int64_t i = 0; i < n; i++) {
                    double gi = gv[i] + (mode == 0 ? wd * wv[i] : 0);
                    double mo = b1 * mv[i] + (1 - b1) * gi, vo = b2 * vv[i] + (1 - b2) * gi * gi;
                    double up = (mo / c1) / (std::sqrt(vo / c2) + eps) + (mode == 1 ? wd * wv[i] : 0);
                    double wo = wv[i] - lr * up;
                    ww[i] = wo;
                    wm[i] = mo;
                    wvv[i] = vo;
                    ws2[i] = ed * sv[i] + (1 - ed) * wo;
                }
                double tol = dt == ACL_FLOAT ? 1e-5 : dt == ACL_FLOAT16 ? 2e-3 : 1e-2;
                char what[96];
                snprintf(what, sizeof what, "fused_ema_adam %s mode %d bc %d var", dname(dt), mode, bc);
                compare(what, read(w), ww, tol);
                snprintf(what, sizeof what, "fused_ema_adam %s mode %d bc %d m", dname(dt), mode, bc);
                compare(what, read(m), wm, tol);
                snprintf(what, sizeof what, "fused_ema_adam %s mode %d bc %d v", dname(dt), mode, bc);
                compare(what, read(v), wvv, tol);
                snprintf(what, sizeof what, "fused_ema_adam %s mode %d bc %d s", dname(dt), mode, bc);
                compare(what, read(s), ws2, tol);
            }
        }
    }
    section("fused_ema_adam", f0);
}

static void ada_layer_norm_quant() {
    int f0 = g_fail;
    const aclDataType types[] = {ACL_FLOAT16, ACL_BF16};
    for (aclDataType dt : types) {
        for (int form = 0; form < 3; form++) {
            Shape xs = form == 2 ? Shape{2, 2, 3, 40} : Shape{2, 3, 40};
            int64_t nd = static_cast<int64_t>(xs.size()), H = 40, Sq = 3, n = numel(xs), R = n / H, Bn = R / Sq;
            Shape lead(xs.begin(), xs.end() - 2);
            Shape ms = lead;
            if (form == 1) ms.push_back(1);
            ms.push_back(H);
            Shape qsh(xs.begin(), xs.end() - 1);
            bool opt = form != 0;
            Dev x = make(xs, dt, values(n, dt, 51)), sc = make(ms, dt, values(Bn * H, dt, 52)),
                sh = make(ms, dt, values(Bn * H, dt, 53)), w = make({H}, dt, values(H, dt, 54)),
                b = make({H}, dt, values(H, dt, 55)), sm = make({H}, dt, values(H, dt, 56, false, true)),
                o = make(xs, ACL_INT8, {0}), qs = make(qsh, ACL_FLOAT, {0});
            double eps = 1e-5;
            RUN(S, aclnnAdaLayerNormQuant, x.t, sc.t, sh.t, opt ? w.t : nullptr, opt ? b.t : nullptr,
                opt ? sm.t : nullptr, eps, "dynamic", o.t, qs.t, nullptr);
            auto hx = read(x), hsc = read(sc), hsh = read(sh), hw = read(w), hb = read(b), hsm = read(sm);
            std::vector<double> wo(n), wq(R);
            for (int64_t r = 0; r < R; r++) {
                int64_t bi = r / Sq;
                double mean = 0, var = 0;
                for (int64_t j = 0; j < H; j++) mean += hx[r * H + j];
                mean /= H;
                for (int64_t j = 0; j < H; j++) var += (hx[r * H + j] - mean) * (hx[r * H + j] - mean);
                var /= H;
                std::vector<double> y(H);
                double mx = 0;
                for (int64_t j = 0; j < H; j++) {
                    double v = (hx[r * H + j] - mean) / std::sqrt(var + eps);
                    if (opt) v = v * hw[j] + hb[j];
                    v = v * (1 + hsc[bi * H + j]) + hsh[bi * H + j];
                    if (opt) v *= hsm[j];
                    y[j] = v;
                    mx = std::max(mx, std::fabs(v));
                }
                float s = static_cast<float>(mx / 127);
                wq[r] = s;
                for (int64_t j = 0; j < H; j++) wo[r * H + j] = std::nearbyint(y[j] / s);
            }
            (void)nd;
            char what[96];
            snprintf(what, sizeof what, "ada_layer_norm_quant %s form %d quantScale", dname(dt), form);
            compare(what, read(qs), wq, 1e-5);
            snprintf(what, sizeof what, "ada_layer_norm_quant %s form %d out", dname(dt), form);
            auto got = read(o);
            g_checks++;
            for (int64_t i = 0; i < n; i++)
                if (std::fabs(got[i] - wo[i]) > 1) {
                    printf("FAIL %s: element %ld is %g, expected %g\n", what, static_cast<long>(i), got[i], wo[i]);
                    g_fail++;
                    break;
                }
        }
    }
    section("ada_layer_norm_quant", f0);
}

/* A 1-D UINT64 tensor holding `v` (ops_ref.h's make() stores through double). */
static Dev make_u64(const std::vector<uint64_t> &v) {
    Dev d = make({static_cast<int64_t>(v.size())}, ACL_INT64, {0});
    CHECK(aclrtMemcpy(d.mem, d.bytes, v.data(), v.size() * 8, ACL_MEMCPY_HOST_TO_DEVICE));
    aclDestroyTensor(d.t);
    int64_t n = static_cast<int64_t>(v.size()), st = 1;
    d.t = aclCreateTensor(&n, 1, ACL_UINT64, &st, 0, ACL_FORMAT_ND, &n, 1, d.mem);
    d.dt = ACL_UINT64;
    return d;
}

static void batch_matmul_quant() {
    int f0 = g_fail;
    for (int form = 0; form < 4; form++) {
        bool t1 = form & 1, t2 = form & 2, per = form >= 2, hb = form != 1;
        const int64_t B = form == 3 ? 2 : 1, M = 5, K = 12, N = 20, N16 = 32;
        bool batched = form == 3;
        Shape s1 = t1 ? Shape{K, M} : Shape{M, K}, s2 = t2 ? Shape{N, K} : Shape{K, N}, so = {M, N};
        if (batched) {
            s1.insert(s1.begin(), B);
            s2.insert(s2.begin(), B);
            so.insert(so.begin(), B);
        }
        std::vector<double> v1(B * M * K), v2(B * K * N), vb(N);
        for (size_t i = 0; i < v1.size(); i++) v1[i] = static_cast<double>(static_cast<int>(i * 7 % 11) - 5) * 0.5;
        for (size_t i = 0; i < v2.size(); i++) v2[i] = static_cast<double>(static_cast<int>(i * 5 % 9) - 4) * 0.25;
        for (int64_t j = 0; j < N; j++) vb[j] = 0.5 * (j % 5) - 1;
        Dev x1 = make(s1, ACL_FLOAT16, v1), x2 = make(s2, ACL_FLOAT16, v2), b = make({N}, ACL_FLOAT16, vb),
            o = make(so, ACL_INT8, {0});
        int64_t np = per ? N16 : 1;
        std::vector<float> sc(np), of(np);
        for (int64_t j = 0; j < np; j++) {
            sc[j] = per ? (j % 3 == 0 ? 0.5f : j % 3 == 1 ? 2.0f : 0.125f) : 4.0f;
            of[j] = per ? static_cast<float>(j % 7 - 3) : 2.0f;
        }
        uint64_t *qp = nullptr, qn = 0;
        NN(aclnnTransQuantParam(sc.data(), np, of.data(), np, &qp, &qn));
        Dev q = make_u64(std::vector<uint64_t>(qp, qp + qn));
        delete[] qp;
        RUN(S, aclnnBatchMatmulQuant, x1.t, x2.t, q.t, hb ? b.t : nullptr, t1, t2, o.t);
        std::vector<double> want(B * M * N);
        for (int64_t bi = 0; bi < B; bi++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double acc = 0;
                    for (int64_t l = 0; l < K; l++) {
                        double a = t1 ? v1[(bi * K + l) * M + i] : v1[(bi * M + i) * K + l];
                        double c = t2 ? v2[(bi * N + j) * K + l] : v2[(bi * K + l) * N + j];
                        acc += a * c;
                    }
                    float f = static_cast<float>(acc) + (hb ? static_cast<float>(vb[j]) : 0.0f);
                    int64_t p = per ? j : 0;
                    double r = std::nearbyint(static_cast<double>(f * sc[p] + of[p]));
                    want[(bi * M + i) * N + j] = std::min(127.0, std::max(-128.0, r));
                }
        char what[96];
        snprintf(what, sizeof what, "batch_matmul_quant form %d", form);
        compare(what, read(o), want, 0);
    }
    section("batch_matmul_quant", f0);
}

static void ascend950_only() {
    int f0 = g_fail;
    Dev x = make({8, 64}, ACL_BF16, {1}), gi = make({1}, ACL_INT32, {8}), y = make({8, 64}, ACL_INT8, {0}),
        sc = make({1, 64, 2}, ACL_INT8, {0});
    expect_code("GroupedDynamicMxQuant on Atlas A2",
                aclnnGroupedDynamicMxQuantGetWorkspaceSize(x.t, gi.t, "rint", 36, 32, y.t, sc.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "Ascend 950");
    Dev a = make({4, 8}, ACL_FLOAT16, {1}), b = make({8, 4}, ACL_FLOAT16, {1}), o = make({4, 4}, ACL_FLOAT16, {0});
    expect_code("FusedMatmul on Atlas A2",
                aclnnFusedMatmulGetWorkspaceSize(a.t, b.t, nullptr, nullptr, "relu", 1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "Ascend 950");
    section("ascend950_only", f0);
}

static void errors() {
    int f0 = g_fail;
    Dev f = make({2, 3}, ACL_FLOAT, {0.5}), h = make({2, 3}, ACL_FLOAT16, {0.5}), f4 = make({2, 4}, ACL_FLOAT, {0.5}),
        d = make({2, 3}, ACL_DOUBLE, {0.5}), g0 = make({0}, ACL_FLOAT, {});
    expect_code("BinaryCrossEntropyGradV2 null grad",
                aclnnBinaryCrossEntropyGradV2GetWorkspaceSize(nullptr, f.t, f.t, f.t, 0, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "grad");
    expect_code("BinaryCrossEntropyGradV2 FLOAT16 labels with FLOAT logits",
                aclnnBinaryCrossEntropyGradV2GetWorkspaceSize(f.t, f.t, h.t, f.t, 0, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "labels");
    expect_code("BinaryCrossEntropyGradV2 DOUBLE",
                aclnnBinaryCrossEntropyGradV2GetWorkspaceSize(d.t, d.t, d.t, d.t, 0, d.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "aclnnBinaryCrossEntropyGradV2");
    expect_code("BinaryCrossEntropyGradV2 weight of another shape",
                aclnnBinaryCrossEntropyGradV2GetWorkspaceSize(f.t, f.t, f.t, f4.t, 0, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "weight");
    expect_code("BinaryCrossEntropyGradV2 reduction 3",
                aclnnBinaryCrossEntropyGradV2GetWorkspaceSize(f.t, f.t, f.t, f.t, 3, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "reduction");
    expect_code("BinaryCrossEntropyGradV2 empty grad with mean",
                aclnnBinaryCrossEntropyGradV2GetWorkspaceSize(g0.t, f.t, f.t, f.t, 2, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "grad");
    Dev i32 = make({2, 3}, ACL_INT32, {0}), i64 = make({2, 3}, ACL_INT64, {0}), i3 = make({2, 3, 1}, ACL_INT32, {0}),
        big = make({3, 3}, ACL_INT32, {0}), bad = make({2, 3}, ACL_INT32, {5});
    expect_code("GatherElementsV3 null index", aclnnGatherElementsV3GetWorkspaceSize(f.t, nullptr, 0, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "index");
    expect_code("GatherElementsV3 INT64 index", aclnnGatherElementsV3GetWorkspaceSize(f.t, i64.t, 0, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "index");
    expect_code("GatherElementsV3 DOUBLE x", aclnnGatherElementsV3GetWorkspaceSize(d.t, i32.t, 0, d.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "x");
    expect_code("GatherElementsV3 index of another rank",
                aclnnGatherElementsV3GetWorkspaceSize(f.t, i3.t, 0, f.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "index");
    expect_code("GatherElementsV3 dim 2 of a 2-d x", aclnnGatherElementsV3GetWorkspaceSize(f.t, i32.t, 2, f.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "dim");
    expect_code("GatherElementsV3 index larger outside dim",
                aclnnGatherElementsV3GetWorkspaceSize(f.t, big.t, 1, f.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "index");
    expect_code("GatherElementsV3 yOut of another type",
                aclnnGatherElementsV3GetWorkspaceSize(f.t, i32.t, 0, h.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID, "yOut");
    /* an index out of range fails the task, reported at synchronisation */
    {
        Dev y = make({2, 3}, ACL_FLOAT, {0});
        NN(aclnnGatherElementsV3GetWorkspaceSize(f.t, bad.t, 0, y.t, &ws, &ex));
        NN(aclnnGatherElementsV3(nullptr, ws, ex, S));
        expect_code("GatherElementsV3 index 5 of 2 at synchronisation", aclrtSynchronizeStream(S), ACL_ERROR_INTERNAL_ERROR,
                    "aclnnGatherElementsV3");
    }
    /* MaskedSoftmaxWithRelPosBias */
    Dev mx = make({1, 2, 2, 2, 8}, ACL_FLOAT, {0.5}), mm = make({2, 2, 8}, ACL_FLOAT, {0}),
        mb = make({2, 2, 8}, ACL_FLOAT, {0}), mb3 = make({3, 2, 8}, ACL_FLOAT, {0}),
        mbh = make({2, 2, 8}, ACL_FLOAT16, {0}), mo = make({1, 2, 2, 2, 8}, ACL_FLOAT, {0}),
        m3 = make({2, 2, 8}, ACL_FLOAT, {0});
    expect_code("MaskedSoftmaxWithRelPosBias null relativePosBias",
                aclnnMaskedSoftmaxWithRelPosBiasGetWorkspaceSize(mx.t, mm.t, nullptr, 1.0, 0, mo.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "relativePosBias");
    expect_code("MaskedSoftmaxWithRelPosBias FLOAT16 bias with FLOAT x",
                aclnnMaskedSoftmaxWithRelPosBiasGetWorkspaceSize(mx.t, mm.t, mbh.t, 1.0, 0, mo.t, &ws, &ex), 561002,
                "relativePosBias");
    expect_code("MaskedSoftmaxWithRelPosBias bias of 3 heads for 2",
                aclnnMaskedSoftmaxWithRelPosBiasGetWorkspaceSize(mx.t, mm.t, mb3.t, 1.0, 0, mo.t, &ws, &ex), 561002,
                "relativePosBias");
    expect_code("MaskedSoftmaxWithRelPosBias 3-D x",
                aclnnMaskedSoftmaxWithRelPosBiasGetWorkspaceSize(m3.t, mm.t, mb.t, 1.0, 0, m3.t, &ws, &ex), 561002, "x");
    /* FlatQuant */
    Dev fx = make({2, 4, 16}, ACL_FLOAT16, {1}), fp1 = make({4, 4}, ACL_FLOAT16, {1}), fp2 = make({16, 16}, ACL_FLOAT16, {1}),
        fp2b = make({16, 16}, ACL_BF16, {1}), fo = make({2, 4, 2}, ACL_INT32, {0}), fo3 = make({2, 4, 3}, ACL_INT32, {0}),
        fq = make({2}, ACL_FLOAT, {0}), fq3 = make({3}, ACL_FLOAT, {0});
    expect_code("FlatQuant null quantScale",
                aclnnFlatQuantGetWorkspaceSize(fx.t, fp1.t, fp2.t, 1.0, fo.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR,
                "quantScale");
    expect_code("FlatQuant BFLOAT16 kroneckerP2 with FLOAT16 x",
                aclnnFlatQuantGetWorkspaceSize(fx.t, fp1.t, fp2b.t, 1.0, fo.t, fq.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID,
                "kroneckerP2");
    expect_code("FlatQuant clipRatio 0", aclnnFlatQuantGetWorkspaceSize(fx.t, fp1.t, fp2.t, 0.0, fo.t, fq.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "clipRatio");
    expect_code("FlatQuant out [2, 4, 3]", aclnnFlatQuantGetWorkspaceSize(fx.t, fp1.t, fp2.t, 1.0, fo3.t, fq.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "out");
    expect_code("FlatQuant quantScale [3]", aclnnFlatQuantGetWorkspaceSize(fx.t, fp1.t, fp2.t, 1.0, fo.t, fq3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "quantScale");
    /* DynamicBlockQuant */
    Dev bx = make({4, 130}, ACL_FLOAT16, {1}), by = make({4, 130}, ACL_INT8, {0}), bs = make({4, 2}, ACL_FLOAT, {0}),
        bs1 = make({4, 1}, ACL_FLOAT, {0}), bxf = make({4, 130}, ACL_FLOAT, {1});
    char rnd[] = "round", rint[] = "rint";
    expect_code("DynamicBlockQuant null yOut",
                aclnnDynamicBlockQuantGetWorkspaceSize(bx.t, 0.0, rint, 2, 1, 128, nullptr, bs.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "yOut");
    expect_code("DynamicBlockQuant roundMode round on A2",
                aclnnDynamicBlockQuantGetWorkspaceSize(bx.t, 0.0, rnd, 2, 1, 128, by.t, bs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "roundMode");
    expect_code("DynamicBlockQuant dstType 36 on A2",
                aclnnDynamicBlockQuantGetWorkspaceSize(bx.t, 0.0, rint, 36, 1, 128, by.t, bs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "dstType");
    expect_code("DynamicBlockQuant rowBlockSize 128 on A2",
                aclnnDynamicBlockQuantGetWorkspaceSize(bx.t, 0.0, rint, 2, 128, 128, by.t, bs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "rowBlockSize");
    expect_code("DynamicBlockQuant colBlockSize 100",
                aclnnDynamicBlockQuantGetWorkspaceSize(bx.t, 0.0, rint, 2, 1, 100, by.t, bs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "colBlockSize");
    expect_code("DynamicBlockQuant scaleOut [4, 1] for 2 blocks",
                aclnnDynamicBlockQuantGetWorkspaceSize(bx.t, 0.0, rint, 2, 1, 128, by.t, bs1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "scaleOut");
    expect_code("DynamicBlockQuant FLOAT x",
                aclnnDynamicBlockQuantGetWorkspaceSize(bxf.t, 0.0, rint, 2, 1, 128, by.t, bs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "x");
    expect_code("DynamicBlockQuant minScale -1",
                aclnnDynamicBlockQuantGetWorkspaceSize(bx.t, -1.0, rint, 2, 1, 128, by.t, bs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "minScale");
    /* ApplyFusedEmaAdam */
    Dev eg = make({4}, ACL_FLOAT, {1}), eh = make({4}, ACL_FLOAT16, {1}), est = make({1}, ACL_INT64, {1}),
        est32 = make({1}, ACL_INT32, {1});
    expect_code("ApplyFusedEmaAdam null sRef",
                aclnnApplyFusedEmaAdamGetWorkspaceSize(eg.t, eg.t, eg.t, eg.t, nullptr, est.t, 0.1, 0.9, 0.9, 0.99, 1e-8,
                                                       0, true, 0.0, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "sRef");
    expect_code("ApplyFusedEmaAdam FLOAT16 mRef with FLOAT grad",
                aclnnApplyFusedEmaAdamGetWorkspaceSize(eg.t, eg.t, eh.t, eg.t, eg.t, est.t, 0.1, 0.9, 0.9, 0.99, 1e-8, 0,
                                                       true, 0.0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "mRef");
    expect_code("ApplyFusedEmaAdam INT32 step",
                aclnnApplyFusedEmaAdamGetWorkspaceSize(eg.t, eg.t, eg.t, eg.t, eg.t, est32.t, 0.1, 0.9, 0.9, 0.99, 1e-8,
                                                       0, true, 0.0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "step");
    /* AdaLayerNormQuant */
    Dev ax = make({2, 3, 8}, ACL_FLOAT16, {1}), asc = make({2, 8}, ACL_FLOAT16, {0}), asc3 = make({3, 8}, ACL_FLOAT16, {0}),
        ao = make({2, 3, 8}, ACL_INT8, {0}), aq = make({2, 3}, ACL_FLOAT, {0}), aq2 = make({2, 3, 1}, ACL_FLOAT, {0}),
        aoff = make({2, 3}, ACL_FLOAT16, {0});
    expect_code("AdaLayerNormQuant null shift",
                aclnnAdaLayerNormQuantGetWorkspaceSize(ax.t, asc.t, nullptr, nullptr, nullptr, nullptr, 1e-5, "dynamic",
                                                       ao.t, aq.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "shift");
    expect_code("AdaLayerNormQuant quantMode static",
                aclnnAdaLayerNormQuantGetWorkspaceSize(ax.t, asc.t, asc.t, nullptr, nullptr, nullptr, 1e-5, "static",
                                                       ao.t, aq.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "quantMode");
    expect_code("AdaLayerNormQuant quantOffsetOptional given",
                aclnnAdaLayerNormQuantGetWorkspaceSize(ax.t, asc.t, asc.t, nullptr, nullptr, nullptr, 1e-5, "dynamic",
                                                       ao.t, aq.t, aoff.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "quantOffsetOptional");
    expect_code("AdaLayerNormQuant scale of 3 batches for 2",
                aclnnAdaLayerNormQuantGetWorkspaceSize(ax.t, asc3.t, asc.t, nullptr, nullptr, nullptr, 1e-5, "dynamic",
                                                       ao.t, aq.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "scale");
    expect_code("AdaLayerNormQuant quantScale [2, 3, 1]",
                aclnnAdaLayerNormQuantGetWorkspaceSize(ax.t, asc.t, asc.t, nullptr, nullptr, nullptr, 1e-5, "dynamic",
                                                       ao.t, aq2.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "quantScale");
    /* BatchMatmulQuant */
    Dev mx1 = make({2, 4}, ACL_FLOAT16, {1}), mx2 = make({4, 2}, ACL_FLOAT16, {1}), mq2 = make_u64({0, 0}),
        mq1 = make_u64({0}), mqo = make({2, 2}, ACL_INT8, {0}), mx2k = make({3, 2}, ACL_FLOAT16, {1}),
        mof = make({2, 2}, ACL_FLOAT16, {0});
    expect_code("BatchMatmulQuant null quantParam",
                aclnnBatchMatmulQuantGetWorkspaceSize(mx1.t, mx2.t, nullptr, nullptr, false, false, mqo.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "quantParam");
    expect_code("BatchMatmulQuant quantParam of 2 for N 2",
                aclnnBatchMatmulQuantGetWorkspaceSize(mx1.t, mx2.t, mq2.t, nullptr, false, false, mqo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "quantParam");
    expect_code("BatchMatmulQuant K 4 against 3",
                aclnnBatchMatmulQuantGetWorkspaceSize(mx1.t, mx2k.t, mq1.t, nullptr, false, false, mqo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "k-axis");
    expect_code("BatchMatmulQuant FLOAT16 out",
                aclnnBatchMatmulQuantGetWorkspaceSize(mx1.t, mx2.t, mq1.t, nullptr, false, false, mof.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "out");
    /* DequantBias */
    Dev x32 = make({4, 6}, ACL_INT32, {1}), wsf = make({6}, ACL_FLOAT, {1}), ws5 = make({5}, ACL_FLOAT, {1}),
        o16 = make({4, 6}, ACL_FLOAT16, {0}), obf = make({4, 6}, ACL_BF16, {0}), a4 = make({4}, ACL_FLOAT, {1}),
        a4h = make({4}, ACL_FLOAT16, {1}), xf = make({4, 6}, ACL_FLOAT, {1}), xbig = make({25001, 1}, ACL_INT32, {1}),
        wbig = make({1}, ACL_FLOAT, {1}), obig = make({25001, 1}, ACL_FLOAT16, {0});
    expect_code("DequantBias null weightScale",
                aclnnDequantBiasGetWorkspaceSize(x32.t, nullptr, nullptr, nullptr, 1, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "weightScale");
    expect_code("DequantBias FLOAT x", aclnnDequantBiasGetWorkspaceSize(xf.t, wsf.t, nullptr, nullptr, 1, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "x");
    expect_code("DequantBias outputDtype 27 with a FLOAT weightScale",
                aclnnDequantBiasGetWorkspaceSize(x32.t, wsf.t, nullptr, nullptr, 27, obf.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "outputDtype");
    expect_code("DequantBias weightScale [5] for N 6",
                aclnnDequantBiasGetWorkspaceSize(x32.t, ws5.t, nullptr, nullptr, 1, o16.t, &ws, &ex), 561002,
                "weightScale");
    expect_code("DequantBias FLOAT16 activateScale",
                aclnnDequantBiasGetWorkspaceSize(x32.t, wsf.t, a4h.t, nullptr, 1, o16.t, &ws, &ex), 561002,
                "activateScaleOptional");
    expect_code("DequantBias M 25001",
                aclnnDequantBiasGetWorkspaceSize(xbig.t, wbig.t, nullptr, nullptr, 1, obig.t, &ws, &ex), 561002, "25000");
    /* QuantizedBatchNorm */
    Dev q8 = make({1, 2, 2, 2}, ACL_INT8, {1}), q8o = make({1, 2, 2, 2}, ACL_INT8, {0}),
        q32o = make({1, 2, 2, 2}, ACL_INT32, {0}), c2 = make({2}, ACL_FLOAT, {1}), c3 = make({3}, ACL_FLOAT, {1}),
        q3 = make({2, 2, 2}, ACL_INT8, {1});
    float one = 1.0f;
    int32_t zero = 0, z300 = 300;
    aclScalar *sf = aclCreateScalar(&one, ACL_FLOAT), *si = aclCreateScalar(&zero, ACL_INT32),
              *s300 = aclCreateScalar(&z300, ACL_INT32);
    expect_code("QuantizedBatchNorm null outputScale",
                aclnnQuantizedBatchNormGetWorkspaceSize(q8.t, c2.t, c2.t, sf, si, nullptr, si, nullptr, nullptr, 1e-5f,
                                                        q8o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "outputScale");
    expect_code("QuantizedBatchNorm INT32 output for INT8 input",
                aclnnQuantizedBatchNormGetWorkspaceSize(q8.t, c2.t, c2.t, sf, si, sf, si, nullptr, nullptr, 1e-5f,
                                                        q32o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "output");
    expect_code("QuantizedBatchNorm mean [3] for C 2",
                aclnnQuantizedBatchNormGetWorkspaceSize(q8.t, c3.t, c2.t, sf, si, sf, si, nullptr, nullptr, 1e-5f,
                                                        q8o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "mean");
    expect_code("QuantizedBatchNorm 3-D input",
                aclnnQuantizedBatchNormGetWorkspaceSize(q3.t, c2.t, c2.t, sf, si, sf, si, nullptr, nullptr, 1e-5f, q3.t,
                                                        &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "input");
    expect_code("QuantizedBatchNorm inputZeroPoint 300 for INT8",
                aclnnQuantizedBatchNormGetWorkspaceSize(q8.t, c2.t, c2.t, sf, s300, sf, si, nullptr, nullptr, 1e-5f,
                                                        q8o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "inputZeroPoint");
    expect_code("QuantizedBatchNorm FLOAT inputZeroPoint",
                aclnnQuantizedBatchNormGetWorkspaceSize(q8.t, c2.t, c2.t, sf, sf, sf, si, nullptr, nullptr, 1e-5f,
                                                        q8o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "inputZeroPoint");
    aclDestroyScalar(sf);
    aclDestroyScalar(si);
    aclDestroyScalar(s300);
    /* ExpandIntoJaggedPermute */
    Dev jp = make({3}, ACL_INT32, {1, 0, 2}), jio = make({4}, ACL_INT32, {0, 3, 5, 8}),
        joo = make({4}, ACL_INT32, {0, 2, 4, 6}), jo = make({6}, ACL_INT32, {0}), jo5 = make({5}, ACL_INT32, {0}),
        jio3 = make({3}, ACL_INT32, {0, 3, 5}), jp64 = make({3}, ACL_INT64, {1, 0, 2}),
        jbad = make({4}, ACL_INT32, {0, 2, 4, 9});
    expect_code("ExpandIntoJaggedPermute null permute",
                aclnnExpandIntoJaggedPermuteGetWorkspaceSize(nullptr, jio.t, joo.t, 6, jo.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR, "permute");
    expect_code("ExpandIntoJaggedPermute INT64 permute",
                aclnnExpandIntoJaggedPermuteGetWorkspaceSize(jp64.t, jio.t, joo.t, 6, jo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID, "permute");
    expect_code("ExpandIntoJaggedPermute inputOffset of 3 for 3 tables",
                aclnnExpandIntoJaggedPermuteGetWorkspaceSize(jp.t, jio3.t, joo.t, 6, jo.t, &ws, &ex), 561002,
                "inputOffset");
    expect_code("ExpandIntoJaggedPermute outputSize 6 with a 5-element output",
                aclnnExpandIntoJaggedPermuteGetWorkspaceSize(jp.t, jio.t, joo.t, 6, jo5.t, &ws, &ex), 561002,
                "outputSize");
    {
        NN(aclnnExpandIntoJaggedPermuteGetWorkspaceSize(jp.t, jio.t, jbad.t, 6, jo.t, &ws, &ex));
        NN(aclnnExpandIntoJaggedPermute(nullptr, ws, ex, S));
        expect_code("ExpandIntoJaggedPermute outputOffset past the output at synchronisation",
                    aclrtSynchronizeStream(S), ACL_ERROR_INTERNAL_ERROR, "outputOffset");
    }
    section("errors", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    bce_grad_v2();
    gather_elements_v3();
    masked_softmax_rel_pos_bias();
    batch_matmul_quant();
    ada_layer_norm_quant();
    fused_ema_adam();
    flat_quant();
    dynamic_block_quant();
    dequant_bias();
    quantized_batch_norm();
    expand_into_jagged_permute();
    ascend950_only();
    errors();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
