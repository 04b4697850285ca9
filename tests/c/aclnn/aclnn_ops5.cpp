/* Advanced indexing (what torch_npu runs for boolean masks, integer-array indexing, index_put
 * and flip) against a host reference: Nonzero / NonzeroV2 (the out tensor's view shape after
 * the task), Index (a dimension taken whole, broadcast index tensors, non-adjacent indexed
 * dimensions, negative indices), IndexPutImpl (replace and accumulate with repeated indices,
 * broadcast values), Flip (several dims, a transposed input); and their argument errors.
 * Every result is data movement (or a sum of two small integers): compared exactly.
 * Also the unary functions added with them: Erfc, Asinh, Acosh, Atanh (against float32 libm
 * to 1e-6 relative: the emulator's formulas for asinh/acosh/atanh are not libm's and may
 * differ by a few ulp; fp16 in place to one fp16 rounding), Erfinv (against erf: erf(erfinv(x)) within 2 float32 ulp of x, and
 * float32-rounded against a double Newton-refined reference to 1e-6 relative), NanToNum (exact). */
#include <algorithm>
#include "ops_ref.h"
#include "aclnnop/aclnn_nonzero.h"
#include "aclnnop/aclnn_nonzero_v2.h"
#include "aclnnop/aclnn_index.h"
#include "aclnnop/aclnn_index_put_impl.h"
#include "aclnnop/aclnn_flip.h"
#include "aclnnop/aclnn_erfc.h"
#include "aclnnop/aclnn_erfinv.h"
#include "aclnnop/aclnn_asinh.h"
#include "aclnnop/aclnn_acosh.h"
#include "aclnnop/aclnn_atanh.h"
#include "aclnnop/aclnn_nan_to_num.h"

static aclrtStream S;

static Shape coords(const Shape &shape, int64_t i) {
    Shape c(shape.size());
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; k--) {
        c[static_cast<size_t>(k)] = i % shape[static_cast<size_t>(k)];
        i /= shape[static_cast<size_t>(k)];
    }
    return c;
}

static int64_t flat(const Shape &shape, const Shape &c) {
    int64_t i = 0;
    for (size_t k = 0; k < shape.size(); k++) i = i * shape[k] + c[k];
    return i;
}

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    }
}

static void expect_shape(const char *what, aclTensor *t, const Shape &want) {
    int64_t *dims = nullptr;
    uint64_t nd = 0;
    CHECK(aclGetViewShape(t, &dims, &nd));
    g_checks++;
    if (Shape(dims, dims + nd) != want) {
        printf("FAIL %s: view shape has %lu dims, expected %zu\n", what, static_cast<unsigned long>(nd), want.size());
        g_fail++;
    }
    delete[] dims;
}

/* A tensor list over index tensors; the list owns (and destroys) the tensors. */
static aclTensorList *list_of(std::vector<Dev *> ds) {
    std::vector<aclTensor *> ts;
    for (Dev *d : ds) ts.push_back(d->t);
    return aclCreateTensorList(ts.data(), ts.size());
}

static void drop_list(aclTensorList *l, std::vector<Dev *> ds) {
    aclDestroyTensorList(l);
    for (Dev *d : ds) {
        d->t = nullptr;
        release(*d);
    }
}

