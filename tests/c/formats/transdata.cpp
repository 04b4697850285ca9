// TransData through the single-operator API with data on the device, checked against a host
// reference written here from abi.md §5.2 (independently of the emulator's code):
//   forward  plain -> private with aclopExecuteV2 (output pre-filled with garbage, so the
//            padding must be written as zero),
//   inverse  private -> plain with aclopCompileAndExecute, from the forward result on the
//            device into a third buffer: the round trip must give the input back.
// Usage: transdata GROUP   (GROUP selects a family of format pairs, see main()).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "common.h"

typedef std::vector<int64_t> Shape;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t numel(const Shape &s) {
    int64_t n = 1;
    for (auto v : s) n *= v;
    return n;
}
static int64_t gcd64(int64_t a, int64_t b) { return b == 0 ? a : gcd64(b, a % b); }
static int64_t lcm64(int64_t a, int64_t b) { return a / gcd64(a, b) * b; }

static const char *fname(aclFormat f) {
    switch (f) {
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case ACL_FORMAT_NC1HWC0_C04: return "NC1HWC0_C04";
    case ACL_FORMAT_HWCN: return "HWCN";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case ACL_FORMAT_NDC1HWC0: return "NDC1HWC0";
    case ACL_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
    case ACL_FORMAT_FRACTAL_NZ_C0_16: return "FRACTAL_NZ_C0_16";
    case ACL_FORMAT_FRACTAL_NZ_C0_32: return "FRACTAL_NZ_C0_32";
    case ACL_FORMAT_FRACTAL_NZ_C0_2: return "FRACTAL_NZ_C0_2";
    case ACL_FORMAT_FRACTAL_NZ_C0_4: return "FRACTAL_NZ_C0_4";
    case ACL_FORMAT_FRACTAL_NZ_C0_8: return "FRACTAL_NZ_C0_8";
    default: return "?";
    }
}

// GE's C0 (abi.md §5.1): explicit formats win, else 32 for 1-byte types, 16 otherwise.
static int64_t c0_of(aclFormat f, size_t es) {
    switch (f) {
    case ACL_FORMAT_NC1HWC0_C04: return 4;
    case ACL_FORMAT_FRACTAL_NZ_C0_16: return 16;
    case ACL_FORMAT_FRACTAL_NZ_C0_32: return 32;
    case ACL_FORMAT_FRACTAL_NZ_C0_2: return 2;
    case ACL_FORMAT_FRACTAL_NZ_C0_4: return 4;
    case ACL_FORMAT_FRACTAL_NZ_C0_8: return 8;
    default: return es == 1 ? 32 : 16;
    }
}

// Logical dims of a plain shape and the linear index of an element in it.
struct Plain {
    aclFormat f;
    Shape s;
    int64_t N = 1, C = 1, D = 1, H = 1, W = 1;
    explicit Plain(aclFormat fmt, const Shape &shape) : f(fmt), s(shape) {
        switch (f) {
        case ACL_FORMAT_NCHW: N = s[0]; C = s[1]; H = s[2]; W = s[3]; break;
        case ACL_FORMAT_NHWC: N = s[0]; H = s[1]; W = s[2]; C = s[3]; break;
        case ACL_FORMAT_HWCN: H = s[0]; W = s[1]; C = s[2]; N = s[3]; break;
        case ACL_FORMAT_NCDHW: N = s[0]; C = s[1]; D = s[2]; H = s[3]; W = s[4]; break;
        default: break;
        }
    }
    int64_t at(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
        switch (f) {
        case ACL_FORMAT_NCHW: return ((n * C + c) * H + h) * W + w;
        case ACL_FORMAT_NHWC: return ((n * H + h) * W + w) * C + c;
        case ACL_FORMAT_HWCN: return ((h * W + w) * C + c) * N + n;
        case ACL_FORMAT_NCDHW: return (((n * C + c) * D + d) * H + h) * W + w;
        default: return -1;
        }
    }
};

