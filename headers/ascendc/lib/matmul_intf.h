/* npu-emu Ascend C CPU headers: the high-level Matmul API (`#include "lib/matmul_intf.h"`).
 *
 *   Matmul<MatmulType<pos, format, T, trans>, B, C, Bias[, MM_CFG]> mm;
 *   REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);   (or mm.Init(&tiling))
 *   mm.SetTensorA(aGlobal[, isTransposeA]); mm.SetTensorB(bGlobal[, isTransposeB]); mm.SetBias(biasGlobal);
 *   while (mm.Iterate()) { mm.GetTensorC(cLocal | cGlobal[, enAtomic, enSequentialWrite]); }   or
 *   mm.IterateAll(cGlobal[, enAtomic]);
 *   mm.End();
 *
 * The block computes its single-core part of C = A x B (+ bias): singleCoreM x singleCoreN x
 * singleCoreK of the tiling (or SetSingleShape / SetTail), in base blocks of baseM x baseN, walked
 * M first (iterateOrder 0) or N first (1). A and B may be in GM or in local memory, ND or NZ,
 * transposed or not; the types are those of Mmad (half, bfloat16_t, float, int8_t inputs; float,
 * half, bfloat16_t or int32_t output, converted with round-to-nearest-even). Products are exact
 * and added in the order of k with one float rounding each, as Mmad does (npu_emu::cube): where
 * the NPU accumulates base blocks of K in L0C in that order too, only its internal summation
 * inside a block of 16 may differ in the last bit of float.
 *
 * GetTensorC into a LocalTensor writes the base block as curM rows of curN elements, the row
 * length rounded up to 32 bytes (baseN for full blocks); into a GlobalTensor it writes at the
 * block's place in C (row length N of the tiling, or SetOrgShape), or contiguously with
 * enSequentialWrite. Global memory is checked like every other access. The system workspace is
 * not used. */
#ifndef NPUEMU_LIB_MATMUL_INTF_H
#define NPUEMU_LIB_MATMUL_INTF_H

#if __cplusplus < 201703L
#error "npu-emu: lib/matmul_intf.h (the Matmul high-level API) needs C++17 (-std=c++17), as CANN's does"
#endif

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"

/* The layout of a Matmul operand (a global enum, as in CANN). */
enum class CubeFormat {
    ND = 0,
    NZ,
    ZN,
    ZZ,
    NN,
    ND_ALIGN,
    SCALAR,
    VECTOR,
    ROW_MAJOR = ND,
};

namespace AscendC {

using ::CubeFormat;

enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
};

enum class MatmulVersion { NORMAL = 0, MULTI_DATA_LOAD, BASIC_BLOCK, IBSHARE_NORM, SPECIAL_BASIC_BLOCK };

/* The configuration template argument: only its kind matters on the CPU (every configuration
 * computes the same C). */
struct MatmulConfig {
    bool doNorm = true;
    bool doBasicBlock = false;
    bool doMultiDataLoad = false;
    uint32_t basicM = 0;
    uint32_t basicN = 0;
    uint32_t basicK = 0;
    bool intrinsicsCheck = false;
    bool isNBatch = false;
    bool enVecND2NZ = false;
    bool doSpecialBasicBlock = false;
    uint32_t doMTE2Preload = 0;
    uint32_t singleCoreM = 0;
    uint32_t singleCoreN = 0;
    uint32_t singleCoreK = 0;
    uint32_t stepM = 0;
    uint32_t stepN = 0;
    uint32_t baseMN = 0;
    uint32_t singleCoreMN = 0;
    bool enUnitFlag = true;
    bool isPerTensor = false;
    bool hasAntiQuantOffset = false;
    bool doIBShareNorm = false;
    bool doSpecialMDL = false;
    bool enableInit = true;
    uint32_t batchMode = 0;
    bool enableEnd = true;
    bool enableGetTensorC = true;
    bool enableSetOrgShape = true;
    bool enableSetBias = true;
    bool enableSetTail = true;
    bool enableQuantVector = true;
    bool enableSetDefineData = true;
    uint8_t iterateMode = 0;
    bool enableReuse = true;
    bool enableUBReuse = false;
    bool enableL1CacheUB = false;
    bool intraBlockPartSum = false;
    uint32_t iterateOrder = 0;
    uint32_t scheduleType = 0;
    bool enableDoubleCache = false;
    bool isBiasBatch = true;
    bool enableStaticPadZeros = false;
    bool isPartialOutput = false;
    bool enableMixDualMaster = false;
    bool isA2B2Shared = false;
    bool isEnableChannelSplit = false;
    bool enableKdimReorderLoad = false;
};
NPUEMU_INLINE_VAR constexpr MatmulConfig CFG_NORM = {};
NPUEMU_INLINE_VAR constexpr MatmulConfig CFG_MDL = {false, false, true};
NPUEMU_INLINE_VAR constexpr MatmulConfig CFG_IBSHARE_NORM = {};
NPUEMU_INLINE_VAR constexpr MatmulConfig CFG_IBSHARE_MDL = {false, false, true};
NPUEMU_INLINE_VAR constexpr MatmulConfig CFG_SPECIALMDL = {false, false, true};
template <class... A> constexpr MatmulConfig GetNormalConfig(A...) { return CFG_NORM; }
template <class... A> constexpr MatmulConfig GetMDLConfig(A...) { return CFG_MDL; }
template <class... A> constexpr MatmulConfig GetSpecialMDLConfig(A...) { return CFG_MDL; }
template <class... A> constexpr MatmulConfig GetIBShareNormConfig(A...) { return CFG_NORM; }
template <class... A> constexpr MatmulConfig GetBasicConfig(A...) { return CFG_NORM; }

