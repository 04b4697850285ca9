/* npu-emu: the host tiling API of the Ascend C high-level APIs (`#include "tiling/tiling_api.h"`):
 * Matmul tiling (matmul_tiling::MatmulApiTiling, MultiCoreMatmulTiling) and optiling::TCubeTiling;
 * SoftMax tiling (AscendC::SoftMaxTilingFunc, GetSoftMaxMax/MinTmpSize, optiling::SoftMaxTiling) and
 * LayerNorm tiling (GetLayerNormMaxMinTmpSize, GetLayerNormNDTilingInfo, optiling::LayerNormTiling),
 * at the end of this file.
 *
 *   matmul_tiling::MultiCoreMatmulTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
 *   api.SetDim(2);
 *   api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);  // B, C (and bias) likewise
 *   api.SetShape(M, N, K); api.SetOrgShape(M, N, K); api.SetBias(false);
 *   api.SetFixSplit(128, 256, -1);                                       // optional
 *   optiling::TCubeTiling tiling; api.GetTiling(tiling);                 // -1: failed (message on stderr)
 *   tiling.SaveToBuffer(buf, tiling.GetDataSize());
 *
 * npu-emu's tiling (header-only, deterministic):
 * - cores: the split of M and N over at most SetDim(n) cores (default: the cube cores of the
 *   platform) whose single-core block singleCoreM x singleCoreN (multiples of 16) is smallest,
 *   then squarest, then with fewer splits of N (M is split first);
 *   singleCoreK = K (K is not split); usedCoreNum = ceil(M / singleCoreM) * ceil(N / singleCoreN);
 *   MatmulApiTiling (one core): the whole shape;
 * - base blocks: SetFixSplit's values, else baseM = min(128, singleCoreM), baseN = min(256,
 *   singleCoreN), baseK = min(K rounded up, 64 for 16-bit inputs, 32 for float, 128 for int8),
 *   all multiples of 16 (baseK of C0), within L0A / L0B (64 KiB, double-buffered) and L0C (128 KiB);
 * - L1: stepM = stepN = 1, stepKa = stepKb as many base blocks of K as fit L1 twice (at most the
 *   whole K), depthA1 = 2 * stepKa, depthB1 = 2 * stepKb; iterateOrder 0 (M first) unless
 *   SetTraverse(FIRSTN); dbL0A = dbL0B = 2, dbL0C = 1.
 * The real CANN tiling may choose other base blocks; the kernel side of npu-emu computes the same
 * C for any valid tiling. */
#ifndef NPUEMU_TILING_TILING_API_H
#define NPUEMU_TILING_TILING_API_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "graph/tensor.h"
#include "kernel_tiling/kernel_tiling.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {

/* The host form of TCubeTiling: set_<field>() / get_<field>(), GetDataSize(), SaveToBuffer(). */
#define NPUEMU_TCUBE_HOST_FIELD(name) TILING_DATA_FIELD_DEF(int32_t, name)
BEGIN_TILING_DATA_DEF(TCubeTiling)
NPUEMU_TCUBE_TILING_FIELDS(NPUEMU_TCUBE_HOST_FIELD)
END_TILING_DATA_DEF;
#undef NPUEMU_TCUBE_HOST_FIELD

static_assert(sizeof(TCubeTiling) == sizeof(AscendC::tiling::TCubeTiling),
              "npu-emu: the host and kernel forms of TCubeTiling have one layout");

} // namespace optiling

namespace matmul_tiling {

enum class TPosition { GM = 0, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
/* ge::DataType values */
enum class DataType {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_BF16 = 27,
    DT_INT4 = 29,
    DT_UNDEFINED = 28,
};
enum class MatrixTraverse { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType { NORMAL = 0, HF32 = 1, MXMODE = 2 };
enum class DequantType { SCALAR = 0, TENSOR = 1 };
enum class ScheduleType { INNER_PRODUCT = 0, OUTER_PRODUCT = 1, N_BUFFER_33 = 2 };

/* What GetTiling needs of the shapes and types, and what it produced. */
class MatmulApiTilingBase {
public:
    explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC &ascendcPlatform)
        : platform_(ascendcPlatform), dim_(static_cast<int32_t>(ascendcPlatform.GetCoreNumAic()))
    {
    }
    MatmulApiTilingBase() : platform_(*platform_ascendc::PlatformAscendCManager::GetInstance()), dim_(1) {}
    virtual ~MatmulApiTilingBase() = default;

