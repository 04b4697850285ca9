/* fp16 helpers, aclDataTypeSize and data buffers (abi.md 1.3). None needs aclInit. */
#include "mem_check.h"
#include <math.h>
#include <stdint.h>

static void f2h(float f, uint16_t want)
{
    uint16_t got = aclFloatToFloat16(f);
    if (got != want) {
        fprintf(stderr, "aclFloatToFloat16(%a) = 0x%04x, expected 0x%04x\n", f, got, want);
        exit(1);
    }
}

static void h2f(uint16_t h, float want)
{
    float got = aclFloat16ToFloat(h);
    uint32_t gb, wb;
    memcpy(&gb, &got, 4);
    memcpy(&wb, &want, 4);
    if (gb != wb) {
        fprintf(stderr, "aclFloat16ToFloat(0x%04x) = %a, expected %a\n", h, got, want);
        exit(1);
    }
}

int main(void)
{
    /* float -> half: RNE, denormals, saturation (no Inf/NaN ever). */
    f2h(0.0f, 0x0000);
    f2h(-0.0f, 0x8000);
    f2h(1.0f, 0x3C00);
    f2h(-2.5f, 0xC100);
    f2h(65504.0f, 0x7BFF);
    f2h(65520.0f, 0x7BFF);
    f2h(1e9f, 0x7BFF);
    f2h(-1e9f, 0xFBFF);
    f2h(INFINITY, 0x7BFF);
    f2h(-INFINITY, 0xFBFF);
    f2h(NAN, 0x7BFF);
    f2h(5.9604645e-8f, 0x0001);       /* 2^-24, smallest denormal */
    f2h(2.98023224e-8f, 0x0000);      /* 2^-25: tie to even zero */
    f2h(1.00048828125f, 0x3C00);      /* 1 + 2^-11: tie, down to even */
    f2h(1.00146484375f, 0x3C02);      /* 1 + 3*2^-11: tie, up to even */
    f2h(0.1f, 0x2E66);
    /* half -> float: exponent 31 is ordinary. */
    h2f(0x7C00, 65536.0f);
    h2f(0x7E00, 98304.0f);
    h2f(0xFC00, -65536.0f);
    h2f(0x0001, 5.9604644775390625e-8f);
    h2f(0x8000, -0.0f);
    h2f(0x3555, 0.333251953125f);
    /* Every finite half round-trips. */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if (((h >> 10) & 0x1F) == 31) {
            CHECK(aclFloatToFloat16(aclFloat16ToFloat((uint16_t)h)) == ((h & 0x8000) | 0x7BFF));
            continue;
        }
        CHECK(aclFloatToFloat16(aclFloat16ToFloat((uint16_t)h)) == h);
    }

    /* aclDataTypeSize, CANN's table incl. the default branch. */
    CHECK(aclDataTypeSize(ACL_DT_UNDEFINED) == 0);
    CHECK(aclDataTypeSize(ACL_STRING) == 0);
    CHECK(aclDataTypeSize(ACL_FLOAT) == 4);
    CHECK(aclDataTypeSize(ACL_FLOAT16) == 2);
    CHECK(aclDataTypeSize(ACL_BF16) == 2);
    CHECK(aclDataTypeSize(ACL_INT8) == 1);
    CHECK(aclDataTypeSize(ACL_BOOL) == 1);
    CHECK(aclDataTypeSize(ACL_INT4) == 1);
    CHECK(aclDataTypeSize(ACL_UINT1) == 1);
    CHECK(aclDataTypeSize(ACL_HIFLOAT8) == 1);
    CHECK(aclDataTypeSize(ACL_FLOAT8_E8M0) == 1);
    CHECK(aclDataTypeSize(ACL_INT64) == 8);
    CHECK(aclDataTypeSize(ACL_DOUBLE) == 8);
    CHECK(aclDataTypeSize(ACL_COMPLEX32) == 4);
    CHECK(aclDataTypeSize(ACL_COMPLEX64) == 8);
    CHECK(aclDataTypeSize(ACL_COMPLEX128) == 16);
    CHECK(aclDataTypeSize(ACL_FLOAT4_E2M1) == 8);
    CHECK(aclDataTypeSize((aclDataType)5) == 8);
    CHECK(aclDataTypeSize((aclDataType)9999) == 8);

    /* Data buffers. */
    static char mem[64];
    aclDataBuffer *b = aclCreateDataBuffer(mem, sizeof(mem));
    CHECK(b != NULL);
    CHECK(aclGetDataBufferAddr(b) == mem);
    CHECK(aclGetDataBufferSizeV2(b) == 64);
    CHECK(aclGetDataBufferSize(b) == 64);
    CHECK_OK(aclUpdateDataBuffer(b, mem + 8, ((size_t)1 << 32) + 7));
    CHECK(aclGetDataBufferAddr(b) == mem + 8);
    CHECK(aclGetDataBufferSizeV2(b) == ((size_t)1 << 32) + 7);
    CHECK(aclGetDataBufferSize(b) == 7); /* truncated to 32 bits */
    aclDataBuffer *empty = aclCreateDataBuffer(NULL, 0);
    CHECK(empty != NULL);
    CHECK(aclGetDataBufferAddr(empty) == NULL);
    CHECK(aclGetDataBufferSizeV2(empty) == 0);
    CHECK_OK(aclDestroyDataBuffer(empty));
    CHECK_OK(aclDestroyDataBuffer(b));
    CHECK_ERR(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer", "not a live aclDataBuffer");
    CHECK_ERR(aclDestroyDataBuffer(NULL), ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer", "dataBuffer is NULL");
    CHECK_ERR(aclUpdateDataBuffer(NULL, mem, 1), ACL_ERROR_INVALID_PARAM, "dataBuffer is NULL");
    CHECK(aclGetDataBufferAddr(NULL) == NULL);
    CHECK(aclGetDataBufferSizeV2(NULL) == 0);
    CHECK(aclGetDataBufferSize(NULL) == 0);
    printf("helpers ok\n");
    return 0;
}