template <auto... Callbacks> struct MatmulCallBackFunc {};

} // namespace AscendC

namespace npuemu {
namespace mm {

/* Element (r, c) of a stored R x C matrix: ND row-major, or NZ (column blocks of C0 elements,
 * the rows rounded up to 16). */
struct Layout {
    bool nz = false;
    uint64_t rows = 0, cols = 0;
    uint32_t c0 = 16;
    NPUEMU_ALWAYS_INLINE uint64_t at(uint64_t r, uint64_t c) const
    {
        if (!nz) {
            return r * cols + c;
        }
        const uint64_t arows = (rows + 15) / 16 * 16;
        return ((c / c0) * arows + r) * c0 + c % c0;
    }
};

/* A growable array whose filling is done outside the kernel-code access instrumentation (the
 * staging copies of A, B and C are the bulk of a Matmul's memory traffic). */
template <class T>
struct Buf {
    std::unique_ptr<T[]> p;
    size_t n = 0, cap = 0;
    NPUEMU_NOSAN void assign(size_t count, T v)
    {
        if (count > cap) {
            p.reset(new T[count]);
            cap = count;
        }
        n = count;
        T *q = p.get();
        for (size_t i = 0; i < count; ++i) {
            q[i] = v;
        }
    }
    T *data() { return p.get(); }
    const T *data() const { return p.get(); }
    size_t size() const { return n; }
    bool empty() const { return n == 0; }
};

/* Where element (i, j) of a block of C goes: (i0 + i, j0 + j) of an ND matrix of row length ld,
 * or of an NZ matrix whose rows are rounded up to am. */
template <class T>
struct DstAt {
    T *d;
    uint64_t ld;
    uint64_t am;
    bool nz;
    uint64_t i0;
    uint64_t j0;
    NPUEMU_ALWAYS_INLINE T *operator()(uint64_t i, uint64_t j) const
    {
        i += i0;
        j += j0;
        return nz ? d + ((j / 16) * am + i) * 16 + j % 16 : d + i * ld + j;
    }
};

/* A matrix operand (A, B) or the bias: where it is. */
template <class T>
struct Operand {
    bool set = false;
    bool scalar = false;
    T value = T(0);
    const void *gaddr = nullptr; /* GM (alias or canonical address) */
    const T *local = nullptr;    /* UB / L1 */
    uint64_t local_elems = 0;
    bool trans = false;

    /* Pointer p with p[i] the stored element i for i < n, checked. */
    const T *elems(uint64_t n, const char *api, const char *which) const
    {
        if (local != nullptr) {
            if (n > local_elems) {
                fault("%s: %s needs %llu elements of its LocalTensor, which holds %llu", api, which,
                      static_cast<unsigned long long>(n), static_cast<unsigned long long>(local_elems));
            }
            return local;
        }
        char what[96];
        std::snprintf(what, sizeof what, "%s reads %s", api, which);
        return reinterpret_cast<const T *>(gm_translate(gaddr, n * sizeof(T), what));
    }
};

template <class T> struct is_int8 : std::integral_constant<bool, std::is_same<T, int8_t>::value> {};

} // namespace mm
} // namespace npuemu