static void nonzeros() {
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64, ACL_BOOL, ACL_UINT8, ACL_DOUBLE}) {
        for (Layout l : {CONTIG, TRANSPOSED}) {
            for (const Shape &sh : {Shape{4, 5}, Shape{2, 3, 4}, Shape{7, 2}}) {
                int64_t n = numel(sh), nd = static_cast<int64_t>(sh.size());
                std::vector<double> A(static_cast<size_t>(n));
                for (int64_t i = 0; i < n; i++) A[static_cast<size_t>(i)] = (i * 7 + 3) % 3 == 0 ? 0 : (i % 5) + 1;
                std::vector<double> want;  // [count, nd]
                for (int64_t i = 0; i < n; i++)
                    if (A[static_cast<size_t>(i)] != 0)
                        for (int64_t c : coords(sh, i)) want.push_back(static_cast<double>(c));
                int64_t k = static_cast<int64_t>(want.size()) / nd;
                for (int v2 = 0; v2 < 2; v2++) {
                    Dev a = make(sh, dt, A, l);
                    Dev o = make(v2 ? Shape{nd, n} : Shape{n, nd}, ACL_INT64, {-1});
                    if (v2) RUN(S, aclnnNonzeroV2, a.t, o.t);
                    else RUN(S, aclnnNonzero, a.t, o.t);
                    char what[96];
                    snprintf(what, sizeof what, "Nonzero%s %s %s %ld-D", v2 ? "V2" : "", dname(dt), lname(l), static_cast<long>(nd));
                    expect_shape(what, o.t, v2 ? Shape{nd, k} : Shape{k, nd});
                    /* the data is contiguous in the new shape: the first count * nd elements of storage */
                    std::vector<double> host(static_cast<size_t>(n * nd));
                    std::vector<int64_t> raw(static_cast<size_t>(n * nd));
                    CHECK(aclrtMemcpy(raw.data(), raw.size() * 8, o.mem, raw.size() * 8, ACL_MEMCPY_DEVICE_TO_HOST));
                    std::vector<double> got;
                    for (int64_t i = 0; i < k * nd; i++) got.push_back(static_cast<double>(raw[static_cast<size_t>(i)]));
                    std::vector<double> w = want;
                    if (v2)
                        for (int64_t r = 0; r < k; r++)
                            for (int64_t d = 0; d < nd; d++) w[static_cast<size_t>(d * k + r)] = want[static_cast<size_t>(r * nd + d)];
                    compare(what, got, w, 0);
                    release(a);
                    release(o);
                }
            }
        }
    }
    /* nothing nonzero: [0, nd] */
    Dev z = make({3, 2}, ACL_FLOAT, {0}), o = make({6, 2}, ACL_INT64, {5});
    RUN(S, aclnnNonzero, z.t, o.t);
    expect_shape("Nonzero all zero", o.t, {0, 2});
    release(z);
    release(o);
    printf("ok nonzero\n");
}

/* x[i0, i1, ...] on the host: idx[d] empty = the whole dimension. */
static std::vector<double> index_ref(const Shape &xs, const std::vector<double> &X, const std::vector<std::vector<int64_t>> &idx,
                                     const Shape &bshape, Shape *out_shape) {
    std::vector<size_t> defined;
    for (size_t d = 0; d < idx.size(); d++)
        if (!idx[d].empty()) defined.push_back(d);
    bool adjacent = true;
    for (size_t k = 1; k < defined.size(); k++) adjacent = adjacent && defined[k] == defined[k - 1] + 1;
    size_t bstart = adjacent ? defined[0] : 0;
    Shape os;
    if (adjacent) {
        os.assign(xs.begin(), xs.begin() + static_cast<long>(defined[0]));
        os.insert(os.end(), bshape.begin(), bshape.end());
        os.insert(os.end(), xs.begin() + static_cast<long>(defined.back() + 1), xs.end());
    } else {
        os = bshape;
        for (size_t d = 0; d < xs.size(); d++)
            if (std::find(defined.begin(), defined.end(), d) == defined.end()) os.push_back(xs[d]);
    }
    *out_shape = os;
    std::vector<double> out;
    for (int64_t r = 0; r < numel(os); r++) {
        Shape c = coords(os, r);
        Shape bc(c.begin() + static_cast<long>(bstart), c.begin() + static_cast<long>(bstart + bshape.size()));
        int64_t bi = flat(bshape, bc);
        Shape rest;
        for (size_t k = 0; k < c.size(); k++)
            if (k < bstart || k >= bstart + bshape.size()) rest.push_back(c[k]);
        Shape xc;
        size_t ri = 0;
        for (size_t d = 0; d < xs.size(); d++) {
            if (d < idx.size() && !idx[d].empty()) {
                /* each index vector is given already broadcast to bshape */
                int64_t t = idx[d][static_cast<size_t>(bi)];
                xc.push_back(t < 0 ? t + xs[d] : t);
            } else {
                xc.push_back(rest[ri++]);
            }
        }
        out.push_back(X[static_cast<size_t>(flat(xs, xc))]);
    }
    return out;
}