    int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false)
    {
        aSet_ = true;
        aType_ = dataType;
        aTrans_ = isTrans;
        (void)pos;
        (void)type;
        return 0;
    }
    int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false)
    {
        bSet_ = true;
        bType_ = dataType;
        bTrans_ = isTrans;
        (void)pos;
        (void)type;
        return 0;
    }
    int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType)
    {
        cSet_ = true;
        (void)pos;
        (void)type;
        (void)dataType;
        return 0;
    }
    int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType)
    {
        (void)pos;
        (void)type;
        (void)dataType;
        return 0;
    }
    int32_t SetShape(int32_t m, int32_t n, int32_t k)
    {
        m_ = m;
        n_ = n;
        k_ = k;
        return 0;
    }
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn) { return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn); }
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn)
    {
        orgM_ = orgMIn;
        orgN_ = orgNIn;
        orgKa_ = orgKaIn;
        orgKb_ = orgKbIn;
        return 0;
    }
    int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1)
    {
        fixM_ = baseMIn;
        fixN_ = baseNIn;
        fixK_ = baseKIn;
        return 0;
    }
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1)
    {
        l1_ = l1Size;
        l0c_ = l0CSize;
        (void)ubSize;
        (void)btSize;
        return 0;
    }
    int32_t SetBias(bool isBiasIn = false)
    {
        bias_ = isBiasIn;
        return 0;
    }
    int32_t EnableBias(bool isBiasIn = false) { return SetBias(isBiasIn); }
    int32_t SetTraverse(MatrixTraverse traverse)
    {
        traverse_ = traverse;
        return 0;
    }
    int32_t SetMadType(MatrixMadType madType)
    {
        (void)madType;
        return 0;
    }
    int32_t SetDequantType(DequantType dequantType)
    {
        (void)dequantType;
        return 0;
    }
    int32_t SetDoubleBuffer(bool a, bool b, bool c, bool bias, bool transND2NZ = true, bool transNZ2ND = true)
    {
        (void)a, (void)b, (void)c, (void)bias, (void)transND2NZ, (void)transNZ2ND;
        return 0;
    }
    int32_t SetSplitRange(int32_t maxBaseM = -1, int32_t maxBaseN = -1, int32_t maxBaseK = -1, int32_t minBaseM = -1,
                          int32_t minBaseN = -1, int32_t minBaseK = -1)
    {
        (void)maxBaseM, (void)maxBaseN, (void)maxBaseK, (void)minBaseM, (void)minBaseN, (void)minBaseK;
        return 0;
    }
    template <class... A>
    int32_t SetMatmulConfigParams(A...)
    {
        return 0;
    }
    template <class... A>
    int32_t SetALayout(A...)
    {
        return 0;
    }
    template <class... A>
    int32_t SetBLayout(A...)
    {
        return 0;
    }
    template <class... A>
    int32_t SetCLayout(A...)
    {
        return 0;
    }
    template <class... A>
    int32_t SetBatchNum(A...)
    {
        return 0;
    }
    template <class... A>
    int32_t SetBatchInfoForNormal(A...)
    {
        return 0;
    }

    int64_t GetTiling(optiling::TCubeTiling &tiling)
    {
        AscendC::tiling::TCubeTiling t;
        const int64_t r = GetTiling(t);
        if (r == 0) {
            std::memcpy(static_cast<void *>(&tiling), &t, sizeof t);
        }
        return r;
    }
    int64_t GetTiling(AscendC::tiling::TCubeTiling &tiling)
    {
        const char *why = Compute(tiling);
        if (why != nullptr) {
            std::fprintf(stderr, "[ERROR] npu-emu matmul tiling: GetTiling failed: %s\n", why);
            return -1;
        }
        return 0;
    }
    int32_t GetBaseM() const { return baseM_; }
    int32_t GetBaseN() const { return baseN_; }
    int32_t GetBaseK() const { return baseK_; }

