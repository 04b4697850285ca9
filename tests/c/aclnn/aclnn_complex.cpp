/* Complex tensors (ACL_COMPLEX64, ACL_COMPLEX128) through the aclnn operators that take them,
 * against values derived by hand: Mul (complex x complex, complex x real broadcast, a strided
 * complex view), Muls, InplaceMul, Add / Sub with alpha, Div, Neg, Abs (the real magnitude),
 * Exp, ReduceSum / Mean, Complex, Polar, Real, AngleV2 (complex and real x), InplaceCopy and Cast between real and complex, aclStft (frames of a
 * short signal, a window shorter than nFft centred in the frame, the real (re, im) output of
 * returnComplex false), and the documented argument errors (ACLNN_ERR_PARAM_NULLPTR /
 * ACLNN_ERR_PARAM_INVALID). Tolerance 1e-6 relative (float results computed in double). */
#include <cmath>
#include <complex>
#include "ops_ref.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_sub.h"
#include "aclnnop/aclnn_div.h"
#include "aclnnop/aclnn_neg.h"
#include "aclnnop/aclnn_abs.h"
#include "aclnnop/aclnn_exp.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_mean.h"
#include "aclnnop/aclnn_copy.h"
#include "aclnnop/aclnn_cast.h"
#include "aclnnop/acl_stft.h"
#include "aclnnop/aclnn_complex.h"
#include "aclnnop/aclnn_polar.h"
#include "aclnnop/aclnn_real.h"
#include "aclnnop/aclnn_angle_v2.h"

typedef std::complex<double> C;
static aclrtStream S;

/* A complex tensor of `shape` holding `v` in row-major order; `step` > 1 places the elements
 * `step` complex elements apart in a longer storage (a strided view). */
struct CT {
    aclTensor *t = nullptr;
    void *mem = nullptr;
    size_t bytes = 0;
    aclDataType dt = ACL_COMPLEX64;
    Shape shape, strides;
};