namespace AscendC {

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const MatmulConfig &MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<>, class... NpuemuPolicy>
class Matmul {
public:
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;

private:
    static constexpr bool kInt = std::is_same<SrcAT, int8_t>::value;
    static_assert(detail_mm::mmad_types<SrcAT, SrcBT, typename std::conditional<kInt, int32_t, float>::type>::ok,
                  "npu-emu: Matmul supports half x half, bfloat16_t x bfloat16_t, float x float and int8_t x int8_t");
    static_assert(kInt ? std::is_same<DstT, int32_t>::value || std::is_same<DstT, half>::value
                       : std::is_same<DstT, float>::value || std::is_same<DstT, half>::value ||
                             std::is_same<DstT, bfloat16_t>::value,
                  "npu-emu: Matmul: C must be float, half or bfloat16_t (int32_t or half for int8_t inputs)");
    static_assert(A_TYPE::format == CubeFormat::ND || A_TYPE::format == CubeFormat::NZ,
                  "npu-emu: Matmul: A must be ND or NZ");
    static_assert(B_TYPE::format == CubeFormat::ND || B_TYPE::format == CubeFormat::NZ,
                  "npu-emu: Matmul: B must be ND or NZ");
    static_assert(C_TYPE::format == CubeFormat::ND || C_TYPE::format == CubeFormat::NZ ||
                      C_TYPE::format == CubeFormat::ND_ALIGN,
                  "npu-emu: Matmul: C must be ND, ND_ALIGN or NZ");
    static_assert(A_TYPE::pos != TPosition::CO1 && B_TYPE::pos != TPosition::CO1,
                  "npu-emu: Matmul: A and B come from GM, VECIN/VECOUT/VECCALC or TSCM");

public:
    __aicore__ inline Matmul() {}

    __aicore__ inline void Init(const TCubeTiling *cubeTiling, TPipe *tpipe = nullptr)
    {
        (void)tpipe;
        if (cubeTiling == nullptr) {
            npuemu::fault("Matmul::Init: the tiling is NULL");
        }
        tiling_ = *cubeTiling;
        const TCubeTiling &t = tiling_;
        if (t.M <= 0 || t.N <= 0 || t.Ka <= 0 || t.Kb <= 0 || t.baseM <= 0 || t.baseN <= 0 || t.baseK <= 0 ||
            t.singleCoreM <= 0 || t.singleCoreN <= 0 || t.singleCoreK <= 0) {
            npuemu::fault("Matmul::Init: the tiling has M %d, N %d, Ka %d, Kb %d, singleCore %d x %d x %d, base %d x %d x "
                          "%d: each must be positive (was it filled by GetTiling and copied to the kernel?)",
                          t.M, t.N, t.Ka, t.Kb, t.singleCoreM, t.singleCoreN, t.singleCoreK, t.baseM, t.baseN, t.baseK);
        }
        orgM_ = t.M;
        orgN_ = t.N;
        orgKa_ = t.Ka;
        orgKb_ = t.Kb;
        orgKc_ = t.N;
        singleM_ = t.singleCoreM;
        singleN_ = t.singleCoreN;
        singleK_ = t.singleCoreK;
        inited_ = true;
        Reset();
    }
    __aicore__ inline void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
    __aicore__ inline void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0)
    {
        if (orgM <= 0 || orgN <= 0 || orgKa <= 0 || orgKb <= 0 || orgKc < 0) {
            npuemu::fault("Matmul::SetOrgShape(%d, %d, %d, %d, %d): the sizes must be positive", orgM, orgN, orgKa, orgKb,
                          orgKc);
        }
        orgM_ = orgM;
        orgN_ = orgN;
        orgKa_ = orgKa;
        orgKb_ = orgKb;
        orgKc_ = orgKc > 0 ? orgKc : orgN;
        Reset();
    }
    __aicore__ inline void SetSingleShape(int singleM, int singleN, int singleK)
    {
        if (singleM <= 0 || singleN <= 0 || singleK <= 0) {
            npuemu::fault("Matmul::SetSingleShape(%d, %d, %d): the sizes must be positive", singleM, singleN, singleK);
        }
        singleM_ = singleM;
        singleN_ = singleN;
        singleK_ = singleK;
        Reset();
    }
    __aicore__ inline void SetTail(int tailM = -1, int tailN = -1, int tailK = -1)
    {
        if (tailM > 0) {
            singleM_ = tailM;
        }
        if (tailN > 0) {
            singleN_ = tailN;
        }
        if (tailK > 0) {
            singleK_ = tailK;
        }
        Reset();
    }