static void indexes() {
    struct Case {
        Shape xs;
        std::vector<Shape> ishapes;               /* empty shape = placeholder */
        std::vector<std::vector<int64_t>> ivals;  /* values of each index tensor */
        Shape bshape;
        std::vector<std::vector<int64_t>> ibroad; /* the same, broadcast to bshape */
    };
    std::vector<Case> cases = {
        /* x[idx] */
        {{5, 4}, {{3}}, {{4, 0, -2}}, {3}, {{4, 0, -2}}},
        /* x[:, idx] */
        {{5, 4}, {{}, {3}}, {{}, {1, 3, 1}}, {3}, {{}, {1, 3, 1}}},
        /* x[i0, i1] with i0 [2,1] and i1 [3] broadcast to [2,3] */
        {{5, 4}, {{2, 1}, {3}}, {{1, 4}, {0, 3, -1}}, {2, 3}, {{1, 1, 1, 4, 4, 4}, {0, 3, -1, 0, 3, -1}}},
        /* x[i, :, j]: the indexed dimensions are not adjacent, B goes first */
        {{3, 4, 5}, {{2}, {}, {2}}, {{2, 0}, {}, {4, 1}}, {2}, {{2, 0}, {}, {4, 1}}},
        /* x[:, i, j] on 3-D: adjacent, in place */
        {{3, 4, 5}, {{}, {2}, {2}}, {{}, {3, 0}, {0, -1}}, {2}, {{}, {3, 0}, {0, -1}}},
    };
    for (aclDataType dt : {ACL_FLOAT, ACL_INT64, ACL_FLOAT16, ACL_BOOL}) {
        for (aclDataType it : {ACL_INT64, ACL_INT32}) {
            for (size_t ci = 0; ci < cases.size(); ci++) {
                const Case &c = cases[ci];
                auto X = values(numel(c.xs), dt, 5 + static_cast<unsigned>(ci));
                Dev x = make(c.xs, dt, X, c.xs.size() == 2 ? TRANSPOSED : CONTIG);
                std::vector<Dev> ids(c.ishapes.size());
                std::vector<Dev *> ptrs;
                for (size_t k = 0; k < c.ishapes.size(); k++) {
                    if (c.ishapes[k].empty()) {
                        ids[k] = make({0}, dt, {});  /* torch_npu's placeholder: empty, self's dtype */
                    } else {
                        std::vector<double> v(c.ivals[k].begin(), c.ivals[k].end());
                        ids[k] = make(c.ishapes[k], it, v);
                    }
                    ptrs.push_back(&ids[k]);
                }
                Shape os;
                auto want = index_ref(c.xs, X, c.ibroad, c.bshape, &os);
                aclTensorList *list = list_of(ptrs);
                Dev o = make(os, dt, {0});
                RUN(S, aclnnIndex, x.t, list, o.t);
                char what[96];
                snprintf(what, sizeof what, "Index %s indices %s case %zu", dname(dt), dname(it), ci);
                compare(what, read(o), want, 0);
                release(o);
                /* IndexPutImpl: x[idx] = values (a [1]-broadcast and a full tensor), and += */
                if (dt != ACL_BOOL) {
                    for (int acc = 0; acc < 2; acc++) {
                        auto V = values(numel(os), dt, 40 + static_cast<unsigned>(ci), true);
                        Dev y = make(c.xs, dt, X), v = make(os, dt, V);
                        RUN(S, aclnnIndexPutImpl, y.t, list, v.t, acc != 0, false);
                        std::vector<double> ref = X;
                        for (int64_t r = 0; r < numel(os); r++) {
                            /* the element of x that result position r names */
                            Shape rc = coords(os, r);
                            std::vector<double> pos(static_cast<size_t>(numel(c.xs)));
                            for (size_t q = 0; q < pos.size(); q++) pos[q] = static_cast<double>(q);
                            Shape tmp;
                            auto at = index_ref(c.xs, pos, c.ibroad, c.bshape, &tmp);
                            size_t xi = static_cast<size_t>(at[static_cast<size_t>(r)]);
                            double val = V[static_cast<size_t>(r)];
                            ref[xi] = acc ? as_type(ref[xi] + val, dt) : val;
                            (void)rc;
                        }
                        snprintf(what, sizeof what, "IndexPutImpl %s acc %d case %zu", dname(dt), acc, ci);
                        compare(what, read(y), ref, 0);
                        release(y);
                        release(v);
                    }
                }
                drop_list(list, ptrs);
                release(x);
            }
        }
    }
    /* accumulate with a repeated index and a broadcast value: x[[1, 1, 3]] += 2 */
    {
        Dev x = make({5}, ACL_FLOAT, {0, 0, 0, 0, 0}), i = make({3}, ACL_INT64, {1, 1, 3}), v = make({1}, ACL_FLOAT, {2});
        aclTensorList *list = list_of({&i});
        RUN(S, aclnnIndexPutImpl, x.t, list, v.t, true, false);
        compare("IndexPutImpl repeated index accumulates", read(x), {0, 4, 0, 2, 0}, 0);
        drop_list(list, {&i});
        release(x);
        release(v);
    }
    printf("ok index\n");
}