// The private shape and, for each private element, the plain element it holds (-1: padding).
static void reference(aclFormat plain, const Shape &shape, aclFormat priv, size_t es,
                      int64_t groups, Shape &pshape, std::vector<int64_t> &map) {
    int64_t c0 = c0_of(priv, es);
    if (plain == ACL_FORMAT_ND) {  // FRACTAL_NZ family: [..., H, W] -> [..., W1, H1, 16, W0]
        size_t k = shape.size();
        int64_t H = shape[k - 2], W = shape[k - 1], B = 1;
        for (size_t i = 0; i + 2 < k; ++i) B *= shape[i];
        int64_t H1 = cdiv(H, 16), W1 = cdiv(W, c0);
        pshape.assign(shape.begin(), shape.end() - 2);
        pshape.insert(pshape.end(), {W1, H1, 16, c0});
        map.assign(numel(pshape), -1);
        for (int64_t b = 0; b < B; ++b)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t w = 0; w < W; ++w)
                    map[b * W1 * H1 * 16 * c0 + (w / c0) * H1 * 16 * c0 + h * c0 + w % c0] =
                        (b * H + h) * W + w;
        return;
    }
    Plain p(plain, shape);
    int64_t N = p.N, C = p.C, D = p.D, H = p.H, W = p.W;
    int64_t C1 = cdiv(C, c0);
    if (priv == ACL_FORMAT_NC1HWC0 || priv == ACL_FORMAT_NC1HWC0_C04) {
        pshape = {N, C1, H, W, c0};
        map.assign(numel(pshape), -1);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t h = 0; h < H; ++h)
                    for (int64_t w = 0; w < W; ++w)
                        map[(((n * C1 + c / c0) * H + h) * W + w) * c0 + c % c0] = p.at(n, c, 0, h, w);
    } else if (priv == ACL_FORMAT_NDC1HWC0) {
        pshape = {N, D, C1, H, W, c0};
        map.assign(numel(pshape), -1);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t d = 0; d < D; ++d)
                    for (int64_t h = 0; h < H; ++h)
                        for (int64_t w = 0; w < W; ++w)
                            map[((((n * D + d) * C1 + c / c0) * H + h) * W + w) * c0 + c % c0] =
                                p.at(n, c, d, h, w);
    } else if (priv == ACL_FRACTAL_Z_3D) {
        int64_t N1 = cdiv(N, 16);
        pshape = {D * C1 * H * W, N1, 16, c0};
        map.assign(numel(pshape), -1);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t d = 0; d < D; ++d)
                    for (int64_t h = 0; h < H; ++h)
                        for (int64_t w = 0; w < W; ++w) {
                            int64_t row = ((d * C1 + c / c0) * H + h) * W + w;
                            map[(row * N1 * 16 + n) * c0 + c % c0] = p.at(n, c, d, h, w);
                        }
    } else if (priv == ACL_FORMAT_FRACTAL_Z) {
        // GE's grouped layout (abi.md §5.2); groups == 1 is the plain FRACTAL_Z.
        int64_t cin = C, cout = N / groups;
        int64_t e = std::min(std::min(lcm64(lcm64(cin, c0) / cin, lcm64(cout, 16) / cout), groups),
                             groups);
        int64_t cin_opt = cdiv(e * cin, c0) * c0, cout_opt = cdiv(e * cout, 16) * 16;
        int64_t c1 = cin_opt / c0, gdim = cdiv(groups, e);
        pshape = {gdim * c1 * H * W, cout_opt / 16, 16, c0};
        map.assign(numel(pshape), -1);
        for (int64_t g = 0; g < groups; ++g)
            for (int64_t c = 0; c < cin; ++c)
                for (int64_t n = 0; n < cout; ++n)
                    for (int64_t h = 0; h < H; ++h)
                        for (int64_t w = 0; w < W; ++w) {
                            int64_t ev = g % e, ci = ev * cin + c, co = ev * cout + n;
                            int64_t q = (g / e) * c1 * H * W * cout_opt * c0 +
                                        (ci / c0) * H * W * cout_opt * c0 + h * W * cout_opt * c0 +
                                        w * cout_opt * c0 + co * c0 + ci % c0;
                            map[q] = p.at(g * cout + n, c, 0, h, w);
                        }
    } else {
        fprintf(stderr, "FAIL: no reference for %s\n", fname(priv));
        exit(1);
    }
}