    __aicore__ inline void SetTensorA(const GlobalTensor<SrcAT> &gm, bool isTransposeA = false)
    {
        a_ = npuemu::mm::Operand<SrcAT>();
        a_.set = true;
        a_.gaddr = gm.addr_;
        a_.trans = isTransposeA || A_TYPE::isTrans;
        Reset();
    }
    __aicore__ inline void SetTensorA(const LocalTensor<SrcAT> &local, bool isTransposeA = false)
    {
        local.check_ub("Matmul::SetTensorA");
        a_ = npuemu::mm::Operand<SrcAT>();
        a_.set = true;
        a_.local = local.addr_;
        a_.local_elems = local.capacity_ / sizeof(SrcAT);
        a_.trans = isTransposeA || A_TYPE::isTrans;
        Reset();
    }
    __aicore__ inline void SetTensorA(SrcAT aScalar)
    {
        a_ = npuemu::mm::Operand<SrcAT>();
        a_.set = true;
        a_.scalar = true;
        a_.value = aScalar;
        Reset();
    }
    __aicore__ inline void SetTensorB(const GlobalTensor<SrcBT> &gm, bool isTransposeB = false)
    {
        b_ = npuemu::mm::Operand<SrcBT>();
        b_.set = true;
        b_.gaddr = gm.addr_;
        b_.trans = isTransposeB || B_TYPE::isTrans;
        Reset();
    }
    __aicore__ inline void SetTensorB(const LocalTensor<SrcBT> &local, bool isTransposeB = false)
    {
        local.check_ub("Matmul::SetTensorB");
        b_ = npuemu::mm::Operand<SrcBT>();
        b_.set = true;
        b_.local = local.addr_;
        b_.local_elems = local.capacity_ / sizeof(SrcBT);
        b_.trans = isTransposeB || B_TYPE::isTrans;
        Reset();
    }
    __aicore__ inline void SetTensorB(SrcBT bScalar)
    {
        b_ = npuemu::mm::Operand<SrcBT>();
        b_.set = true;
        b_.scalar = true;
        b_.value = bScalar;
        Reset();
    }
    __aicore__ inline void SetBias(const GlobalTensor<BiasT> &gm)
    {
        bias_ = npuemu::mm::Operand<BiasT>();
        bias_.set = true;
        bias_.gaddr = gm.addr_;
        Reset();
    }
    __aicore__ inline void SetBias(const LocalTensor<BiasT> &local)
    {
        local.check_ub("Matmul::SetBias");
        bias_ = npuemu::mm::Operand<BiasT>();
        bias_.set = true;
        bias_.local = local.addr_;
        bias_.local_elems = local.capacity_ / sizeof(BiasT);
        Reset();
    }
    __aicore__ inline void DisableBias()
    {
        bias_ = npuemu::mm::Operand<BiasT>();
        Reset();
    }
    __aicore__ inline void ClearBias() { DisableBias(); }

    /* Workspaces and precision modes have no effect on the CPU. */
    template <class W>
    __aicore__ inline void SetLocalWorkspace(const W &) {}
    template <class... W>
    __aicore__ inline void SetWorkspace(W &&...) {}
    __aicore__ inline void SetHF32(bool enableHF32 = false, int32_t transMode = 0)
    {
        (void)enableHF32;
        (void)transMode;
    }
    __aicore__ inline void SetSubBlockIdx(uint8_t) {}
    __aicore__ inline void SetQuantScalar(const uint64_t quantScalar) { quant_ = quantScalar; }

    /* The next base block of C; false when every block of the single-core shape has been done. */
    template <bool sync = true>
    __aicore__ inline bool Iterate(bool enPartialSum = false)
    {
        Prepare("Matmul::Iterate");
        if (next_ >= mIter_ * nIter_) {
            return false;
        }
        const TCubeTiling &t = tiling_;
        const uint32_t idx = next_++;
        if (t.iterateOrder == 1) {
            ni_ = idx % nIter_;
            mi_ = idx / nIter_;
        } else {
            mi_ = idx % mIter_;
            ni_ = idx / mIter_;
        }
        m0_ = mi_ * static_cast<uint32_t>(t.baseM);
        n0_ = ni_ * static_cast<uint32_t>(t.baseN);
        curM_ = std::min<uint32_t>(t.baseM, M_ - m0_);
        curN_ = std::min<uint32_t>(t.baseN, N_ - n0_);
        const size_t n = static_cast<size_t>(curM_) * curN_;
        if (!enPartialSum || block_.size() != n) {
            block_.assign(n, 0.0f);
            iblock_.assign(kInt ? n : 0, 0);
            InitBlock(block_.data(), curN_, curM_, curN_, n0_);
        }
        Compute(m0_, n0_, curM_, curN_, block_.data(), iblock_.data(), curN_);
        have_block_ = true;
        return true;
    }