static void flips() {
    for (aclDataType dt : {ACL_FLOAT, ACL_INT32, ACL_BF16, ACL_BOOL}) {
        for (Layout l : {CONTIG, TRANSPOSED}) {
            Shape sh{3, 4, 2};
            auto A = values(numel(sh), dt, 9);
            for (const std::vector<int64_t> &dims : {std::vector<int64_t>{0}, {-1}, {0, 2}, {1, 0, 2}, {}}) {
                Dev a = make(sh, dt, A, l), o = make(sh, dt, {0});
                aclIntArray *ds = aclCreateIntArray(dims.data(), dims.size());
                RUN(S, aclnnFlip, a.t, ds, o.t);
                std::vector<double> want(A.size());
                for (int64_t i = 0; i < numel(sh); i++) {
                    Shape c = coords(sh, i);
                    for (int64_t d : dims) {
                        size_t k = static_cast<size_t>(d < 0 ? d + 3 : d);
                        c[k] = sh[k] - 1 - c[k];
                    }
                    want[static_cast<size_t>(i)] = A[static_cast<size_t>(flat(sh, c))];
                }
                char what[96];
                snprintf(what, sizeof what, "Flip %s %s %zu dims", dname(dt), lname(l), dims.size());
                compare(what, read(o), want, 0);
                aclDestroyIntArray(ds);
                release(a);
                release(o);
            }
        }
    }
    printf("ok flip\n");
}

