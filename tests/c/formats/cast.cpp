// aclopCast and op type "Cast" through aclopExecuteV2, with data on the device, against a
// host reference (_Float16 for fp16, the bf16 bit layout, C casts for in-range integers),
// plus the bad-input codes.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>
#include "acl/acl.h"
#include "common.h"

template <class T>
static void *upload(const std::vector<T> &v) {
    void *p = NULL;
    size_t n = v.size() * sizeof(T);
    CHECK(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(p, n, v.data(), n, ACL_MEMCPY_HOST_TO_DEVICE));
    return p;
}

template <class S, class D>
static std::vector<D> cast_on_device(aclrtStream s, aclDataType sdt, aclDataType ddt,
                                     const std::vector<S> &in, bool via_execute) {
    int64_t dims[2] = {1, (int64_t)in.size()};
    aclTensorDesc *sd = aclCreateTensorDesc(sdt, 2, dims, ACL_FORMAT_ND);
    aclTensorDesc *dd = aclCreateTensorDesc(ddt, 2, dims, ACL_FORMAT_ND);
    void *src = upload(in), *dst = NULL;
    size_t dn = in.size() * sizeof(D);
    CHECK(aclrtMalloc(&dst, dn, ACL_MEM_MALLOC_HUGE_FIRST));
    aclDataBuffer *sb = aclCreateDataBuffer(src, in.size() * sizeof(S));
    aclDataBuffer *db = aclCreateDataBuffer(dst, dn);
    if (via_execute) {
        aclopAttr *a = aclopCreateAttr();
        CHECK(aclopSetAttrInt(a, "dst_type", ddt));
        CHECK(aclopSetAttrBool(a, "truncate", 0));
        aclTensorDesc *ind[1] = {sd}, *outd[1] = {dd};
        aclDataBuffer *inb[1] = {sb}, *outb[1] = {db};
        CHECK(aclopExecuteV2("Cast", 1, ind, inb, 1, outd, outb, a, s));
        aclopDestroyAttr(a);
    } else {
        CHECK(aclopCast(sd, sb, dd, db, 0, s));
    }
    CHECK(aclrtSynchronizeStream(s));
    std::vector<D> out(in.size());
    CHECK(aclrtMemcpy(out.data(), dn, dst, dn, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(aclDestroyDataBuffer(sb));
    CHECK(aclDestroyDataBuffer(db));
    CHECK(aclrtFree(src));
    CHECK(aclrtFree(dst));
    aclDestroyTensorDesc(sd);
    aclDestroyTensorDesc(dd);
    return out;
}

static uint16_t f16_bits(float f) {
    _Float16 h = (_Float16)f;
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}

int main() {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));

    std::vector<float> f = {0.0f, -0.0f, 1.0f, -2.75f, 3.14159f, 65504.0f, 70000.0f, 1e-6f,
                            1e-8f, 0.1f, -123.456f, 2049.0f};
    for (int via = 0; via < 2; ++via) {
        // fp32 -> fp16: round to nearest even (C's conversion), overflow to Inf.
        auto h = cast_on_device<float, uint16_t>(s, ACL_FLOAT, ACL_FLOAT16, f, via);
        for (size_t i = 0; i < f.size(); ++i) {
            if (h[i] != f16_bits(f[i])) {
                fprintf(stderr, "FAIL fp32->fp16 %g: %04x, expected %04x\n", f[i], h[i], f16_bits(f[i]));
                return 1;
            }
        }
        // fp16 -> fp32 is exact.
        auto back = cast_on_device<uint16_t, float>(s, ACL_FLOAT16, ACL_FLOAT, h, via);
        for (size_t i = 0; i < h.size(); ++i) {
            _Float16 x;
            memcpy(&x, &h[i], 2);
            float want = (float)x;
            if (memcmp(&back[i], &want, 4) != 0) {
                fprintf(stderr, "FAIL fp16->fp32 %04x: %g, expected %g\n", h[i], back[i], want);
                return 1;
            }
        }
        // fp32 -> int32 rounds toward zero; out of range saturates; NaN gives 0.
        std::vector<float> fi = {2.9f, -2.9f, 100.5f, -0.4f, 3e10f, -3e10f, std::nanf("")};
        auto ii = cast_on_device<float, int32_t>(s, ACL_FLOAT, ACL_INT32, fi, via);
        int32_t want_i[] = {2, -2, 100, 0, INT32_MAX, INT32_MIN, 0};
        for (size_t i = 0; i < fi.size(); ++i) EXPECT(ii[i] == want_i[i]);
        // int32 -> fp32, int32 -> int8 (low bits), int8 -> fp16, bf16 -> fp32, -> bool.
        std::vector<int32_t> iv = {0, 1, -1, 300, -129, 16777217};
        auto fv = cast_on_device<int32_t, float>(s, ACL_INT32, ACL_FLOAT, iv, via);
        for (size_t i = 0; i < iv.size(); ++i) EXPECT(fv[i] == (float)iv[i]);
        auto i8 = cast_on_device<int32_t, int8_t>(s, ACL_INT32, ACL_INT8, iv, via);
        for (size_t i = 0; i < iv.size(); ++i) EXPECT(i8[i] == (int8_t)iv[i]);
        auto bo = cast_on_device<int32_t, uint8_t>(s, ACL_INT32, ACL_BOOL, iv, via);
        for (size_t i = 0; i < iv.size(); ++i) EXPECT(bo[i] == (iv[i] != 0));
        std::vector<int8_t> small = {-128, -1, 0, 7, 127};
        auto sh = cast_on_device<int8_t, uint16_t>(s, ACL_INT8, ACL_FLOAT16, small, via);
        for (size_t i = 0; i < small.size(); ++i) EXPECT(sh[i] == f16_bits((float)small[i]));
        std::vector<uint16_t> bf = {0x3F80, 0xC040, 0x0000, 0x7F80};
        auto bff = cast_on_device<uint16_t, float>(s, ACL_BF16, ACL_FLOAT, bf, via);
        for (size_t i = 0; i < bf.size(); ++i) {
            uint32_t bits = (uint32_t)bf[i] << 16;
            EXPECT(memcmp(&bff[i], &bits, 4) == 0);
        }
        printf("ok cast %s\n", via ? "aclopExecuteV2(\"Cast\")" : "aclopCast");
    }

    // Bad input.
    int64_t d4[1] = {4}, d5[1] = {5};
    aclTensorDesc *a = aclCreateTensorDesc(ACL_FLOAT, 1, d4, ACL_FORMAT_ND);
    aclTensorDesc *b = aclCreateTensorDesc(ACL_FLOAT16, 1, d5, ACL_FORMAT_ND);
    aclTensorDesc *str = aclCreateTensorDesc(ACL_STRING, 1, d4, ACL_FORMAT_ND);
    aclTensorDesc *b4 = aclCreateTensorDesc(ACL_FLOAT16, 1, d4, ACL_FORMAT_ND);
    void *x = NULL, *y = NULL;
    CHECK(aclrtMalloc(&x, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&y, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    aclDataBuffer *xb = aclCreateDataBuffer(x, 64), *yb = aclCreateDataBuffer(y, 64);
    aclDataBuffer *tiny = aclCreateDataBuffer(y, 6);
    EXPECT_CODE(aclopCast(a, xb, b, yb, 0, s), ACL_ERROR_OP_OUTPUT_NOT_MATCH, "[5]");
    EXPECT_CODE(aclopCast(str, xb, b4, yb, 0, s), ACL_ERROR_UNSUPPORTED_DATA_TYPE, "input data type 13");
    EXPECT_CODE(aclopCast(NULL, xb, b4, yb, 0, s), ACL_ERROR_INVALID_PARAM, "srcDesc");
    EXPECT_CODE(aclopCast(a, xb, b4, NULL, 0, s), ACL_ERROR_INVALID_PARAM, "dstBuffer");
    EXPECT_CODE(aclopCast(a, xb, b4, tiny, 0, s), ACL_ERROR_INVALID_PARAM, "outputs[0] holds 6 bytes");
    aclopAttr *wrong = aclopCreateAttr();
    CHECK(aclopSetAttrInt(wrong, "dst_type", ACL_INT32));
    aclTensorDesc *ind[1] = {a}, *outd[1] = {b4};
    aclDataBuffer *inb[1] = {xb}, *outb[1] = {yb};
    EXPECT_CODE(aclopExecuteV2("Cast", 1, ind, inb, 1, outd, outb, wrong, s),
                ACL_ERROR_OP_ATTR_NOT_MATCH, "dst_type");
    aclopDestroyAttr(wrong);
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS\n");
    return 0;
}