    template <bool sync = true>
    __aicore__ inline void GetTensorC(const LocalTensor<DstT> &c, uint8_t enAtomic = 0, bool enSequentialWrite = false)
    {
        (void)enSequentialWrite;
        const char *api = "Matmul::GetTensorC (LocalTensor)";
        RequireBlock(api);
        c.check_ub(api);
        const uint32_t row = RowLen(curN_);
        const uint64_t need = C_TYPE::format == CubeFormat::NZ
                                  ? static_cast<uint64_t>((curN_ + 15) / 16) * ((curM_ + 15) / 16 * 16) * 16
                                  : static_cast<uint64_t>(curM_ - 1) * row + curN_;
        if (need > c.capacity_ / sizeof(DstT)) {
            npuemu::fault("%s: the %u x %u block needs %llu %s elements, the LocalTensor has room for %u", api, curM_,
                          curN_, static_cast<unsigned long long>(need), npuemu::type_name<DstT>::get(),
                          static_cast<uint32_t>(c.capacity_ / sizeof(DstT)));
        }
        const uint32_t am = (curM_ + 15) / 16 * 16;
        WriteBlock(block_.data(), iblock_.data(), curN_, curM_, curN_, enAtomic,
                   npuemu::mm::DstAt<DstT>{c.addr_, row, am, C_TYPE::format == CubeFormat::NZ, 0, 0});
    }

    template <bool sync = true>
    __aicore__ inline void GetTensorC(const GlobalTensor<DstT> &gm, uint8_t enAtomic = 0, bool enSequentialWrite = false)
    {
        const char *api = "Matmul::GetTensorC (GlobalTensor)";
        RequireBlock(api);
        if (enSequentialWrite) {
            const uint64_t ext = static_cast<uint64_t>(curM_) * curN_;
            DstT *d = reinterpret_cast<DstT *>(npuemu::gm_translate(gm.addr_, ext * sizeof(DstT), "Matmul::GetTensorC writes"));
            WriteBlock(block_.data(), iblock_.data(), curN_, curM_, curN_, enAtomic,
                       npuemu::mm::DstAt<DstT>{d, curN_, 0, false, 0, 0});
            return;
        }
        WriteToGm(api, gm, block_.data(), iblock_.data(), curN_, m0_, n0_, curM_, curN_, enAtomic);
    }

    template <bool sync = true>
    __aicore__ inline void GetTensorC(const GlobalTensor<DstT> &gm, const LocalTensor<DstT> &c, uint8_t enAtomic = 0,
                                      bool enSequentialWrite = false)
    {
        GetTensorC<sync>(gm, enAtomic, enSequentialWrite);
        GetTensorC<sync>(c, 0, enSequentialWrite);
    }

    /* Every block of the single-core shape into C at gm (row length N of the tiling / SetOrgShape). */
    template <bool sync = true>
    __aicore__ inline void IterateAll(const GlobalTensor<DstT> &gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                                      bool waitIterateAll = false, bool fakeMsg = false)
    {
        (void)enSequentialWrite;
        (void)waitIterateAll;
        (void)fakeMsg;
        const char *api = "Matmul::IterateAll";
        Prepare(api);
        npuemu::mm::Buf<float> all;
        npuemu::mm::Buf<int32_t> iall;
        all.assign(static_cast<size_t>(M_) * N_, 0.0f);
        iall.assign(kInt ? all.size() : 0, 0);
        InitBlock(all.data(), N_, M_, N_, 0);
        Compute(0, 0, M_, N_, all.data(), iall.data(), N_);
        WriteToGm(api, gm, all.data(), iall.data(), N_, 0, 0, M_, N_, enAtomic);
        next_ = mIter_ * nIter_;
    }
    template <bool sync = true>
    __aicore__ inline void IterateAll(const LocalTensor<DstT> &ubCmatrix, uint8_t enAtomic = 0)
    {
        const char *api = "Matmul::IterateAll (LocalTensor)";
        Prepare(api);
        ubCmatrix.check_ub(api);
        npuemu::mm::Buf<float> all;
        npuemu::mm::Buf<int32_t> iall;
        all.assign(static_cast<size_t>(M_) * N_, 0.0f);
        iall.assign(kInt ? all.size() : 0, 0);
        InitBlock(all.data(), N_, M_, N_, 0);
        Compute(0, 0, M_, N_, all.data(), iall.data(), N_);
        const uint32_t row = RowLen(N_);
        if (static_cast<uint64_t>(M_ - 1) * row + N_ > ubCmatrix.capacity_ / sizeof(DstT)) {
            npuemu::fault("%s: C (%u x %u) does not fit the LocalTensor (%u bytes)", api, M_, N_, ubCmatrix.capacity_);
        }
        WriteBlock(all.data(), iall.data(), N_, M_, N_, enAtomic,
                   npuemu::mm::DstAt<DstT>{ubCmatrix.addr_, row, 0, false, 0, 0});
        next_ = mIter_ * nIter_;
    }
    __aicore__ inline void WaitIterateAll() {}
    __aicore__ inline void End()
    {
        a_ = npuemu::mm::Operand<SrcAT>();
        b_ = npuemu::mm::Operand<SrcBT>();
        bias_ = npuemu::mm::Operand<BiasT>();
        Reset();
    }