static std::vector<uint8_t> fill(int64_t n, size_t es) {
    std::vector<uint8_t> v((size_t)n * es);
    for (size_t i = 0; i < v.size(); ++i) v[i] = (uint8_t)((i * 31 + i / es * 7) % 251 + 1);
    return v;
}

static void *dev_alloc(size_t n, int fill_byte) {
    void *p = NULL;
    CHECK(aclrtMalloc(&p, n ? n : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(p, n ? n : 1, fill_byte, n ? n : 1));
    return p;
}

// Give the group count as the FRACTAL_Z sub-format (src_subformat / dst_subformat) instead
// of the groups attr.
static bool g_subformat = false;

static aclopAttr *attrs(aclFormat src, aclFormat dst, int64_t groups) {
    aclopAttr *a = aclopCreateAttr();
    EXPECT(a != NULL);
    CHECK(aclopSetAttrString(a, "src_format", fname(src)));
    CHECK(aclopSetAttrString(a, "dst_format", fname(dst)));
    if (groups > 1 && !g_subformat) CHECK(aclopSetAttrInt(a, "groups", groups));
    if (groups > 1 && g_subformat)
        CHECK(aclopSetAttrInt(a, src == ACL_FORMAT_FRACTAL_Z ? "src_subformat" : "dst_subformat", groups));
    return a;
}

enum Api { V2, V1, COMPILE, COMPILE_V2 };

static void run_op(Api api, aclTensorDesc *in, aclDataBuffer *ib, aclTensorDesc *out,
                   aclDataBuffer *ob, aclopAttr *a, aclrtStream s) {
    aclTensorDesc *ind[1] = {in}, *outd[1] = {out};
    aclDataBuffer *inb[1] = {ib}, *outb[1] = {ob};
    switch (api) {
    case V2: CHECK(aclopExecuteV2("TransData", 1, ind, inb, 1, outd, outb, a, s)); break;
    case V1: CHECK(aclopExecute("TransData", 1, ind, inb, 1, outd, outb, a, s)); break;
    case COMPILE:
        CHECK(aclopCompileAndExecute("TransData", 1, ind, inb, 1, outd, outb, a, ACL_ENGINE_SYS,
                                     ACL_COMPILE_SYS, NULL, s));
        break;
    case COMPILE_V2:
        CHECK(aclopCompileAndExecuteV2("TransData", 1, ind, inb, 1, outd, outb, a,
                                       ACL_ENGINE_AICORE, ACL_COMPILE_SYS, NULL, s));
        break;
    }
}

static const char *dtname(aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT16: return "fp16";
    case ACL_FLOAT: return "fp32";
    case ACL_INT8: return "int8";
    case ACL_BF16: return "bf16";
    default: return "?";
    }
}