protected:
    virtual bool MultiCore() const { return false; }
    static uint32_t TypeSize(DataType t)
    {
        switch (t) {
        case DataType::DT_FLOAT:
        case DataType::DT_INT32:
        case DataType::DT_UINT32: return 4;
        case DataType::DT_INT8:
        case DataType::DT_UINT8: return 1;
        default: return 2;
        }
    }
    static int32_t Up(int64_t v, int64_t a) { return static_cast<int32_t>((v + a - 1) / a * a); }

    /* Fill t; nullptr, or why not. */
    const char *Compute(AscendC::tiling::TCubeTiling &t)
    {
        if (!aSet_ || !bSet_ || !cSet_) {
            return "SetAType, SetBType and SetCType must be called first";
        }
        const int32_t M = m_ > 0 ? m_ : orgM_, N = n_ > 0 ? n_ : orgN_, K = k_ > 0 ? k_ : orgKa_;
        if (M <= 0 || N <= 0 || K <= 0) {
            return "the shape is not set (SetShape / SetOrgShape with positive M, N, K)";
        }
        const int32_t oM = orgM_ > 0 ? orgM_ : M, oN = orgN_ > 0 ? orgN_ : N;
        const int32_t oKa = orgKa_ > 0 ? orgKa_ : K, oKb = orgKb_ > 0 ? orgKb_ : K;
        if (M > oM || N > oN || K > oKa || K > oKb) {
            return "the shape (SetShape) exceeds the original shape (SetOrgShape)";
        }
        const uint32_t sa = TypeSize(aType_), sb = TypeSize(bType_);
        const int32_t c0 = static_cast<int32_t>(32 / sa);
        /* cores */
        int32_t singleM = Up(M, 16), singleN = Up(N, 16);
        int32_t mDim = 1, nDim = 1;
        if (MultiCore() && singleM_ <= 0) {
            const int32_t dims = dim_ > 0 ? dim_ : 1;
            int64_t best[4] = {-1, 0, 0, 0};
            for (int32_t md = 1; md <= dims; ++md) {
                for (int32_t nd = 1; md * nd <= dims; ++nd) {
                    const int32_t sm = Up((M + md - 1) / md, 16), sn = Up((N + nd - 1) / nd, 16);
                    const int32_t um = (M + sm - 1) / sm, un = (N + sn - 1) / sn;
                    /* smallest block, then the squarer one, then fewer splits of N (M is split
                     * first, as kernels that offset only A by the block index expect), then
                     * fewer cores */
                    const int64_t key[4] = {static_cast<int64_t>(sm) * sn, std::abs(sm - sn), un, um * un};
                    if (best[0] < 0 || std::lexicographical_compare(key, key + 4, best, best + 4)) {
                        std::copy(key, key + 4, best);
                        singleM = sm;
                        singleN = sn;
                        mDim = um;
                        nDim = un;
                    }
                }
            }
        } else if (singleM_ > 0) {
            singleM = singleM_;
            singleN = singleN_;
            mDim = (M + singleM - 1) / singleM;
            nDim = (N + singleN - 1) / singleN;
        }
        /* base blocks */
        const int32_t kMax = sa == 1 ? 128 : sa == 4 ? 32 : 64;
        int32_t bm = fixM_ > 0 ? fixM_ : std::min(128, Up(singleM, 16));
        int32_t bn = fixN_ > 0 ? fixN_ : std::min(256, Up(singleN, 16));
        int32_t bk = fixK_ > 0 ? fixK_ : std::min(kMax, Up(K, std::max(16, c0)));
        if (bm % 16 != 0 || bn % 16 != 0 || bk % 16 != 0) {
            return "baseM, baseN and baseK must be multiples of 16 (SetFixSplit)";
        }
        if (static_cast<int64_t>(bm) * bk * sa > 64 * 1024 || static_cast<int64_t>(bn) * bk * sb > 64 * 1024) {
            return "a base block of A or B does not fit L0A / L0B (64 KiB)";
        }
        const int64_t l0c = l0c_ > 0 ? l0c_ : 128 * 1024;
        if (static_cast<int64_t>(bm) * bn * 4 > l0c) {
            return "baseM x baseN does not fit L0C (128 KiB of float)";
        }
        const int32_t dbA = static_cast<int64_t>(bm) * bk * sa * 2 <= 64 * 1024 ? 2 : 1;
        const int32_t dbB = static_cast<int64_t>(bn) * bk * sb * 2 <= 64 * 1024 ? 2 : 1;
        const int64_t l1 = l1_ > 0 ? l1_ : 512 * 1024;
        const int32_t kIter = (K + bk - 1) / bk;
        int32_t step = kIter;
        while (step > 1 && (static_cast<int64_t>(bm) * sa + static_cast<int64_t>(bn) * sb) * bk * 2 * step > l1) {
            --step;
        }
        t = AscendC::tiling::TCubeTiling();
        t.usedCoreNum = mDim * nDim;
        t.M = oM;
        t.N = oN;
        t.Ka = oKa;
        t.Kb = oKb;
        t.singleCoreM = singleM;
        t.singleCoreN = singleN;
        t.singleCoreK = K;
        t.baseM = bm;
        t.baseN = bn;
        t.baseK = bk;
        t.stepM = 1;
        t.stepN = 1;
        t.stepKa = step;
        t.stepKb = step;
        t.depthA1 = 2 * step;
        t.depthB1 = 2 * step;
        t.isBias = bias_ ? 1 : 0;
        t.transLength = 0;
        t.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
        t.dbL0A = dbA;
        t.dbL0B = dbB;
        t.dbL0C = 1;
        t.batchM = 1;
        t.batchN = 1;
        t.singleBatchM = 1;
        t.singleBatchN = 1;
        t.BatchNum = 1;
        baseM_ = bm;
        baseN_ = bn;
        baseK_ = bk;
        usedM_ = mDim;
        usedN_ = nDim;
        outSingleM_ = singleM;
        outSingleN_ = singleN;
        outSingleK_ = K;
        return nullptr;
    }

    const platform_ascendc::PlatformAscendC &platform_;
    int32_t dim_;
    bool aSet_ = false, bSet_ = false, cSet_ = false, aTrans_ = false, bTrans_ = false, bias_ = false;
    DataType aType_ = DataType::DT_FLOAT16, bType_ = DataType::DT_FLOAT16;
    int32_t m_ = -1, n_ = -1, k_ = -1, orgM_ = -1, orgN_ = -1, orgKa_ = -1, orgKb_ = -1;
    int32_t fixM_ = -1, fixN_ = -1, fixK_ = -1, l1_ = -1, l0c_ = -1;
    int32_t singleM_ = -1, singleN_ = -1, singleK_ = -1;
    MatrixTraverse traverse_ = MatrixTraverse::NOSET;
    int32_t baseM_ = 0, baseN_ = 0, baseK_ = 0, usedM_ = 0, usedN_ = 0;
    int32_t outSingleM_ = 0, outSingleN_ = 0, outSingleK_ = 0;
};

