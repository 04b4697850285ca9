// The "Identity" and "Fill" operators of the single-operator API, from CANN's op prototypes:
// - Identity copies x to y; with a private storage format on one side (aclSetTensorFormat +
//   aclSetTensorShape, as torch_npu describes its tensors) the data is converted, byte for
//   byte as TransData converts it; back to ND gives the input again. A data type that
//   differs is ACL_ERROR_OP_OUTPUT_NOT_MATCH.
// - Fill(dims, value) writes `value` everywhere in y: dims as a constant host tensor
//   (aclSetTensorConst), the value as a device scalar or a host-placed one
//   (aclSetTensorPlaceMent(ACL_MEMTYPE_HOST)).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "common.h"

static void *dev(size_t n) {
    void *p = nullptr;
    CHECK(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(p, n, 0x7f, n));
    return p;
}

static aclError run1(const char *op, aclTensorDesc *in, void *ip, size_t in_n, aclTensorDesc *out,
                     void *op_, size_t out_n, aclrtStream s) {
    aclDataBuffer *ib = aclCreateDataBuffer(ip, in_n), *ob = aclCreateDataBuffer(op_, out_n);
    aclTensorDesc *ind[1] = {in}, *outd[1] = {out};
    aclDataBuffer *inb[1] = {ib}, *outb[1] = {ob};
    aclopAttr *a = aclopCreateAttr();
    if (strcmp(op, "TransData") == 0) {
        CHECK(aclopSetAttrString(a, "src_format", "ND"));
        CHECK(aclopSetAttrString(a, "dst_format", "FRACTAL_NZ"));
    }
    aclError e = aclopCompileAndExecute(op, 1, ind, inb, 1, outd, outb, a, ACL_ENGINE_SYS, ACL_COMPILE_SYS,
                                        nullptr, s);
    aclopDestroyAttr(a);
    aclDestroyDataBuffer(ib);
    aclDestroyDataBuffer(ob);
    return e;
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));

    // Identity: ND [5, 33] fp32 -> FRACTAL_NZ [3, 1, 16, 16] (GE: C0 16 for fp32 NZ) and back.
    const int64_t dims[2] = {5, 33}, nz[4] = {3, 1, 16, 16};
    const size_t n = 5 * 33, nd_bytes = n * 4, nz_bytes = 3 * 16 * 16 * 4;
    std::vector<float> x(n);
    for (size_t i = 0; i < n; i++) x[i] = (float)i * 0.5f - 7.0f;
    void *xd = dev(nd_bytes), *z1 = dev(nz_bytes), *z2 = dev(nz_bytes), *back = dev(nd_bytes);
    CHECK(aclrtMemcpy(xd, nd_bytes, x.data(), nd_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    aclTensorDesc *ndd = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
    aclTensorDesc *nzd = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
    CHECK(aclSetTensorFormat(nzd, ACL_FORMAT_FRACTAL_NZ));
    CHECK(aclSetTensorShape(nzd, 4, nz));
    CHECK(run1("Identity", ndd, xd, nd_bytes, nzd, z1, nz_bytes, s));
    CHECK(run1("TransData", ndd, xd, nd_bytes, nzd, z2, nz_bytes, s));
    CHECK(aclrtSynchronizeStream(s));
    std::vector<uint8_t> a(nz_bytes), b(nz_bytes);
    CHECK(aclrtMemcpy(a.data(), nz_bytes, z1, nz_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(aclrtMemcpy(b.data(), nz_bytes, z2, nz_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(a == b);
    printf("ok Identity ND -> FRACTAL_NZ is TransData's layout\n");
    CHECK(run1("Identity", nzd, z1, nz_bytes, ndd, back, nd_bytes, s));
    CHECK(aclrtSynchronizeStream(s));
    std::vector<float> y(n);
    CHECK(aclrtMemcpy(y.data(), nd_bytes, back, nd_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(memcmp(y.data(), x.data(), nd_bytes) == 0);
    printf("ok Identity FRACTAL_NZ -> ND gives the input again\n");
    aclTensorDesc *half = aclCreateTensorDesc(ACL_FLOAT16, 2, dims, ACL_FORMAT_ND);
    EXPECT_CODE(run1("Identity", ndd, xd, nd_bytes, half, back, nd_bytes, s), 100022, "differs from the input data type");

    // Fill: dims [2, 3] as a constant INT64 host tensor; value 2.5 on the device.
    int64_t fd[2] = {2, 3};
    const int64_t one[1] = {2};
    aclTensorDesc *dd = aclCreateTensorDesc(ACL_INT64, 1, one, ACL_FORMAT_ND);
    CHECK(aclSetTensorConst(dd, fd, sizeof fd));
    CHECK(aclSetTensorPlaceMent(dd, ACL_MEMTYPE_HOST));
    aclDataBuffer *db = aclCreateDataBuffer(fd, sizeof fd);
    float v = 2.5f;
    void *vd = dev(4), *yd = dev(6 * 4);
    CHECK(aclrtMemcpy(vd, 4, &v, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    aclTensorDesc *vdesc = aclCreateTensorDesc(ACL_FLOAT, 0, nullptr, ACL_FORMAT_ND);
    aclDataBuffer *vb = aclCreateDataBuffer(vd, 4);
    aclTensorDesc *yd_desc = aclCreateTensorDesc(ACL_FLOAT, 2, fd, ACL_FORMAT_ND);
    aclDataBuffer *yb = aclCreateDataBuffer(yd, 6 * 4);
    {
        aclTensorDesc *ind[2] = {dd, vdesc}, *outd[1] = {yd_desc};
        aclDataBuffer *inb[2] = {db, vb}, *outb[1] = {yb};
        CHECK(aclopExecuteV2("Fill", 2, ind, inb, 1, outd, outb, nullptr, s));
        CHECK(aclrtSynchronizeStream(s));
        float got[6];
        CHECK(aclrtMemcpy(got, sizeof got, yd, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST));
        for (float g : got) EXPECT(g == 2.5f);
        printf("ok Fill with a device value\n");
    }
    // an INT32 output filled from a host-placed INT32 value
    int32_t iv = -7;
    aclTensorDesc *ivd = aclCreateTensorDesc(ACL_INT32, 0, nullptr, ACL_FORMAT_ND);
    CHECK(aclSetTensorPlaceMent(ivd, ACL_MEMTYPE_HOST));
    aclDataBuffer *ivb = aclCreateDataBuffer(&iv, 4);
    aclTensorDesc *yi = aclCreateTensorDesc(ACL_INT32, 2, fd, ACL_FORMAT_ND);
    {
        aclTensorDesc *ind[2] = {dd, ivd}, *outd[1] = {yi};
        aclDataBuffer *inb[2] = {db, ivb}, *outb[1] = {yb};
        CHECK(aclopExecuteV2("Fill", 2, ind, inb, 1, outd, outb, nullptr, s));
        iv = 99;  // a host value is read at the call
        CHECK(aclrtSynchronizeStream(s));
        int32_t got[6];
        CHECK(aclrtMemcpy(got, sizeof got, yd, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int32_t g : got) EXPECT(g == -7);
        printf("ok Fill with a host value\n");
        // dims that do not give y's shape
        int64_t wrong[2] = {4, 3};
        CHECK(aclSetTensorConst(dd, wrong, sizeof wrong));
        EXPECT_CODE(aclopExecuteV2("Fill", 2, ind, inb, 1, outd, outb, nullptr, s), 100022, "is not the shape");
    }
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("PASS identity_fill\n");
    return 0;
}