static void errors() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev x = make({3, 4}, ACL_FLOAT, {1}), o64 = make({12, 2}, ACL_INT64, {0}), of = make({12, 2}, ACL_FLOAT, {0});
    Dev small = make({3, 2}, ACL_INT64, {0});
    expect_code("Nonzero null self", aclnnNonzeroGetWorkspaceSize(nullptr, o64.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Nonzero null out", aclnnNonzeroGetWorkspaceSize(x.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Nonzero float out", aclnnNonzeroGetWorkspaceSize(x.t, of.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("NonzeroV2 out without 2 coordinate rows", aclnnNonzeroV2GetWorkspaceSize(x.t, small.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    {
        /* CANN's own example sizes out for the nonzeros it expects ([2, 7] for 7 of 8): that
           works; 12 nonzeros in the same out fail the task, naming the room */
        Dev x7 = make({4, 2}, ACL_FLOAT, {0, 1, 2, 3, 4, 5, 6, 7}), o7 = make({2, 7}, ACL_INT64, {0});
        RUN(S, aclnnNonzeroV2, x7.t, o7.t);
        expect_shape("NonzeroV2 into an out sized for the 7 nonzeros", o7.t, {2, 7});
        Dev o7b = make({2, 7}, ACL_INT64, {0});
        NN(aclnnNonzeroV2GetWorkspaceSize(x.t, o7b.t, &ws, &ex));
        NN(aclnnNonzeroV2(nullptr, 0, ex, S));
        aclError e = aclrtSynchronizeStream(S);
        const char *m0 = aclGetRecentErrMsg();
        std::string m = m0 ? m0 : "";
        printf("synchronize after a NonzeroV2 whose coordinates do not fit: %d: %s\n", static_cast<int>(e), m.c_str());
        g_checks++;
        if (e == ACL_SUCCESS || m.find("12 nonzero elements of 2 coordinates do not fit in out (14 elements)") == std::string::npos) g_fail++;
        for (Dev *d : {&x7, &o7, &o7b}) release(*d);
    }
    Dev i = make({2}, ACL_INT64, {0, 1}), m = make({3}, ACL_BOOL, {1, 0, 1}), oi = make({2, 4}, ACL_INT32, {0});
    Dev ok = make({2, 4}, ACL_FLOAT, {0}), bad_shape = make({4, 2}, ACL_FLOAT, {0});
    aclTensorList *li = list_of({&i});
    expect_code("Index null indices", aclnnIndexGetWorkspaceSize(x.t, nullptr, ok.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Index out dtype", aclnnIndexGetWorkspaceSize(x.t, li, oi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Index out shape", aclnnIndexGetWorkspaceSize(x.t, li, bad_shape.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev vi = make({4}, ACL_INT32, {1}), v3 = make({3}, ACL_FLOAT, {1});
    expect_code("IndexPutImpl values dtype", aclnnIndexPutImplGetWorkspaceSize(x.t, li, vi.t, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexPutImpl values shape", aclnnIndexPutImplGetWorkspaceSize(x.t, li, v3.t, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclTensorList *lm = list_of({&m});
    expect_code("Index bool mask", aclnnIndexGetWorkspaceSize(x.t, lm, ok.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    int64_t dup[2] = {1, -1};
    aclIntArray *dd = aclCreateIntArray(dup, 2);
    Dev fo = make({3, 4}, ACL_FLOAT, {0});
    expect_code("Flip repeated dim", aclnnFlipGetWorkspaceSize(x.t, dd, fo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    int64_t far[1] = {2};
    aclIntArray *df = aclCreateIntArray(far, 1);
    expect_code("Flip dim out of range", aclnnFlipGetWorkspaceSize(x.t, df, fo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(dd);
    aclDestroyIntArray(df);
    drop_list(li, {&i});
    drop_list(lm, {&m});
    for (Dev *d : {&x, &o64, &of, &small, &oi, &ok, &bad_shape, &vi, &v3, &fo}) release(*d);
    /* an index out of range fails the task: the stream reports it at synchronisation */
    {
        Dev y = make({3}, ACL_FLOAT, {1, 2, 3}), j = make({1}, ACL_INT64, {3}), out = make({1}, ACL_FLOAT, {0});
        aclTensorList *lj = list_of({&j});
        CHECK(aclnnIndexGetWorkspaceSize(y.t, lj, out.t, &ws, &ex));
        CHECK(aclnnIndex(nullptr, ws, ex, S));
        g_checks++;
        if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
            printf("FAIL Index out of range: the stream synchronised without an error\n");
            g_fail++;
        } else {
            printf("out of range: %s\n", aclGetRecentErrMsg());
        }
        drop_list(lj, {&j});
        release(y);
        release(out);
    }
    printf("ok errors\n");
}

static void unaries() {
    std::vector<double> X{-0.93, -0.5, -0.1, 0.0, 0.2, 0.61, 0.97};
    std::vector<double> P{1.0, 1.5, 2.25, 7.0, 30.0};
    struct U {
        const char *name;
        aclnnStatus (*get)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
        aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream);
        float (*ref)(float);
        bool positive;
    };
    U us[] = {
        {"Erfc", aclnnErfcGetWorkspaceSize, aclnnErfc, erfcf, false},
        {"Asinh", aclnnAsinhGetWorkspaceSize, aclnnAsinh, asinhf, false},
        {"Acosh", aclnnAcoshGetWorkspaceSize, aclnnAcosh, acoshf, true},
        {"Atanh", aclnnAtanhGetWorkspaceSize, aclnnAtanh, atanhf, false},
    };
    for (const U &u : us) {
        const std::vector<double> &in = u.positive ? P : X;
        for (Layout l : {CONTIG, STRIDED}) {
            Shape sh{static_cast<int64_t>(in.size())};
            Dev a = make(sh, ACL_FLOAT, in, l), o = make(sh, ACL_FLOAT, {0});
            uint64_t ws = 0;
            aclOpExecutor *ex = nullptr;
            NN(u.get(a.t, o.t, &ws, &ex));
            NN(u.run(nullptr, ws, ex, S));
            CHECK(aclrtSynchronizeStream(S));
            std::vector<double> want;
            for (double v : in) want.push_back(u.ref(static_cast<float>(v)));
            char what[64];
            snprintf(what, sizeof what, "%s %s", u.name, lname(l));
            compare(what, read(o), want, 1e-6);
            release(a);
            release(o);
        }
    }
    /* in place, fp16 */
    {
        Dev a = make({3}, ACL_FLOAT16, {0.5, -0.25, 2.0});
        RUN(S, aclnnInplaceAsinh, a.t);
        compare("InplaceAsinh fp16", read(a), {as_type(asinhf(0.5f), ACL_FLOAT16), as_type(asinhf(-0.25f), ACL_FLOAT16),
                                               as_type(asinhf(2.0f), ACL_FLOAT16)}, 1e-3);
        release(a);
    }
    /* erfinv: erf(y) ~ x, and y against a double reference */
    {
        std::vector<double> in{-0.999, -0.9, -0.3, 0.0, 0.05, 0.5, 0.8, 0.99};
        Dev a = make({static_cast<int64_t>(in.size())}, ACL_FLOAT, in), o = make({static_cast<int64_t>(in.size())}, ACL_FLOAT, {0});
        RUN(S, aclnnErfinv, a.t, o.t);
        auto got = read(o);
        std::vector<double> want;
        for (double x : in) {
            double xf = static_cast<float>(x), y = 0;
            for (int k = 0; k < 60; k++) y -= (erf(y) - xf) / (2 / sqrt(M_PI) * exp(-y * y));
            want.push_back(y);
        }
        compare("Erfinv", got, want, 1e-6);
        Dev e = make({4}, ACL_FLOAT, {1, -1, 1.5, 0}), eo = make({4}, ACL_FLOAT, {0});
        RUN(S, aclnnErfinv, e.t, eo.t);
        auto g = read(eo);
        g_checks++;
        if (!(std::isinf(g[0]) && g[0] > 0 && std::isinf(g[1]) && g[1] < 0 && std::isnan(g[2]) && g[3] == 0)) {
            printf("FAIL Erfinv edges: %g %g %g %g\n", g[0], g[1], g[2], g[3]);
            g_fail++;
        }
        Dev ip = make({2}, ACL_FLOAT, {0.5, -0.5});
        RUN(S, aclnnInplaceErfinv, ip.t);
        auto gi = read(ip);
        compare("InplaceErfinv", gi, {want[5], -want[5]}, 1e-6);
        for (Dev *d : {&a, &o, &e, &eo, &ip}) release(*d);
    }
    /* nan_to_num */
    {
        double inf = INFINITY;
        Dev a = make({5}, ACL_FLOAT, {NAN, inf, -inf, 2.5, -0.0}), o = make({5}, ACL_FLOAT, {7});
        RUN(S, aclnnNanToNum, a.t, 0.5f, 9.0f, -9.0f, o.t);
        compare("NanToNum", read(o), {0.5, 9, -9, 2.5, 0}, 0);
        RUN(S, aclnnInplaceNanToNum, a.t, 1.0f, 2.0f, 3.0f);
        compare("InplaceNanToNum", read(a), {1, 2, 3, 2.5, 0}, 0);
        Dev i = make({3}, ACL_INT32, {4, -5, 6}), io = make({3}, ACL_INT32, {0});
        RUN(S, aclnnNanToNum, i.t, 0.0f, 1.0f, -1.0f, io.t);
        compare("NanToNum int32", read(io), {4, -5, 6}, 0);
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        Dev d = make({2}, ACL_DOUBLE, {1, 2}), od = make({2}, ACL_DOUBLE, {0});
        expect_code("NanToNum DOUBLE", aclnnNanToNumGetWorkspaceSize(d.t, 0, 0, 0, od.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("Erfinv null self", aclnnErfinvGetWorkspaceSize(nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        Dev s3 = make({3}, ACL_FLOAT, {0});
        expect_code("Erfc out shape", aclnnErfcGetWorkspaceSize(a.t, s3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        for (Dev *x : {&a, &o, &i, &io, &d, &od, &s3}) release(*x);
    }
    printf("ok unary\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    nonzeros();
    indexes();
    flips();
    unaries();
    errors();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