/* One core: the single-core shape is the whole shape. */
class MatmulApiTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
};

/* Several cores: M and N split over at most SetDim(dim) of them. */
class MultiCoreMatmulTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
    int32_t SetDim(int32_t dim)
    {
        dim_ = dim;
        return 0;
    }
    int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1)
    {
        singleM_ = singleMIn;
        singleN_ = singleNIn;
        singleK_ = singleKIn;
        return 0;
    }
    int32_t SetSingleRange(int32_t maxM = -1, int32_t maxN = -1, int32_t maxK = -1, int32_t minM = -1, int32_t minN = -1,
                           int32_t minK = -1)
    {
        (void)maxM, (void)maxN, (void)maxK, (void)minM, (void)minN, (void)minK;
        return 0;
    }
    int32_t GetSingleShape(int32_t &shapeM, int32_t &shapeN, int32_t &shapeK) const
    {
        shapeM = outSingleM_;
        shapeN = outSingleN_;
        shapeK = outSingleK_;
        return 0;
    }
    int32_t GetCoreNum(int32_t &dim, int32_t &mDim, int32_t &nDim) const
    {
        dim = usedM_ * usedN_;
        mDim = usedM_;
        nDim = usedN_;
        return 0;
    }

protected:
    bool MultiCore() const override { return true; }
};

} // namespace matmul_tiling

/* ---- SoftMax / SimpleSoftMax tiling ----
 *
 *   ge::Shape shape({m, k});   // every dimension but the last is a row; k is 32-byte aligned
 *   uint32_t minTmp = AscendC::GetSoftMaxMinTmpSize(shape, sizeof(half), false);
 *   AscendC::SoftMaxTilingFunc(shape, sizeof(half), ubBytesLeft, tilingData.softmaxTilingData);
 *
 * npu-emu's tiling: srcM = the product of all dimensions but the last, srcK = the last;
 * outMaxK = reduceK = the elements of dataTypeSize in 32 bytes (the sum / max rows); splitM =
 * the rows whose float copies (srcK + 2 * 8 floats each) fit localWorkSpaceSize (at least 1,
 * at most srcM), splitK = srcK; rangeM = srcM / splitM, tailM = srcM % splitM. Temporary space:
 * at least one row in float (srcK + 16 floats), at most all rows (srcM times that). The CPU kernel
 * uses only srcM and srcK. */