    /* npu-emu internals */
    const TCubeTiling &npuemu_tiling() const { return tiling_; }

private:
    void Reset()
    {
        ready_ = false;
        have_block_ = false;
        next_ = 0;
    }
    void RequireBlock(const char *api) const
    {
        if (!have_block_) {
            npuemu::fault("%s before Iterate() produced a block of C", api);
        }
    }
    /* Elements of a row of a block in local memory: curN rounded up to 32 bytes. */
    static uint32_t RowLen(uint32_t n)
    {
        const uint32_t e = 32 / sizeof(DstT);
        return (n + e - 1) / e * e;
    }

    /* Check the state, then convert A and B of the single-core shape to row-major float once. */
    void Prepare(const char *api)
    {
        if (!inited_) {
            npuemu::fault("%s: the Matmul object has no tiling (REGIST_MATMUL_OBJ(..., &tiling) or Init(&tiling) "
                          "first)",
                          api);
        }
        if (!a_.set || !b_.set) {
            npuemu::fault("%s: %s", api, !a_.set ? "SetTensorA was not called" : "SetTensorB was not called");
        }
        if (ready_) {
            return;
        }
        const TCubeTiling &t = tiling_;
        M_ = static_cast<uint32_t>(singleM_);
        N_ = static_cast<uint32_t>(singleN_);
        K_ = static_cast<uint32_t>(singleK_);
        mIter_ = (M_ + t.baseM - 1) / t.baseM;
        nIter_ = (N_ + t.baseN - 1) / t.baseN;
        /* A (M x K): stored orgM x orgKa, or orgKa x orgM transposed */
        npuemu::mm::Layout la;
        la.nz = A_TYPE::format == CubeFormat::NZ;
        la.c0 = 32 / sizeof(SrcAT);
        la.rows = a_.trans ? orgKa_ : orgM_;
        la.cols = a_.trans ? orgM_ : orgKa_;
        npuemu::mm::Layout lb;
        lb.nz = B_TYPE::format == CubeFormat::NZ;
        lb.c0 = 32 / sizeof(SrcBT);
        lb.rows = b_.trans ? orgN_ : orgKb_;
        lb.cols = b_.trans ? orgKb_ : orgN_;
        if (!a_.scalar && (K_ > static_cast<uint32_t>(orgKa_) || (!la.nz && M_ > static_cast<uint32_t>(orgM_)))) {
            npuemu::fault("%s: the single-core shape %u x %u x %u exceeds A's original shape %d x %d", api, M_, N_, K_,
                          orgM_, orgKa_);
        }
        if (!b_.scalar && K_ > static_cast<uint32_t>(orgKb_)) {
            npuemu::fault("%s: singleCoreK %u exceeds B's original Kb %d", api, K_, orgKb_);
        }
        fa_.assign(static_cast<size_t>(M_) * K_, 0.0f);
        fb_.assign(static_cast<size_t>(K_) * N_, 0.0f);
        ia_.assign(kInt ? fa_.size() : 0, 0);
        ib_.assign(kInt ? fb_.size() : 0, 0);
        if (a_.scalar) {
            fa_.assign(fa_.size(), static_cast<float>(a_.value));
        } else {
            const uint64_t last = a_.trans ? la.at(K_ - 1, M_ - 1) : la.at(M_ - 1, K_ - 1);
            const SrcAT *p = a_.elems(last + 1, api, "A");
            Gather(p, la, a_.trans, M_, K_, fa_.data(), ia_.data());
        }
        if (b_.scalar) {
            fb_.assign(fb_.size(), static_cast<float>(b_.value));
        } else {
            const uint64_t last = b_.trans ? lb.at(N_ - 1, K_ - 1) : lb.at(K_ - 1, N_ - 1);
            const SrcBT *p = b_.elems(last + 1, api, "B");
            /* B (K x N): element (k, n) is stored (k, n), or (n, k) transposed */
            Gather(p, lb, b_.trans, K_, N_, fb_.data(), ib_.data());
        }
        bias_vals_.clear();
        if (bias_.set) {
            const BiasT *p = bias_.elems(N_, api, "the bias");
            bias_vals_.resize(N_);
            for (uint32_t j = 0; j < N_; ++j) {
                bias_vals_[j] = static_cast<float>(p[j]);
            }
        }
        ready_ = true;
        next_ = 0;
        have_block_ = false;
    }

