// The LSTM operators of the single-operator API, written from CANN's op prototypes
// (DynamicRNN: x [T,B,I], w [I+H,4H], b [4H], optional seq_length / init_h / init_c; eight
// [T,B,H] outputs; attrs with their documented defaults, gate_order "ijfo"):
// - DynamicRNN through aclopCompileAndExecute with lengths in seq_length, init states and
//   forget_bias, against a host LSTM in double;
// - the REDIRECTIONAL direction without optional inputs, through aclopExecuteV2;
// - DynamicRNNGrad against central finite differences of the host LSTM;
// - DynamicRNNV2 (separate weights, PyTorch's gate order "ifjo", no bias);
// - the documented error codes for a wrong weight shape, an unsupported direction and a
//   wrong output count.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "common.h"

typedef std::vector<double> Vec;
static const int T = 4, B = 3, I = 3, H = 4;

static double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Host LSTM, one direction. w [I+H, 4H] with gate blocks in `order` (a permutation of
// "ijfo"), b [4H] (may be empty), lens[b] (empty: all T). Outputs y, hs, cs [T,B,H] and the
// activated gates i, j, f, o and tanh(c) (dead rows: 0).
struct Out {
    Vec y, hs, cs, g[4], tc;
};

static Out lstm_ref(const Vec &x, const Vec &w, const Vec &b, const Vec &h0, const Vec &c0,
                    const std::vector<int> &lens, bool reverse, double forget_bias,
                    const char *order) {
    Out o;
    o.y.assign(T * B * H, 0);
    o.hs = o.y;
    o.cs = o.y;
    o.tc = o.y;
    for (auto &g : o.g) g = o.y;
    Vec h = h0.empty() ? Vec(B * H, 0) : h0, c = c0.empty() ? Vec(B * H, 0) : c0;
    int block[4];  // block[k] = column block of gate k (0 i, 1 j, 2 f, 3 o)
    const char *names = "ijfo";
    for (int k = 0; k < 4; k++) block[k] = (int)(strchr(order, names[k]) - order);
    for (int s = 0; s < T; s++) {
        int t = reverse ? T - 1 - s : s;
        Vec nh = h, nc = c;
        for (int bi = 0; bi < B; bi++) {
            bool live = lens.empty() || t < lens[bi];
            for (int j = 0; j < H; j++) {
                int at = (t * B + bi) * H + j;
                if (!live) {
                    o.hs[at] = h[bi * H + j];
                    o.cs[at] = c[bi * H + j];
                    continue;
                }
                double pre[4];
                for (int k = 0; k < 4; k++) {
                    int col = block[k] * H + j;
                    double a = b.empty() ? 0 : b[col];
                    for (int r = 0; r < I; r++) a += x[(t * B + bi) * I + r] * w[r * 4 * H + col];
                    for (int r = 0; r < H; r++) a += h[bi * H + r] * w[(I + r) * 4 * H + col];
                    pre[k] = a;
                }
                double ig = sigm(pre[0]), jg = std::tanh(pre[1]), fg = sigm(pre[2] + forget_bias),
                       og = sigm(pre[3]);
                double cn = fg * c[bi * H + j] + ig * jg, tcv = std::tanh(cn);
                nc[bi * H + j] = cn;
                nh[bi * H + j] = og * tcv;
                o.y[at] = o.hs[at] = og * tcv;
                o.cs[at] = cn;
                o.tc[at] = tcv;
                o.g[0][at] = ig;
                o.g[1][at] = jg;
                o.g[2][at] = fg;
                o.g[3][at] = og;
            }
        }
        h = nh;
        c = nc;
    }
    return o;
}

struct Dev {
    aclTensorDesc *desc;
    aclDataBuffer *buf;
    void *ptr;
    size_t bytes;
};

static Dev dev_tensor(const std::vector<int64_t> &dims, aclDataType dt, const void *host) {
    size_t n = 1;
    for (auto d : dims) n *= (size_t)d;
    size_t es = dt == ACL_FLOAT ? 4 : dt == ACL_INT32 ? 4 : 2;
    Dev d;
    d.bytes = n * es;
    d.desc = aclCreateTensorDesc(dt, (int)dims.size(), dims.data(), ACL_FORMAT_ND);
    CHECK(aclrtMalloc(&d.ptr, d.bytes ? d.bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    if (host) CHECK(aclrtMemcpy(d.ptr, d.bytes, host, d.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    else CHECK(aclrtMemset(d.ptr, d.bytes, 0, d.bytes));
    d.buf = aclCreateDataBuffer(d.ptr, d.bytes);
    return d;
}

static Dev f32(const std::vector<int64_t> &dims, const Vec &v) {
    std::vector<float> f(v.begin(), v.end());
    return dev_tensor(dims, ACL_FLOAT, v.empty() ? nullptr : f.data());
}

static Vec fetch(const Dev &d) {
    std::vector<float> f(d.bytes / 4);
    CHECK(aclrtMemcpy(f.data(), d.bytes, d.ptr, d.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    return Vec(f.begin(), f.end());
}

static void release(Dev &d) {
    aclDestroyDataBuffer(d.buf);
    aclDestroyTensorDesc(d.desc);
    aclrtFree(d.ptr);
}

static Vec randv(std::mt19937 &g, size_t n, double scale) {
    std::uniform_real_distribution<double> u(-scale, scale);
    Vec v(n);
    for (auto &e : v) e = u(g);
    return v;
}

static void close_to(const Vec &got, const Vec &want, double tol, const char *what,
                     const std::vector<bool> *only = nullptr) {
    EXPECT(got.size() == want.size());
    for (size_t k = 0; k < got.size(); k++) {
        if (only && !(*only)[k]) continue;
        if (std::fabs(got[k] - want[k]) > tol) {
            fprintf(stderr, "FAIL %s[%zu] = %.6f, expected %.6f\n", what, k, got[k], want[k]);
            exit(1);
        }
    }
    printf("ok %s\n", what);
}

// Run a forward op; ins may hold null Devs (absent optional inputs: ACL_DT_UNDEFINED).
static aclError run_op(const char *op, std::vector<Dev *> ins, std::vector<Dev *> outs,
                       aclopAttr *attr, aclrtStream s, bool compile) {
    std::vector<aclTensorDesc *> id, od;
    std::vector<aclDataBuffer *> ib, ob;
    std::vector<aclTensorDesc *> owned;
    std::vector<aclDataBuffer *> ownedb;
    for (auto *d : ins) {
        if (d) {
            id.push_back(d->desc);
            ib.push_back(d->buf);
        } else {
            aclTensorDesc *n = aclCreateTensorDesc(ACL_DT_UNDEFINED, 0, nullptr, ACL_FORMAT_UNDEFINED);
            aclDataBuffer *nb = aclCreateDataBuffer(nullptr, 0);
            owned.push_back(n);
            ownedb.push_back(nb);
            id.push_back(n);
            ib.push_back(nb);
        }
    }
    for (auto *d : outs) {
        od.push_back(d->desc);
        ob.push_back(d->buf);
    }
    aclError e = compile ? aclopCompileAndExecute(op, (int)id.size(), id.data(), ib.data(),
                                                  (int)od.size(), od.data(), ob.data(), attr,
                                                  ACL_ENGINE_SYS, ACL_COMPILE_SYS, nullptr, s)
                         : aclopExecuteV2(op, (int)id.size(), id.data(), ib.data(), (int)od.size(),
                                          od.data(), ob.data(), attr, s);
    for (auto *n : owned) aclDestroyTensorDesc(n);
    for (auto *n : ownedb) aclDestroyDataBuffer(n);
    return e;
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    std::mt19937 g(7);
    Vec x = randv(g, T * B * I, 1.0), w = randv(g, (I + H) * 4 * H, 0.6), b = randv(g, 4 * H, 0.3);
    Vec h0 = randv(g, B * H, 0.5), c0 = randv(g, B * H, 0.5);
    std::vector<int> lens = {4, 3, 1};
    std::vector<int64_t> tbh = {T, B, H};

    // 1. DynamicRNN: lengths, init states, forget_bias 1.0, default gate order "ijfo".
    {
        Dev dx = f32({T, B, I}, x), dw = f32({I + H, 4 * H}, w), db = f32({4 * H}, b);
        Dev dl = dev_tensor({B}, ACL_INT32, lens.data());
        Dev dh = f32({1, B, H}, h0), dc = f32({1, B, H}, c0);
        std::vector<Dev> outs;
        for (int k = 0; k < 8; k++) outs.push_back(f32(tbh, Vec()));
        aclopAttr *a = aclopCreateAttr();
        CHECK(aclopSetAttrFloat(a, "forget_bias", 1.0f));
        CHECK(aclopSetAttrBool(a, "is_training", 1));
        std::vector<Dev *> po;
        for (auto &o : outs) po.push_back(&o);
        CHECK(run_op("DynamicRNN", {&dx, &dw, &db, &dl, &dh, &dc}, po, a, s, true));
        CHECK(aclrtSynchronizeStream(s));
        Out r = lstm_ref(x, w, b, h0, c0, {4, 3, 1}, false, 1.0, "ijfo");
        std::vector<bool> live(T * B * H);
        for (int t = 0; t < T; t++)
            for (int bi = 0; bi < B; bi++)
                for (int j = 0; j < H; j++) live[(t * B + bi) * H + j] = t < lens[bi];
        close_to(fetch(outs[0]), r.y, 1e-5, "DynamicRNN y (rows past their length 0)");
        close_to(fetch(outs[1]), r.hs, 1e-5, "DynamicRNN output_h (state kept past the length)");
        close_to(fetch(outs[2]), r.cs, 1e-5, "DynamicRNN output_c");
        for (int k = 0; k < 4; k++) close_to(fetch(outs[3 + k]), r.g[k], 1e-5, "DynamicRNN gate", &live);
        close_to(fetch(outs[7]), r.tc, 1e-5, "DynamicRNN tanhc", &live);

        // errors: a wrong weight shape, an unsupported direction, a wrong output count
        Dev bad = f32({I + H + 1, 4 * H}, Vec((I + H + 1) * 4 * H, 0.0));
        EXPECT_CODE(run_op("DynamicRNN", {&dx, &bad, &db, nullptr, &dh, &dc}, po, a, s, true),
                    100021, "w must be [input_size + hidden_size, 4 * hidden_size]");
        CHECK(aclopSetAttrString(a, "direction", "BIDIRECTIONAL"));
        EXPECT_CODE(run_op("DynamicRNN", {&dx, &dw, &db, nullptr, &dh, &dc}, po, a, s, true),
                    100023, "attr direction = \"BIDIRECTIONAL\"");
        CHECK(aclopSetAttrString(a, "direction", "UNIDIRECTIONAL"));
        std::vector<Dev *> seven(po.begin(), po.begin() + 7);
        EXPECT_CODE(run_op("DynamicRNN", {&dx, &dw, &db, nullptr, &dh, &dc}, seven, a, s, true),
                    100022, "has 8 outputs");
        aclopDestroyAttr(a);
        release(bad);
        for (auto *d : {&dx, &dw, &db, &dl, &dh, &dc}) release(*d);
        for (auto &o : outs) release(o);
    }

    // 2. REDIRECTIONAL, no seq_length and no initial state, through aclopExecuteV2.
    {
        Dev dx = f32({T, B, I}, x), dw = f32({I + H, 4 * H}, w), db = f32({4 * H}, b);
        std::vector<Dev> outs;
        for (int k = 0; k < 8; k++) outs.push_back(f32(tbh, Vec()));
        std::vector<Dev *> po;
        for (auto &o : outs) po.push_back(&o);
        aclopAttr *a = aclopCreateAttr();
        CHECK(aclopSetAttrString(a, "direction", "REDIRECTIONAL"));
        CHECK(run_op("DynamicRNN", {&dx, &dw, &db, nullptr, nullptr, nullptr}, po, a, s, false));
        CHECK(aclrtSynchronizeStream(s));
        Out r = lstm_ref(x, w, b, Vec(), Vec(), {}, true, 0.0, "ijfo");
        close_to(fetch(outs[0]), r.y, 1e-5, "REDIRECTIONAL y");
        close_to(fetch(outs[1]), r.hs, 1e-5, "REDIRECTIONAL output_h (final state at step 0)");
        aclopDestroyAttr(a);
        for (auto *d : {&dx, &dw, &db}) release(*d);
        for (auto &o : outs) release(o);
    }

    // 3. DynamicRNNGrad against finite differences of L = sum(wy * y) + sum(wh * h_T).
    {
        Vec wy = randv(g, T * B * H, 1.0), wh = randv(g, B * H, 1.0);
        auto loss = [&](const Vec &xx, const Vec &ww, const Vec &bb, const Vec &hh, const Vec &cc) {
            Out r = lstm_ref(xx, ww, bb, hh, cc, {}, false, 0.0, "ijfo");
            double l = 0;
            for (size_t k = 0; k < wy.size(); k++) l += wy[k] * r.y[k];
            for (int k = 0; k < B * H; k++) l += wh[k] * r.hs[(T - 1) * B * H + k];
            return l;
        };
        Out r = lstm_ref(x, w, b, h0, c0, {}, false, 0.0, "ijfo");
        Dev dx = f32({T, B, I}, x), dw = f32({I + H, 4 * H}, w), db = f32({4 * H}, b);
        Dev ih = f32({B, H}, h0), ic = f32({B, H}, c0);
        Dev y = f32(tbh, r.y), hs = f32(tbh, r.hs), cs = f32(tbh, r.cs);
        Dev dy = f32(tbh, wy), dh = f32({B, H}, wh), dc = f32({B, H}, Vec(B * H, 0.0));
        Dev gi = f32(tbh, r.g[0]), gj = f32(tbh, r.g[1]), gf = f32(tbh, r.g[2]), go = f32(tbh, r.g[3]);
        Dev tc = f32(tbh, r.tc);
        Dev o_dw = f32({I + H, 4 * H}, Vec()), o_db = f32({4 * H}, Vec()), o_dx = f32({T, B, I}, Vec());
        Dev o_dh = f32({B, H}, Vec()), o_dc = f32({B, H}, Vec());
        CHECK(run_op("DynamicRNNGrad",
                     {&dx, &dw, &db, &y, &ih, &ic, &hs, &cs, &dy, &dh, &dc, &gi, &gj, &gf, &go, &tc,
                      nullptr, nullptr, nullptr, nullptr, nullptr},
                     {&o_dw, &o_db, &o_dx, &o_dh, &o_dc}, nullptr, s, true));
        CHECK(aclrtSynchronizeStream(s));
        const double e = 1e-5;
        auto numeric = [&](int which) {
            Vec *v[5] = {&x, &w, &b, &h0, &c0};
            Vec out(v[which]->size());
            for (size_t k = 0; k < out.size(); k++) {
                Vec p = *v[which], m = *v[which];
                p[k] += e;
                m[k] -= e;
                Vec a5[5] = {x, w, b, h0, c0}, b5[5] = {x, w, b, h0, c0};
                a5[which] = p;
                b5[which] = m;
                out[k] = (loss(a5[0], a5[1], a5[2], a5[3], a5[4]) - loss(b5[0], b5[1], b5[2], b5[3], b5[4])) /
                         (2 * e);
            }
            return out;
        };
        close_to(fetch(o_dx), numeric(0), 2e-3, "DynamicRNNGrad dx");
        close_to(fetch(o_dw), numeric(1), 2e-3, "DynamicRNNGrad dw");
        close_to(fetch(o_db), numeric(2), 2e-3, "DynamicRNNGrad db");
        close_to(fetch(o_dh), numeric(3), 2e-3, "DynamicRNNGrad dh_prev");
        close_to(fetch(o_dc), numeric(4), 2e-3, "DynamicRNNGrad dc_prev");
        for (auto *d : {&dx, &dw, &db, &ih, &ic, &y, &hs, &cs, &dy, &dh, &dc, &gi, &gj, &gf, &go, &tc,
                        &o_dw, &o_db, &o_dx, &o_dh, &o_dc})
            release(*d);
    }

    // 4. DynamicRNNV2: weight_input [I,4H] and weight_hidden [H,4H], gate order "ifjo", no b.
    {
        Vec wi(w.begin(), w.begin() + I * 4 * H), whh(w.begin() + I * 4 * H, w.end());
        Dev dx = f32({T, B, I}, x), dwi = f32({I, 4 * H}, wi), dwh = f32({H, 4 * H}, whh);
        Dev dh = f32({1, B, H}, h0), dc = f32({1, B, H}, c0);
        std::vector<Dev> outs;
        for (int k = 0; k < 8; k++) outs.push_back(f32(tbh, Vec()));
        std::vector<Dev *> po;
        for (auto &o : outs) po.push_back(&o);
        aclopAttr *a = aclopCreateAttr();
        CHECK(aclopSetAttrString(a, "gate_order", "ifjo"));
        CHECK(run_op("DynamicRNNV2", {&dx, &dwi, &dwh, nullptr, nullptr, &dh, &dc}, po, a, s, true));
        CHECK(aclrtSynchronizeStream(s));
        Out r = lstm_ref(x, w, Vec(), h0, c0, {}, false, 0.0, "ifjo");
        close_to(fetch(outs[0]), r.y, 1e-5, "DynamicRNNV2 y");
        close_to(fetch(outs[2]), r.cs, 1e-5, "DynamicRNNV2 output_c");
        aclopDestroyAttr(a);
        for (auto *d : {&dx, &dwi, &dwh, &dh, &dc}) release(*d);
        for (auto &o : outs) release(o);
    }

    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS dynamic_rnn\n");
    return 0;
}