namespace optiling {
#define NPUEMU_SOFTMAX_HOST_FIELD(name) TILING_DATA_FIELD_DEF(uint32_t, name)
BEGIN_TILING_DATA_DEF(SoftMaxTiling)
NPUEMU_SOFTMAX_TILING_FIELDS(NPUEMU_SOFTMAX_HOST_FIELD)
END_TILING_DATA_DEF;
#undef NPUEMU_SOFTMAX_HOST_FIELD
static_assert(sizeof(SoftMaxTiling) == sizeof(AscendC::tiling::SoftMaxTiling),
              "npu-emu: the host and kernel forms of SoftMaxTiling have one layout");
} // namespace optiling

namespace AscendC {
namespace npuemu_softmax {
inline void shape_mk(const ge::Shape &s, uint32_t &m, uint32_t &k)
{
    const size_t n = s.GetDimNum();
    k = n == 0 ? 0 : static_cast<uint32_t>(s.GetDim(n - 1));
    uint64_t rows = n == 0 ? 0 : 1;
    for (size_t i = 0; i + 1 < n; ++i) {
        rows *= static_cast<uint64_t>(s.GetDim(i));
    }
    m = static_cast<uint32_t>(rows);
}
inline uint32_t row_bytes(uint32_t k) { return (k + 16) * 4; }
} // namespace npuemu_softmax

inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize, const bool isReuseSource)
{
    (void)dataTypeSize;
    (void)isReuseSource;
    uint32_t m, k;
    npuemu_softmax::shape_mk(srcShape, m, k);
    return m * npuemu_softmax::row_bytes(k);
}
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize, const bool isReuseSource)
{
    (void)dataTypeSize;
    (void)isReuseSource;
    uint32_t m, k;
    npuemu_softmax::shape_mk(srcShape, m, k);
    return m == 0 ? 0 : npuemu_softmax::row_bytes(k);
}
inline void SoftMaxTilingFunc(const ge::Shape &srcShape, const uint32_t dataTypeSize, const uint32_t localWorkSpaceSize,
                              AscendC::tiling::SoftMaxTiling &softmaxTiling)
{
    uint32_t m, k;
    npuemu_softmax::shape_mk(srcShape, m, k);
    AscendC::tiling::SoftMaxTiling t;
    const uint32_t per = dataTypeSize == 0 ? 8 : 32 / dataTypeSize;
    t.srcM = m;
    t.srcK = k;
    t.srcSize = m * k;
    t.outMaxM = m;
    t.outMaxK = per;
    t.outMaxSize = m * per;
    uint32_t split = localWorkSpaceSize / npuemu_softmax::row_bytes(k);
    split = std::max<uint32_t>(1, std::min<uint32_t>(split, m));
    t.splitM = split;
    t.splitK = k;
    t.splitSize = split * k;
    t.reduceM = split;
    t.reduceK = per;
    t.reduceSize = split * per;
    t.rangeM = split == 0 ? 0 : m / split;
    t.tailM = split == 0 ? 0 : m % split;
    t.tailSplitSize = t.tailM * k;
    t.tailReduceSize = t.tailM * per;
    softmaxTiling = t;
}
inline void SoftMaxTilingFunc(const ge::Shape &srcShape, const uint32_t dataTypeSize, const uint32_t localWorkSpaceSize,
                              optiling::SoftMaxTiling &softmaxTiling)
{
    AscendC::tiling::SoftMaxTiling t;
    SoftMaxTilingFunc(srcShape, dataTypeSize, localWorkSpaceSize, t);
    static_assert(sizeof(t) == sizeof(softmaxTiling), "npu-emu: one SoftMaxTiling layout");
    std::memcpy(static_cast<void *>(&softmaxTiling), &t, sizeof(t));
}
} // namespace AscendC

/* ---- LayerNorm tiling ----
 *
 *   ge::Shape shape({b, s, h});   // h 32-byte aligned
 *   uint32_t maxTmp, minTmp;
 *   AscendC::GetLayerNormMaxMinTmpSize(shape, sizeof(float), false, maxTmp, minTmp);
 *   AscendC::GetLayerNormNDTilingInfo(shape, minTmp, sizeof(float), false, tilingData.layernormTilingData);
 *
 * npu-emu's tiling: bLength, sLength, hLength = the shape (originalHLength = hLength),
 * inputXSize = b * s * h, meanVarSize = b * s, lastDimValueBack = 1 / h; the rows are processed in
 * rounds of what the stack buffer holds (3 float copies of a row each; at least 1 row).
 * Temporary space: at least 3 rows in float, at most all of them. The CPU kernel uses only the
 * shape fields. */