    /* rows x cols of a logical matrix X from stored data: X(r, c) = stored(r, c), or stored(c, r). */
    template <class S>
    NPUEMU_NOSAN static void Gather(const S *p, const npuemu::mm::Layout &l, bool trans, uint32_t rows, uint32_t cols,
                                    float *out, int32_t *iout)
    {
        if (std::is_same<S, half>::value && !trans && !l.nz) {
            /* fp16 rows, contiguous: the bulk conversion of libascendcl (F16C when present) */
            for (uint32_t r = 0; r < rows; ++r) {
                if (npuemu_f16_to_f32(reinterpret_cast<const uint16_t *>(p + l.at(r, 0)),
                                      out + static_cast<size_t>(r) * cols, cols) != 0) {
                    npuemu::fault("Matmul: the fp16 conversion (npuemu_f16_to_f32 of libascendcl) failed");
                }
            }
            return;
        }
        for (uint32_t r = 0; r < rows; ++r) {
            for (uint32_t c = 0; c < cols; ++c) {
                const S v = trans ? p[l.at(c, r)] : p[l.at(r, c)];
                out[static_cast<size_t>(r) * cols + c] = static_cast<float>(v);
                if (kInt) {
                    iout[static_cast<size_t>(r) * cols + c] = static_cast<int32_t>(v);
                }
            }
        }
    }

    /* Initial value of a block: the bias (row n0 + j), or 0. */
    NPUEMU_NOSAN void InitBlock(float *c, uint32_t ldc, uint32_t rows, uint32_t cols, uint32_t n0)
    {
        const float *bias = bias_vals_.empty() ? nullptr : bias_vals_.data() + n0;
        for (uint32_t i = 0; i < rows; ++i) {
            for (uint32_t j = 0; j < cols; ++j) {
                c[static_cast<size_t>(i) * ldc + j] = bias == nullptr ? 0.0f : bias[j];
            }
        }
    }

    /* c (rows x cols, ldc) += A[m0.., :] x B[:, n0..]. */
    NPUEMU_NOSAN void Compute(uint32_t m0, uint32_t n0, uint32_t rows, uint32_t cols, float *c, int32_t *ic, uint32_t ldc)
    {
        if (kInt) {
            for (uint32_t i = 0; i < rows; ++i) {
                for (uint32_t j = 0; j < cols; ++j) {
                    int64_t acc = static_cast<int64_t>(c[static_cast<size_t>(i) * ldc + j]);
                    for (uint32_t k = 0; k < K_; ++k) {
                        acc += static_cast<int64_t>(ia_.data()[static_cast<size_t>(m0 + i) * K_ + k]) *
                               ib_.data()[static_cast<size_t>(k) * N_ + n0 + j];
                    }
                    ic[static_cast<size_t>(i) * ldc + j] = static_cast<int32_t>(static_cast<uint32_t>(acc));
                }
            }
            return;
        }
        if (npuemu_gemm_f32(rows, cols, K_, fa_.data() + static_cast<size_t>(m0) * K_, K_, fb_.data() + n0, N_, c,
                            ldc) != 0) {
            npuemu::fault("Matmul: the cube emulation (npuemu_gemm_f32 of libascendcl) failed");
        }
    }

    NPUEMU_ALWAYS_INLINE static float Combine(float old, float v, uint8_t atomic)
    {
        return atomic == 1 ? old + v : atomic == 2 ? (old > v ? old : v) : atomic == 3 ? (old < v ? old : v) : v;
    }

    /* Every element (i, j) of a block to *at(i, j), converted to DstT (combined with the old value
     * for enAtomic 1 add, 2 max, 3 min). */
    NPUEMU_NOSAN void WriteBlock(const float *c, const int32_t *ic, uint32_t ldc, uint32_t rows, uint32_t cols,
                                 uint8_t atomic, const npuemu::mm::DstAt<DstT> &at)
    {
        std::unique_lock<std::mutex> lock(npuemu::atomic_lock(), std::defer_lock);
        if (atomic != 0) {
            lock.lock();
        }
        for (uint32_t i = 0; i < rows; ++i) {
            for (uint32_t j = 0; j < cols; ++j) {
                DstT *d = at(i, j);
                if (kInt && std::is_same<DstT, int32_t>::value) {
                    const int32_t v = ic[static_cast<size_t>(i) * ldc + j];
                    const int32_t old = atomic ? static_cast<int32_t>(*d) : 0;
                    *d = static_cast<DstT>(atomic == 1 ? static_cast<int32_t>(static_cast<uint32_t>(old) + static_cast<uint32_t>(v))
                                           : atomic == 2 ? (old > v ? old : v)
                                           : atomic == 3 ? (old < v ? old : v)
                                                         : v);
                    continue;
                }
                float v = kInt ? static_cast<float>(ic[static_cast<size_t>(i) * ldc + j]) * Dequant()
                               : c[static_cast<size_t>(i) * ldc + j];
                if (atomic != 0) {
                    v = Combine(static_cast<float>(*d), v, atomic);
                }
                *d = static_cast<DstT>(v);
            }
        }
    }