static CT cmake(const Shape &shape, const std::vector<C> &v, aclDataType dt = ACL_COMPLEX64, int64_t step = 1) {
    CT c;
    c.dt = dt;
    c.shape = shape;
    int64_t n = numel(shape);
    c.strides.assign(shape.size(), step);
    for (int i = static_cast<int>(shape.size()) - 2; i >= 0; i--) c.strides[i] = c.strides[i + 1] * shape[i + 1];
    int64_t storage = n * step;
    size_t es = dt == ACL_COMPLEX128 ? 16 : 8;
    c.bytes = static_cast<size_t>(storage > 0 ? storage : 1) * es;
    std::vector<uint8_t> host(c.bytes, 0xcd);
    for (int64_t i = 0; i < n; i++) {
        C x = v.empty() ? C(0, 0) : v[static_cast<size_t>(i) % v.size()];
        uint8_t *p = &host[static_cast<size_t>(i * step) * es];
        if (dt == ACL_COMPLEX128) {
            double d[2] = {x.real(), x.imag()};
            memcpy(p, d, 16);
        } else {
            float f[2] = {static_cast<float>(x.real()), static_cast<float>(x.imag())};
            memcpy(p, f, 8);
        }
    }
    CHECK(aclrtMalloc(&c.mem, c.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(c.mem, c.bytes, host.data(), c.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    Shape st{storage};
    c.t = aclCreateTensor(shape.data(), shape.size(), dt, c.strides.data(), 0, ACL_FORMAT_ND, st.data(), 1, c.mem);
    if (c.t == nullptr) {
        fprintf(stderr, "FAIL aclCreateTensor: %s\n", test_msg());
        exit(1);
    }
    return c;
}

static std::vector<C> cread(const CT &c) {
    std::vector<uint8_t> host(c.bytes);
    CHECK(aclrtMemcpy(host.data(), c.bytes, c.mem, c.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    size_t es = c.dt == ACL_COMPLEX128 ? 16 : 8;
    int64_t step = c.shape.empty() ? 1 : c.strides.back();
    std::vector<C> v(static_cast<size_t>(numel(c.shape)));
    for (size_t i = 0; i < v.size(); i++) {
        const uint8_t *p = &host[i * static_cast<size_t>(step) * es];
        if (c.dt == ACL_COMPLEX128) {
            double d[2];
            memcpy(d, p, 16);
            v[i] = C(d[0], d[1]);
        } else {
            float f[2];
            memcpy(f, p, 8);
            v[i] = C(f[0], f[1]);
        }
    }
    return v;
}

static void crelease(CT &c) {
    if (c.t) aclDestroyTensor(c.t);
    if (c.mem) aclrtFree(c.mem);
    c.t = nullptr;
    c.mem = nullptr;
}

static bool ccompare(const char *what, const std::vector<C> &got, const std::vector<C> &want) {
    g_checks++;
    if (got.size() != want.size()) {
        printf("FAIL %s: %zu values, expected %zu\n", what, got.size(), want.size());
        g_fail++;
        return false;
    }
    for (size_t i = 0; i < want.size(); i++) {
        if (std::abs(got[i] - want[i]) > 1e-6 * (1 + std::abs(want[i]))) {
            printf("FAIL %s: element %zu is %.9g%+.9gi, expected %.9g%+.9gi\n", what, i, got[i].real(),
                   got[i].imag(), want[i].real(), want[i].imag());
            g_fail++;
            return false;
        }
    }
    return true;
}

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else {
        printf("error %s: %s\n", what, test_msg());
    }
}

static const std::vector<C> A = {C(1, 2), C(3, 0), C(0, 1)};
static const std::vector<C> B = {C(3, -1), C(2, 2), C(0, 1)};

static void arithmetic() {
    float one = 1.0f, two = 2.0f;
    aclScalar *a1 = aclCreateScalar(&one, ACL_FLOAT);
    aclScalar *a2 = aclCreateScalar(&two, ACL_FLOAT);
    CT a = cmake({3}, A), b = cmake({3}, B), o = cmake({3}, {});
    /* (1+2i)(3-i) = 5+5i, 3(2+2i) = 6+6i, i*i = -1 */
    RUN(S, aclnnMul, a.t, b.t, o.t);
    ccompare("mul", cread(o), {C(5, 5), C(6, 6), C(-1, 0)});
    /* (5+5i)/(3-i) = 1+2i: Div gives back a */
    CT q = cmake({3}, {});
    RUN(S, aclnnDiv, o.t, b.t, q.t);
    ccompare("div", cread(q), A);
    /* a + 2b: 7+0i, 7+4i, 0+3i */
    RUN(S, aclnnAdd, a.t, b.t, a2, o.t);
    ccompare("add alpha 2", cread(o), {C(7, 0), C(7, 4), C(0, 3)});
    RUN(S, aclnnSub, a.t, b.t, a1, o.t);
    ccompare("sub", cread(o), {C(-2, 3), C(1, -2), C(0, 0)});
    RUN(S, aclnnMuls, a.t, a2, o.t);
    ccompare("muls 2", cread(o), {C(2, 4), C(6, 0), C(0, 2)});
    RUN(S, aclnnNeg, a.t, o.t);
    ccompare("neg", cread(o), {C(-1, -2), C(-3, 0), C(0, -1)});
    /* complex [2, 3] times real [3] broadcast: rows scale by 1, 2, -1 */
    CT m = cmake({2, 3}, {C(1, 2), C(3, 0), C(0, 1), C(1, 1), C(-2, 1), C(0.5, -4)});
    Dev r = make({3}, ACL_FLOAT, {1, 2, -1});
    CT mo = cmake({2, 3}, {});
    RUN(S, aclnnMul, m.t, r.t, mo.t);
    ccompare("mul complex x real broadcast", cread(mo),
             {C(1, 2), C(6, 0), C(0, -1), C(1, 1), C(-4, 2), C(-0.5, 4)});
    /* a strided complex view (every other element) times b, in place into the view */
    CT s = cmake({3}, A, ACL_COMPLEX64, 2);
    RUN(S, aclnnInplaceMul, s.t, b.t);
    ccompare("inplace mul strided", cread(s), {C(5, 5), C(6, 6), C(-1, 0)});
    /* COMPLEX128 with COMPLEX64: COMPLEX128 */
    CT w = cmake({3}, B, ACL_COMPLEX128), wo = cmake({3}, {}, ACL_COMPLEX128);
    RUN(S, aclnnMul, a.t, w.t, wo.t);
    ccompare("mul complex128", cread(wo), {C(5, 5), C(6, 6), C(-1, 0)});
    printf("ok arithmetic\n");

    /* errors */
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev fo = make({3}, ACL_FLOAT, {});
    expect_code("mul complex into a float out", aclnnMulGetWorkspaceSize(a.t, b.t, fo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("mul complex128 into complex64", aclnnMulGetWorkspaceSize(a.t, w.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("mul other nullptr", aclnnMulGetWorkspaceSize(a.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    CT o2 = cmake({2}, {});
    expect_code("add out shape", aclnnAddGetWorkspaceSize(a.t, b.t, a1, o2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    release(fo);
    crelease(o2);
    release(r);
    for (CT *c : {&a, &b, &o, &q, &m, &mo, &s, &w, &wo}) crelease(*c);
    aclDestroyScalar(a1);
    aclDestroyScalar(a2);
}

static void unary() {
    const double pi = 3.14159265358979323846;
    CT a = cmake({4}, {C(3, 4), C(0, -2), C(-1, 0), C(0, 0)});
    Dev m = make({4}, ACL_FLOAT, {});
    RUN(S, aclnnAbs, a.t, m.t);
    compare("abs magnitude", read(m), {5, 2, 1, 0}, 1e-7);
    CT e = cmake({2}, {C(0, pi), C(std::log(2.0), pi / 2)}), eo = cmake({2}, {});
    RUN(S, aclnnExp, e.t, eo.t);
    ccompare("exp", cread(eo), {C(-1, 0), C(0, 2)});
    /* errors: Abs of COMPLEX128 (the reference takes COMPLEX32 and COMPLEX64) and into a
     * complex out */
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    CT w = cmake({4}, {C(3, 4)}, ACL_COMPLEX128);
    Dev dm = make({4}, ACL_DOUBLE, {});
    expect_code("abs complex128", aclnnAbsGetWorkspaceSize(w.t, dm.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    CT co = cmake({4}, {});
    expect_code("abs into complex", aclnnAbsGetWorkspaceSize(a.t, co.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    printf("ok unary\n");
    release(m);
    release(dm);
    for (CT *c : {&a, &e, &eo, &w, &co}) crelease(*c);
}

static void reductions() {
    CT x = cmake({2, 2}, {C(1, 2), C(3, -1), C(2, 0), C(0, -1)});
    CT o = cmake({2}, {});
    int64_t d1[] = {1};
    aclIntArray *dims = aclCreateIntArray(d1, 1);
    RUN(S, aclnnReduceSum, x.t, dims, false, ACL_COMPLEX64, o.t);
    ccompare("reduce sum dim 1", cread(o), {C(4, 1), C(2, -1)});
    int64_t d01[] = {0, 1};
    aclIntArray *all = aclCreateIntArray(d01, 2);
    CT m = cmake({1, 1}, {});
    RUN(S, aclnnMean, x.t, all, true, ACL_COMPLEX64, m.t);
    ccompare("mean all keepdim", cread(m), {C(1.5, 0)});
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    expect_code("reduce sum out shape", aclnnReduceSumGetWorkspaceSize(x.t, dims, true, ACL_COMPLEX64, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    printf("ok reductions\n");
    aclDestroyIntArray(dims);
    aclDestroyIntArray(all);
    for (CT *c : {&x, &o, &m}) crelease(*c);
}

static void copies() {
    /* real -> complex: imaginary parts 0 (broadcasting a [2] source over [2, 2]) */
    Dev r = make({2}, ACL_FLOAT, {1.5, -2});
    CT c = cmake({2, 2}, {C(9, 9)});
    RUN(S, aclnnInplaceCopy, c.t, r.t);
    ccompare("copy real to complex", cread(c), {C(1.5, 0), C(-2, 0), C(1.5, 0), C(-2, 0)});
    /* complex -> real keeps the real part */
    CT a = cmake({3}, A);
    Dev f = make({3}, ACL_FLOAT, {});
    RUN(S, aclnnInplaceCopy, f.t, a.t);
    compare("copy complex to real", read(f), {1, 3, 0}, 0);
    /* Cast COMPLEX64 -> COMPLEX128 and FLOAT -> COMPLEX64 */
    CT w = cmake({3}, {}, ACL_COMPLEX128);
    RUN(S, aclnnCast, a.t, ACL_COMPLEX128, w.t);
    ccompare("cast complex64 to complex128", cread(w), A);
    CT c2 = cmake({2}, {});
    RUN(S, aclnnCast, r.t, ACL_COMPLEX64, c2.t);
    ccompare("cast float to complex64", cread(c2), {C(1.5, 0), C(-2, 0)});
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    expect_code("cast dtype differs from out", aclnnCastGetWorkspaceSize(a.t, ACL_COMPLEX64, w.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    printf("ok copies\n");
    release(r);
    release(f);
    for (CT *x : {&c, &a, &w, &c2}) crelease(*x);
}

static void construct() {
    const double pi = 3.14159265358979323846;
    /* Complex: real [2, 2] with imag [2] broadcast */
    Dev re = make({2, 2}, ACL_FLOAT, {1, -2, 0.5, 3});
    Dev im = make({2}, ACL_FLOAT, {4, -1});
    CT c = cmake({2, 2}, {});
    RUN(S, aclnnComplex, re.t, im.t, c.t);
    ccompare("complex", cread(c), {C(1, 4), C(-2, -1), C(0.5, 4), C(3, -1)});
    /* Polar: 2 at pi/2 is 2i, 1 at pi is -1, 3 at 0 is 3 */
    Dev ab = make({3}, ACL_FLOAT, {2, 1, 3});
    Dev an = make({3}, ACL_FLOAT, {pi / 2, pi, 0});
    CT p = cmake({3}, {});
    RUN(S, aclnnPolar, ab.t, an.t, p.t);
    ccompare("polar", cread(p), {C(0, 2), C(-1, 0), C(3, 0)});
    /* Real of a strided complex view */
    CT s = cmake({3}, A, ACL_COMPLEX64, 2);
    Dev r = make({3}, ACL_FLOAT, {});
    RUN(S, aclnnReal, s.t, r.t);
    compare("real", read(r), {1, 3, 0}, 0);
    /* AngleV2: atan2(im, re); of a real x: pi below 0, else 0 */
    CT ca = cmake({4}, {C(1, 1), C(-1, 0), C(0, -2), C(0, 0)});
    Dev ao = make({4}, ACL_FLOAT, {});
    RUN(S, aclnnAngleV2, ca.t, ao.t);
    compare("angle complex", read(ao), {pi / 4, pi, -pi / 2, 0}, 1e-6);
    Dev xr = make({3}, ACL_INT32, {-3, 0, 5});
    Dev aro = make({3}, ACL_FLOAT, {});
    RUN(S, aclnnAngleV2, xr.t, aro.t);
    compare("angle real", read(aro), {pi, 0, 0}, 1e-6);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev dre = make({2, 2}, ACL_DOUBLE, {});
    expect_code("complex real and imag dtypes differ", aclnnComplexGetWorkspaceSize(dre.t, im.t, c.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("complex out not complex", aclnnComplexGetWorkspaceSize(re.t, im.t, re.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("polar angle nullptr", aclnnPolarGetWorkspaceSize(ab.t, nullptr, p.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("angle out double", aclnnAngleV2GetWorkspaceSize(ca.t, dre.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    printf("ok construct\n");
    for (Dev *d : {&re, &im, &ab, &an, &r, &ao, &xr, &aro, &dre}) release(*d);
    for (CT *x : {&c, &p, &s, &ca}) crelease(*x);
}

static void stft() {
    /* frames [1 2 3 4], [3 4 5 6], [5 6 7 8] (nFft 4, hop 2). The DFT of [a b c d] is
     * X0 = a+b+c+d, X1 = (a-c) + (d-b)i, X2 = a-b+c-d. */
    Dev x = make({8}, ACL_FLOAT, {1, 2, 3, 4, 5, 6, 7, 8});
    CT o = cmake({3, 3}, {});
    RUN(S, aclStft, x.t, nullptr, o.t, 4, 2, 4, false, true, true);
    /* out[f][t] */
    ccompare("stft", cread(o),
             {C(10, 0), C(18, 0), C(26, 0), C(-2, 2), C(-2, 2), C(-2, 2), C(-2, 0), C(-2, 0), C(-2, 0)});
    /* a window [1, 1] of winLength 2 centred in nFft 4: frames [0 b c 0]:
     * X0 = b+c, X1 = -c - bi, X2 = c-b; as (re, im) floats, normalized by 1/sqrt(4) */
    Dev win = make({2}, ACL_FLOAT, {1, 1});
    Dev ro = make({3, 3, 2}, ACL_FLOAT, {});
    RUN(S, aclStft, x.t, win.t, ro.t, 4, 2, 2, true, true, false);
    std::vector<double> want;
    for (int f = 0; f < 3; f++) {
        for (int t = 0; t < 3; t++) {
            double b = 2 + 2 * t, c = 3 + 2 * t;
            C v = f == 0 ? C(b + c, 0) : f == 1 ? C(-c, -b) : C(c - b, 0);
            want.push_back(v.real() / 2);
            want.push_back(v.imag() / 2);
        }
    }
    compare("stft window normalized real out", read(ro), want, 1e-6);
    /* a batch of two signals, the second negated, two-sided */
    Dev xb = make({2, 4}, ACL_FLOAT, {1, 2, 3, 4, -1, -2, -3, -4});
    CT ob = cmake({2, 4, 1}, {});
    RUN(S, aclStft, xb.t, nullptr, ob.t, 4, 1, 4, false, false, true);
    ccompare("stft batch two-sided", cread(ob),
             {C(10, 0), C(-2, 2), C(-2, 0), C(-2, -2), C(-10, 0), C(2, -2), C(2, 0), C(2, 2)});
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    expect_code("stft nFft > length", aclStftGetWorkspaceSize(x.t, nullptr, o.t, 16, 2, 16, false, true, true, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("stft winLength > nFft", aclStftGetWorkspaceSize(x.t, nullptr, o.t, 4, 2, 5, false, true, true, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("stft out shape", aclStftGetWorkspaceSize(x.t, nullptr, ob.t, 4, 2, 4, false, true, true, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("stft self nullptr", aclStftGetWorkspaceSize(nullptr, nullptr, o.t, 4, 2, 4, false, true, true, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    printf("ok stft\n");
    release(x);
    release(win);
    release(ro);
    release(xb);
    crelease(o);
    crelease(ob);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    arithmetic();
    unary();
    reductions();
    copies();
    construct();
    stft();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