namespace optiling {
#define NPUEMU_LAYERNORM_HOST_FIELD(name) TILING_DATA_FIELD_DEF(uint32_t, name)
BEGIN_TILING_DATA_DEF(LayerNormTiling)
NPUEMU_LAYERNORM_TILING_FIELDS(NPUEMU_LAYERNORM_HOST_FIELD)
TILING_DATA_FIELD_DEF(float, lastDimValueBack)
END_TILING_DATA_DEF;
#undef NPUEMU_LAYERNORM_HOST_FIELD
static_assert(sizeof(LayerNormTiling) == sizeof(AscendC::tiling::LayerNormTiling),
              "npu-emu: the host and kernel forms of LayerNormTiling have one layout");
} // namespace optiling

namespace AscendC {
inline void GetLayerNormMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      uint32_t &maxValue, uint32_t &minValue)
{
    (void)typeSize;
    (void)isReuseSource;
    const size_t n = srcShape.GetDimNum();
    const uint64_t h = n == 0 ? 0 : static_cast<uint64_t>(srcShape.GetDim(n - 1));
    const uint64_t rows = n == 0 ? 0 : static_cast<uint64_t>(srcShape.GetShapeSize()) / (h == 0 ? 1 : h);
    minValue = static_cast<uint32_t>(3 * h * 4);
    maxValue = static_cast<uint32_t>(3 * h * 4 * (rows == 0 ? 1 : rows));
}
inline void GetLayerNormNDTilingInfo(const ge::Shape &srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, AscendC::tiling::LayerNormTiling &tiling)
{
    (void)typeSize;
    (void)isReuseSource;
    AscendC::tiling::LayerNormTiling t;
    const size_t n = srcShape.GetDimNum();
    t.hLength = n == 0 ? 0 : static_cast<uint32_t>(srcShape.GetDim(n - 1));
    t.sLength = n < 2 ? 1 : static_cast<uint32_t>(srcShape.GetDim(n - 2));
    uint64_t b = 1;
    for (size_t i = 0; i + 2 < n; ++i) {
        b *= static_cast<uint64_t>(srcShape.GetDim(i));
    }
    t.bLength = static_cast<uint32_t>(b);
    t.originalHLength = t.hLength;
    t.inputXSize = t.bLength * t.sLength * t.hLength;
    t.meanVarSize = t.bLength * t.sLength;
    t.numberOfTmpBuf = 3;
    const uint32_t row = 3 * t.hLength * 4;
    uint32_t rows = row == 0 ? 1 : stackBufferSize / row;
    rows = std::max<uint32_t>(1, std::min<uint32_t>(rows, std::max<uint32_t>(1, t.meanVarSize)));
    t.tmpBufSize = stackBufferSize / 4;
    t.oneTmpSize = rows * t.hLength;
    t.firstTmpStartPos = 0;
    t.secondTmpStartPos = t.oneTmpSize;
    t.thirdTmpStartPos = 2 * t.oneTmpSize;
    t.loopRound = t.meanVarSize / rows;
    t.inputRoundSize = rows * t.hLength;
    t.inputTailSize = (t.meanVarSize % rows) * t.hLength;
    t.inputTailPos = t.loopRound * t.inputRoundSize;
    t.meanVarRoundSize = rows;
    t.meanVarTailSize = t.meanVarSize % rows;
    t.meanVarTailPos = t.loopRound * rows;
    t.bshCurLength = t.inputRoundSize;
    t.bsCurLength = rows;
    t.lastDimValueBack = t.hLength == 0 ? 0.0f : 1.0f / static_cast<float>(t.hLength);
    tiling = t;
}
inline void GetLayerNormNDTilingInfo(const ge::Shape &srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, optiling::LayerNormTiling &tiling)
{
    AscendC::tiling::LayerNormTiling t;
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, t);
    std::memcpy(static_cast<void *>(&tiling), &t, sizeof(t));
}
/* The earlier spelling of the reference. */
inline void GetLayerNormNDTillingInfo(const ge::Shape &srcShape, const uint32_t stackBufferSize,
                                      const uint32_t typeSize, const bool isReuseSource,
                                      optiling::LayerNormTiling &tilling)
{
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, tilling);
}
} // namespace AscendC

#endif /* NPUEMU_TILING_TILING_API_H */