    NPUEMU_ALWAYS_INLINE float Dequant() const
    {
        if (quant_ == 0) {
            return 1.0f;
        }
        uint32_t bits = static_cast<uint32_t>(quant_);
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }

    /* A block at (m0, n0) of the single-core C into C at gm (ND: row length orgKc; NZ). */
    void WriteToGm(const char *api, const GlobalTensor<DstT> &gm, const float *c, const int32_t *ic, uint32_t ldc,
                   uint32_t m0, uint32_t n0, uint32_t rows, uint32_t cols, uint8_t atomic)
    {
        const uint64_t ldo = static_cast<uint64_t>(orgKc_);
        const uint64_t am = (static_cast<uint64_t>(orgM_) + 15) / 16 * 16;
        auto off = [&](uint64_t i, uint64_t j) {
            return C_TYPE::format == CubeFormat::NZ ? ((j / 16) * am + i) * 16 + j % 16 : i * ldo + j;
        };
        const uint64_t ext = off(m0 + rows - 1, n0 + cols - 1) + 1;
        char what[96];
        std::snprintf(what, sizeof what, "%s writes C", api);
        DstT *d = reinterpret_cast<DstT *>(npuemu::gm_translate(gm.addr_, ext * sizeof(DstT), what));
        WriteBlock(c, ic, ldc, rows, cols, atomic,
                   npuemu::mm::DstAt<DstT>{d, ldo, am, C_TYPE::format == CubeFormat::NZ, m0, n0});
    }

    TCubeTiling tiling_;
    bool inited_ = false;
    int orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0, orgKc_ = 0;
    int singleM_ = 0, singleN_ = 0, singleK_ = 0;
    npuemu::mm::Operand<SrcAT> a_;
    npuemu::mm::Operand<SrcBT> b_;
    npuemu::mm::Operand<BiasT> bias_;
    uint64_t quant_ = 0;
    bool ready_ = false;
    uint32_t M_ = 0, N_ = 0, K_ = 0, mIter_ = 0, nIter_ = 0;
    npuemu::mm::Buf<float> fa_, fb_, block_;
    npuemu::mm::Buf<int32_t> ia_, ib_, iblock_;
    std::vector<float> bias_vals_;
    uint32_t next_ = 0, mi_ = 0, ni_ = 0, m0_ = 0, n0_ = 0, curM_ = 0, curN_ = 0;
    bool have_block_ = false;
};

} // namespace AscendC

namespace npuemu {
namespace mm {

template <class T> struct is_tiling_ptr : std::false_type {};
template <> struct is_tiling_ptr<TCubeTiling *> : std::true_type {};
template <> struct is_tiling_ptr<const TCubeTiling *> : std::true_type {};
template <> struct is_tiling_ptr<std::nullptr_t> : std::true_type {};

inline void regist(AscendC::TPipe *, const void *) {}
template <class MM>
inline void regist(AscendC::TPipe *, const void *, MM &) {}
template <class MM, class T, class... R, typename std::enable_if<is_tiling_ptr<typename std::decay<T>::type>::value, int>::type = 0>
inline void regist(AscendC::TPipe *pipe, const void *ws, MM &mm, T tiling, R &&...rest)
{
    if (tiling != nullptr) {
        mm.Init(tiling, pipe);
    }
    regist(pipe, ws, std::forward<R>(rest)...);
}
template <class MM, class MM2, class... R,
          typename std::enable_if<!is_tiling_ptr<typename std::decay<MM2>::type>::value, int>::type = 0>
inline void regist(AscendC::TPipe *pipe, const void *ws, MM &, MM2 &mm2, R &&...rest)
{
    regist(pipe, ws, mm2, std::forward<R>(rest)...);
}

} // namespace mm
} // namespace npuemu

/* Register Matmul objects with the pipe and the system workspace, each followed by its tiling
 * (or initialised later with Init). */
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) npuemu::mm::regist((tpipe), (const void *)(workspace), __VA_ARGS__)

/* `using namespace matmul;` makes the kernel API visible too (the examples call GetBlockIdx()
 * unqualified after it), as with CANN's headers. */
namespace matmul {
using namespace AscendC;
using AscendC::CFG_IBSHARE_NORM;
using AscendC::CFG_MDL;
using AscendC::CFG_NORM;
using AscendC::GetMDLConfig;
using AscendC::GetNormalConfig;
using AscendC::LayoutMode;
using AscendC::Matmul;
using AscendC::MatmulCallBackFunc;
using AscendC::MatmulConfig;
using AscendC::MatmulType;
using ::CubeFormat;
} // namespace matmul

#endif /* NPUEMU_LIB_MATMUL_INTF_H */