// One forward + inverse round trip. `storage_desc`: describe the private tensor as
// (plain format, logical shape) + aclSetTensorFormat (1: + aclSetTensorShape; 2: without,
// the storage shape is derived) instead of creating it in the private format.
static void round_trip(aclrtStream s, aclFormat plain, Shape shape, aclFormat priv, aclDataType dt,
                       int64_t groups, bool inverse, Api fwd_api, Api inv_api, int storage_desc) {
    size_t es = aclDataTypeSize(dt);
    Shape pshape;
    std::vector<int64_t> map;
    reference(plain, shape, priv, es, groups, pshape, map);
    int64_t n = numel(shape), pn = numel(pshape);
    std::vector<uint8_t> host = fill(n, es), want((size_t)pn * es, 0);
    for (int64_t q = 0; q < pn; ++q)
        if (map[q] >= 0) memcpy(&want[q * es], &host[map[q] * es], es);

    aclTensorDesc *pd = aclCreateTensorDesc(dt, (int)shape.size(), shape.data(), plain);
    aclTensorDesc *qd;
    if (storage_desc) {
        qd = aclCreateTensorDesc(dt, (int)shape.size(), shape.data(), plain);
        CHECK(aclSetTensorFormat(qd, priv));
        if (storage_desc == 1) CHECK(aclSetTensorShape(qd, (int)pshape.size(), pshape.data()));
    } else {
        qd = aclCreateTensorDesc(dt, (int)pshape.size(), pshape.data(), priv);
    }
    EXPECT(pd != NULL && qd != NULL);
    if (groups == 1) {  // the descriptor API derives the same private shape
        aclTensorDesc *t = NULL;
        CHECK(aclTransTensorDescFormat(pd, priv, &t));
        size_t k = aclGetTensorDescNumDims(t);
        EXPECT(k == pshape.size());
        for (size_t i = 0; i < k; ++i) {
            int64_t v = 0;
            CHECK(aclGetTensorDescDimV2(t, i, &v));
            EXPECT(v == pshape[i]);
        }
        EXPECT(aclGetTensorDescSize(t) == (size_t)pn * es);
        aclDestroyTensorDesc(t);
    }
    size_t bytes = (size_t)n * es, pbytes = (size_t)pn * es;
    void *a = dev_alloc(bytes, 0), *b = dev_alloc(pbytes, 0x5A), *c = dev_alloc(bytes, 0x5A);
    CHECK(aclrtMemcpy(a, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    aclDataBuffer *ab = aclCreateDataBuffer(a, bytes), *bb = aclCreateDataBuffer(b, pbytes),
                  *cb = aclCreateDataBuffer(c, bytes);
    aclopAttr *fa = attrs(plain, priv, groups);
    run_op(fwd_api, pd, ab, qd, bb, fa, s);
    CHECK(aclrtSynchronizeStream(s));
    std::vector<uint8_t> got(pbytes);
    CHECK(aclrtMemcpy(got.data(), pbytes, b, pbytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int64_t q = 0; q < pn; ++q) {
        if (memcmp(&got[q * es], &want[q * es], es) != 0) {
            fprintf(stderr, "FAIL %s %s->%s %s: element %lld is %s (expected plain element %lld)\n",
                    dtname(dt), fname(plain), fname(priv), storage_desc ? "(storage desc)" : "",
                    (long long)q, map[q] < 0 ? "padding, not zero" : "wrong", (long long)map[q]);
            exit(1);
        }
    }
    if (inverse) {
        aclopAttr *ia = attrs(priv, plain, groups);
        run_op(inv_api, qd, bb, pd, cb, ia, s);
        CHECK(aclrtSynchronizeStream(s));
        std::vector<uint8_t> back(bytes);
        CHECK(aclrtMemcpy(back.data(), bytes, c, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        if (back != host) {
            fprintf(stderr, "FAIL %s %s->%s->%s: round trip differs\n", dtname(dt), fname(plain),
                    fname(priv), fname(plain));
            exit(1);
        }
        aclopDestroyAttr(ia);
    }
    printf("ok %s %s [", dtname(dt), fname(plain));
    for (auto v : shape) printf(" %lld", (long long)v);
    printf(" ] -> %s [", fname(priv));
    for (auto v : pshape) printf(" %lld", (long long)v);
    printf(" ]%s%s\n", inverse ? " and back" : "", groups > 1 ? " (groups)" : "");
    aclopDestroyAttr(fa);
    CHECK(aclDestroyDataBuffer(ab));
    CHECK(aclDestroyDataBuffer(bb));
    CHECK(aclDestroyDataBuffer(cb));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtFree(c));
    aclDestroyTensorDesc(pd);
    aclDestroyTensorDesc(qd);
}

static const aclDataType DTYPES[] = {ACL_FLOAT16, ACL_FLOAT, ACL_INT8, ACL_BF16};

static void all_dtypes(aclrtStream s, aclFormat plain, Shape shape, aclFormat priv, bool inverse) {
    for (aclDataType dt : DTYPES) round_trip(s, plain, shape, priv, dt, 1, inverse, V2, COMPILE, 0);
}

int main(int argc, char **argv) {
    std::string g = argc > 1 ? argv[1] : "nc1hwc0";
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    if (g == "nc1hwc0") {
        all_dtypes(s, ACL_FORMAT_NCHW, {2, 19, 3, 5}, ACL_FORMAT_NC1HWC0, true);
        all_dtypes(s, ACL_FORMAT_NHWC, {2, 3, 5, 19}, ACL_FORMAT_NC1HWC0, true);
        all_dtypes(s, ACL_FORMAT_NCHW, {1, 40, 2, 2}, ACL_FORMAT_NC1HWC0, true);
    } else if (g == "c04") {
        all_dtypes(s, ACL_FORMAT_NCHW, {2, 3, 3, 5}, ACL_FORMAT_NC1HWC0_C04, 0);
    } else if (g == "ndc1hwc0") {
        all_dtypes(s, ACL_FORMAT_NCDHW, {2, 19, 2, 3, 5}, ACL_FORMAT_NDC1HWC0, true);
    } else if (g == "fz") {
        all_dtypes(s, ACL_FORMAT_NCHW, {17, 19, 2, 3}, ACL_FORMAT_FRACTAL_Z, true);
        all_dtypes(s, ACL_FORMAT_HWCN, {2, 3, 19, 17}, ACL_FORMAT_FRACTAL_Z, true);
        all_dtypes(s, ACL_FORMAT_NHWC, {17, 2, 3, 19}, ACL_FORMAT_FRACTAL_Z, true);
    } else if (g == "fzgroups") {
        round_trip(s, ACL_FORMAT_NCHW, {6, 5, 2, 3}, ACL_FORMAT_FRACTAL_Z, ACL_FLOAT16, 2, true, V2,
                   COMPILE, 0);
        round_trip(s, ACL_FORMAT_NCHW, {12, 3, 1, 2}, ACL_FORMAT_FRACTAL_Z, ACL_FLOAT16, 4, true, V2,
                   COMPILE, 0);
        g_subformat = true;
        round_trip(s, ACL_FORMAT_NCHW, {8, 5, 2, 2}, ACL_FORMAT_FRACTAL_Z, ACL_FLOAT16, 2, true, V2,
                   COMPILE, 0);
        g_subformat = false;
    } else if (g == "fz3d") {
        all_dtypes(s, ACL_FORMAT_NCDHW, {17, 19, 2, 2, 3}, ACL_FRACTAL_Z_3D, true);
    } else if (g == "nz") {
        all_dtypes(s, ACL_FORMAT_ND, {3, 17, 35}, ACL_FORMAT_FRACTAL_NZ, true);
        all_dtypes(s, ACL_FORMAT_ND, {40, 33}, ACL_FORMAT_FRACTAL_NZ, true);
    } else if (g == "nzc0") {
        round_trip(s, ACL_FORMAT_ND, {17, 35}, ACL_FORMAT_FRACTAL_NZ_C0_16, ACL_FLOAT, 1, true, V2, COMPILE, 0);
        round_trip(s, ACL_FORMAT_ND, {17, 35}, ACL_FORMAT_FRACTAL_NZ_C0_32, ACL_INT8, 1, true, V2, COMPILE, 0);
        round_trip(s, ACL_FORMAT_ND, {17, 35}, ACL_FORMAT_FRACTAL_NZ_C0_8, ACL_FLOAT, 1, true, V2, COMPILE, 0);
        round_trip(s, ACL_FORMAT_ND, {17, 35}, ACL_FORMAT_FRACTAL_NZ_C0_4, ACL_FLOAT16, 1, true, V2, COMPILE, 0);
        round_trip(s, ACL_FORMAT_ND, {17, 35}, ACL_FORMAT_FRACTAL_NZ_C0_2, ACL_FLOAT16, 1, true, V2, COMPILE, 0);
    } else if (g == "apis") {
        // The other two entry points, and a private tensor described by origin + storage.
        round_trip(s, ACL_FORMAT_NCHW, {2, 19, 3, 5}, ACL_FORMAT_NC1HWC0, ACL_FLOAT16, 1, true, V1,
                   COMPILE_V2, 0);
        round_trip(s, ACL_FORMAT_ND, {3, 17, 35}, ACL_FORMAT_FRACTAL_NZ, ACL_FLOAT, 1, true, V2,
                   COMPILE, 1);
        round_trip(s, ACL_FORMAT_NCHW, {2, 19, 3, 5}, ACL_FORMAT_NC1HWC0, ACL_INT8, 1, true, COMPILE_V2,
                   V1, 1);
        round_trip(s, ACL_FORMAT_NCDHW, {2, 19, 2, 3, 5}, ACL_FORMAT_NDC1HWC0, ACL_FLOAT, 1, true, V2,
                   COMPILE, 2);
    } else {
        fprintf(stderr, "unknown group %s\n", g.c_str());
        return 2;
    }
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS %s\n", g.c_str());
    return 0;
}
