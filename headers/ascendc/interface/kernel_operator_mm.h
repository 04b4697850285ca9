/* npu-emu Ascend C CPU headers: the cube unit (basic API).
 *
 *   DataCopy(L1 dst, GM / UB src, Nd2NzParams)     ND matrices to the NZ layout in L1
 *   LoadData(L0A / L0B dst, L1 / GM src, LoadData2DParams)   512-byte fractals, optionally transposed
 *   Mmad(L0C dst, L0A fm, L0B filter[, bias], MmadParams)    C = A x B (+ C or bias)
 *   Fixpipe(GM / UB / L1 dst, L0C src, FixpipeParamsV220)    NZ to ND (or NZ), with the conversions
 *
 * Layouts (Ascend910B, as the Mmad reference describes them), with C0 = 32 bytes / sizeof(T):
 *   L0A (A2), "Zz": M x K in fractals of 16 rows x C0; fractal (mi, ki) is the (mi * K1 + ki)-th,
 *       row-major inside; K1 = ceil(K / C0).
 *   L0B (B2), "Zn": K x N in fractals of C0 x 16; fractal (ki, ni) is the (ki * N1 + ni)-th, and
 *       element (k, n) of it at (n % 16) * C0 + k % C0 (each fractal transposed); N1 = ceil(N / 16).
 *   L0C (CO1), "Nz": M x N float / int32_t in fractals of 16 x 16; fractal (ni, mi) is the
 *       (ni * M1 + mi)-th, row-major inside; M1 = ceil(M / 16).
 *   L1 after Nd2Nz: the D dimension in blocks of C0 columns; block c starts dstNzC0Stride * 32
 *       bytes after the matrix, its rows dstNzNStride * 32 bytes apart.
 * Mmad computes every product exactly (half, bfloat16_t and int8_t products fit float / int32_t)
 * and adds them in the order of k with one rounding each (npu_emu::cube). Data types (A2/A3):
 * half x half -> float, bfloat16_t x bfloat16_t -> float, float x float -> float, int8_t x int8_t
 * -> int32_t; others fail to compile. */
#ifndef NPUEMU_KERNEL_OPERATOR_MM_H
#define NPUEMU_KERNEL_OPERATOR_MM_H

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "interface/kernel_data_copy.h"
#include "interface/kernel_tensor.h"
#include "interface/kernel_tpipe.h"
#include "npuemu/context.h"

extern "C" int npuemu_gemm_f32(uint32_t m, uint32_t n, uint32_t k, const float *a, uint32_t lda, const float *b,
                               uint32_t ldb, float *c, uint32_t ldc);
extern "C" int npuemu_f16_to_f32(const uint16_t *src, float *dst, uint64_t n);

/* Fixpipe's conversions (a global enum, as in the kernel compiler's headers). */
enum QuantMode_t {
    NoQuant = 0,
    F322F16,
    F322BF16,
    DEQF16,
    VDEQF16,
    QF322B8_PRE,
    VQF322B8_PRE,
    REQ8,
    VREQ8,
};

namespace AscendC {

struct Nd2NzParams {
    __aicore__ Nd2NzParams() {}
    __aicore__ Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                           const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn,
                           const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn)
    {
    }
    uint16_t ndNum = 0;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

struct LoadData2DParams {
    __aicore__ LoadData2DParams() {}
    __aicore__ LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                                const uint8_t sidIn, const uint16_t dstGapIn, const bool ifTransposeIn,
                                const uint8_t addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), sid(sidIn), dstGap(dstGapIn),
          ifTranspose(ifTransposeIn), addrMode(addrModeIn)
    {
    }
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint8_t sid = 0;
    uint16_t dstGap = 0;
    bool ifTranspose = false;
    uint8_t addrMode = 0;
};

struct MmadParams {
    __aicore__ MmadParams() {}
    __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn,
                          const int32_t fmOffsetIn, const bool enSsparseIn, const bool enWinogradAIn,
                          const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn)
    {
    }
    __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
                          const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn)
    {
    }
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false; /* deprecated: true = C += A x B */
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false; /* initialise C from the bias table */
    bool cmatrixInitVal = true; /* initialise C with 0 */
};

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
    bool isToUB;
};
NPUEMU_INLINE_VAR constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ, false};
NPUEMU_INLINE_VAR constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR, false};
NPUEMU_INLINE_VAR constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR, false};

struct FixpipeParamsV220 {
    __aicore__ FixpipeParamsV220() {}
    __aicore__ FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                                 const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn = NoQuant,
                                 const int64_t deqScalarIn = 0, const uint16_t ndNumIn = 1,
                                 const uint16_t srcNdStrideIn = 0, const uint16_t dstNdStrideIn = 0,
                                 const uint8_t unitFlagIn = 0)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(static_cast<uint64_t>(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn),
          dstNdStride(dstNdStrideIn), reluEn(reluEnIn), unitFlag(unitFlagIn)
    {
    }
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};

} // namespace AscendC

namespace npuemu {

template <class T>
inline void check_on(const char *api, const char *which, const AscendC::LocalTensor<T> &t, int hw, uint32_t align,
                     uint64_t elems)
{
    t.check_ub(api);
    const int at = hw_of(t.addr_);
    if (at != hw) {
        fault("%s: the %s operand must be in the %s buffer (TPosition %s), it is in %s", api, which, hw_name(hw),
              hw == HW_L0A ? "A2" : hw == HW_L0B ? "B2" : hw == HW_L0C ? "CO1" : hw == HW_L1 ? "A1 / B1" : "VECIN",
              at == HW_COUNT ? "no buffer of this block" : hw_name(at));
    }
    if (ub_offset(t.addr_) % align != 0) {
        fault("%s: the %s operand starts at %s offset 0x%llx, which is not %u-byte aligned", api, which, hw_name(hw),
              static_cast<unsigned long long>(ub_offset(t.addr_)), align);
    }
    const uint64_t cap = t.capacity_ / sizeof(T);
    if (elems > cap) {
        fault("%s: uses %llu %s elements of the %s operand, which has room for %llu (%u bytes)", api,
              static_cast<unsigned long long>(elems), type_name<T>::get(), which,
              static_cast<unsigned long long>(cap), t.capacity_);
    }
}

/* ND -> NZ: element (n, d) of ND matrix i (row stride srcDValue, matrices srcNdMatrixStride apart)
 * to dst[i * dstNzMatrixStride + (d / C0) * dstNzC0Stride * C0 + n * dstNzNStride * C0 + d % C0];
 * each row's last C0 block is padded with zeros. */
template <class T, class Src>
NPUEMU_NOSAN inline void nd2nz(T *dst, Src src, const AscendC::Nd2NzParams &p)
{
    const uint32_t c0 = 32 / sizeof(T);
    const uint32_t dpad = (p.dValue + c0 - 1) / c0 * c0;
    for (uint32_t i = 0; i < p.ndNum; ++i) {
        for (uint32_t n = 0; n < p.nValue; ++n) {
            for (uint32_t d = 0; d < dpad; ++d) {
                const uint64_t o = static_cast<uint64_t>(i) * p.dstNzMatrixStride +
                                   static_cast<uint64_t>(d / c0) * p.dstNzC0Stride * c0 +
                                   static_cast<uint64_t>(n) * p.dstNzNStride * c0 + d % c0;
                dst[o] = d < p.dValue ? src(static_cast<uint64_t>(i) * p.srcNdMatrixStride +
                                            static_cast<uint64_t>(n) * p.srcDValue + d)
                                      : T(0);
            }
        }
    }
}

template <class T>
inline uint64_t nd2nz_dst_extent(const AscendC::Nd2NzParams &p)
{
    const uint32_t c0 = 32 / sizeof(T);
    const uint64_t blocks = (p.dValue + c0 - 1) / c0;
    return static_cast<uint64_t>(p.ndNum - 1) * p.dstNzMatrixStride + (blocks - 1) * p.dstNzC0Stride * c0 +
           static_cast<uint64_t>(p.nValue - 1) * p.dstNzNStride * c0 + c0;
}

inline void check_nd2nz(const char *api, const AscendC::Nd2NzParams &p)
{
    if (p.srcDValue < p.dValue) {
        fault("%s: srcDValue %u is less than dValue %u (a source row holds srcDValue elements)", api, p.srcDValue,
              p.dValue);
    }
    if (p.dstNzC0Stride == 0 || p.dstNzNStride == 0) {
        fault("%s: dstNzC0Stride %u and dstNzNStride %u must be at least 1", api, p.dstNzC0Stride, p.dstNzNStride);
    }
}

template <class T> struct c0_of {
    static constexpr uint32_t value = 32 / sizeof(T);
};

/* Round-to-nearest-even conversion of a float result to T (Fixpipe's F322F16 / F322BF16 / no
 * conversion). */
template <class T>
inline T from_acc(float v)
{
    return static_cast<T>(v);
}

} // namespace npuemu

namespace AscendC {

/* GM -> L1 with ND -> NZ conversion. */
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const Nd2NzParams &p)
{
    const char *api = "DataCopy GM->L1 (Nd2Nz)";
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) {
        return;
    }
    npuemu::check_nd2nz(api, p);
    npuemu::check_on(api, "destination", dst, npuemu::HW_L1, 32, npuemu::nd2nz_dst_extent<T>(p));
    const uint64_t sext = static_cast<uint64_t>(p.ndNum - 1) * p.srcNdMatrixStride +
                          static_cast<uint64_t>(p.nValue - 1) * p.srcDValue + p.dValue;
    const T *s = reinterpret_cast<const T *>(npuemu::gm_translate(src.addr_, sext * sizeof(T), "DataCopy GM->L1 reads"));
    npuemu::nd2nz(dst.addr_, [s](uint64_t i) { return s[i]; }, p);
}

/* UB -> L1 with ND -> NZ conversion. */
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const Nd2NzParams &p)
{
    const char *api = "DataCopy UB->L1 (Nd2Nz)";
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) {
        return;
    }
    npuemu::check_nd2nz(api, p);
    npuemu::check_on(api, "destination", dst, npuemu::HW_L1, 32, npuemu::nd2nz_dst_extent<T>(p));
    const uint64_t sext = static_cast<uint64_t>(p.ndNum - 1) * p.srcNdMatrixStride +
                          static_cast<uint64_t>(p.nValue - 1) * p.srcDValue + p.dValue;
    npuemu::check_local_extent(api, "source", src, sext * sizeof(T));
    const T *s = src.addr_;
    npuemu::nd2nz(dst.addr_, [s](uint64_t i) { return s[i]; }, p);
}

namespace detail_mm {
/* LoadData 2D: repeatTimes fractals of 512 bytes (16 rows of 32 bytes); source fractal
 * startIndex + i * srcStride (addrMode 0) or startIndex - i * srcStride (addrMode 1), destination
 * fractal i * (dstGap + 1); ifTranspose (16-bit elements only) transposes each 16 x 16 fractal. */
template <typename T>
NPUEMU_NOSAN inline void load2d(const char *api, T *dst, const T *src, const LoadData2DParams &p)
{
    const uint32_t c0 = 32 / sizeof(T), frac = 512 / sizeof(T);
    for (uint32_t i = 0; i < p.repeatTimes; ++i) {
        const int64_t sf = p.addrMode == 0 ? static_cast<int64_t>(p.startIndex) + static_cast<int64_t>(i) * p.srcStride
                                           : static_cast<int64_t>(p.startIndex) - static_cast<int64_t>(i) * p.srcStride;
        if (sf < 0) {
            npuemu::fault("%s: repeat %u reads source fractal %lld (startIndex %u, srcStride %u, addrMode 1)", api, i,
                          static_cast<long long>(sf), p.startIndex, p.srcStride);
        }
        const T *s = src + static_cast<uint64_t>(sf) * frac;
        T *d = dst + static_cast<uint64_t>(i) * (p.dstGap + 1u) * frac;
        if (!p.ifTranspose) {
            std::memcpy(static_cast<void *>(d), static_cast<const void *>(s), 512);
        } else {
            for (uint32_t r = 0; r < 16; ++r) {
                for (uint32_t c = 0; c < c0; ++c) {
                    d[r * c0 + c] = s[c * c0 + r];
                }
            }
        }
    }
}

template <typename T>
inline void check_load2d(const char *api, const LocalTensor<T> &dst, const LoadData2DParams &p, uint64_t src_frac_cap)
{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "npu-emu: LoadData: 8-, 16- or 32-bit elements");
    const int hw = npuemu::hw_of(dst.addr_);
    if (hw != npuemu::HW_L0A && hw != npuemu::HW_L0B) {
        dst.check_ub(api);
        npuemu::fault("%s: the destination must be in L0A (TPosition A2) or L0B (B2), it is in %s", api,
                      hw == npuemu::HW_COUNT ? "no buffer of this block" : npuemu::hw_name(hw));
    }
    const uint64_t frac = 512 / sizeof(T);
    npuemu::check_on(api, "destination", dst, hw, 512, ((p.repeatTimes - 1u) * (p.dstGap + 1u) + 1u) * frac);
    if (p.ifTranspose && sizeof(T) != 2) {
        npuemu::fault("%s: ifTranspose needs 16-bit elements (%s given)", api, npuemu::type_name<T>::get());
    }
    const uint64_t last = p.addrMode == 0 ? p.startIndex + static_cast<uint64_t>(p.repeatTimes - 1) * p.srcStride
                                          : p.startIndex;
    if ((last + 1) * frac > src_frac_cap) {
        npuemu::fault("%s: reads source fractal %llu (startIndex %u, %u repeats, srcStride %u), the source holds %llu "
                      "fractals of 512 bytes",
                      api, static_cast<unsigned long long>(last), p.startIndex, p.repeatTimes, p.srcStride,
                      static_cast<unsigned long long>(src_frac_cap / frac));
    }
}
} // namespace detail_mm

/* L1 (A1 / B1) -> L0A / L0B. */
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LoadData2DParams &p)
{
    const char *api = "AscendC::LoadData (2D)";
    if (p.repeatTimes == 0) {
        return;
    }
    npuemu::check_on(api, "source", src, npuemu::HW_L1, 32, 0);
    detail_mm::check_load2d(api, dst, p, src.capacity_ / sizeof(T));
    detail_mm::load2d(api, dst.addr_, src.addr_, p);
}

/* GM -> L0A / L0B. */
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const LoadData2DParams &p)
{
    const char *api = "AscendC::LoadData (2D) GM->L0";
    if (p.repeatTimes == 0) {
        return;
    }
    const uint64_t frac = 512 / sizeof(T);
    const uint64_t last = p.addrMode == 0 ? p.startIndex + static_cast<uint64_t>(p.repeatTimes - 1) * p.srcStride
                                          : p.startIndex;
    detail_mm::check_load2d(api, dst, p, (last + 1) * frac);
    if (p.ifTranspose) {
        npuemu::fault("%s: ifTranspose works on the L1 -> L0A / L0B paths only", api);
    }
    const T *s = reinterpret_cast<const T *>(npuemu::gm_translate(src.addr_, (last + 1) * 512, "LoadData GM->L0 reads"));
    detail_mm::load2d(api, dst.addr_, s, p);
}

namespace detail_mm {

template <class A, class B, class C>
struct mmad_types {
    static constexpr bool ok = (std::is_same<A, half>::value && std::is_same<B, half>::value && std::is_same<C, float>::value) ||
                               (std::is_same<A, bfloat16_t>::value && std::is_same<B, bfloat16_t>::value &&
                                std::is_same<C, float>::value) ||
                               (std::is_same<A, float>::value && std::is_same<B, float>::value && std::is_same<C, float>::value) ||
                               (std::is_same<A, int8_t>::value && std::is_same<B, int8_t>::value &&
                                std::is_same<C, int32_t>::value);
};

/* C (m x n, Nz in L0C) = init + A (Zz in L0A) x B (Zn in L0B). init: 0 zero, 1 the current C, 2 bias. */
template <class C, class A, class B, class Bias>
NPUEMU_NOSAN inline void mmad(C *c, const A *a, const B *b, const Bias *bias, uint32_t m, uint32_t n, uint32_t k,
                              int init)
{
    const uint32_t c0a = 32 / sizeof(A), c0b = 32 / sizeof(B);
    const uint32_t M1 = (m + 15) / 16, N1 = (n + 15) / 16, K1a = (k + c0a - 1) / c0a;
    auto cidx = [M1](uint32_t i, uint32_t j) {
        return ((static_cast<uint64_t>(j / 16) * M1 + i / 16) * 256) + (i % 16) * 16 + j % 16;
    };
    if (std::is_integral<C>::value) {
        for (uint32_t i = 0; i < m; ++i) {
            for (uint32_t j = 0; j < n; ++j) {
                int64_t acc = init == 0 ? 0 : init == 1 ? static_cast<int64_t>(c[cidx(i, j)]) : static_cast<int64_t>(bias[j]);
                for (uint32_t kk = 0; kk < k; ++kk) {
                    const int64_t av = a[((i / 16) * K1a + kk / c0a) * (16 * c0a) + (i % 16) * c0a + kk % c0a];
                    const int64_t bv = b[((kk / c0b) * N1 + j / 16) * (16 * c0b) + (j % 16) * c0b + kk % c0b];
                    acc += av * bv;
                }
                c[cidx(i, j)] = static_cast<C>(static_cast<int32_t>(static_cast<uint32_t>(acc)));
            }
        }
        return;
    }
    std::vector<float> fa(static_cast<size_t>(m) * k), fb(static_cast<size_t>(k) * n), fc(static_cast<size_t>(m) * n);
    for (uint32_t i = 0; i < m; ++i) {
        for (uint32_t kk = 0; kk < k; ++kk) {
            fa[static_cast<size_t>(i) * k + kk] =
                static_cast<float>(a[((i / 16) * K1a + kk / c0a) * (16 * c0a) + (i % 16) * c0a + kk % c0a]);
        }
    }
    for (uint32_t kk = 0; kk < k; ++kk) {
        for (uint32_t j = 0; j < n; ++j) {
            fb[static_cast<size_t>(kk) * n + j] =
                static_cast<float>(b[((kk / c0b) * N1 + j / 16) * (16 * c0b) + (j % 16) * c0b + kk % c0b]);
        }
    }
    for (uint32_t i = 0; i < m; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            fc[static_cast<size_t>(i) * n + j] =
                init == 0 ? 0.0f : init == 1 ? static_cast<float>(c[cidx(i, j)]) : static_cast<float>(bias[j]);
        }
    }
    if (npuemu_gemm_f32(m, n, k, fa.data(), k, fb.data(), n, fc.data(), n) != 0) {
        npuemu::fault("AscendC::Mmad: the cube emulation (npuemu_gemm_f32 of libascendcl) failed");
    }
    for (uint32_t i = 0; i < m; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            c[cidx(i, j)] = static_cast<C>(fc[static_cast<size_t>(i) * n + j]);
        }
    }
}

template <typename T, typename U, typename S>
inline void check_mmad(const char *api, const LocalTensor<T> &dst, const LocalTensor<U> &fm, const LocalTensor<S> &filter,
                       const MmadParams &p)
{
    static_assert(mmad_types<U, S, T>::ok,
                  "npu-emu: AscendC::Mmad supports half x half -> float, bfloat16_t x bfloat16_t -> float, float x "
                  "float -> float and int8_t x int8_t -> int32_t");
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) {
        npuemu::fault("%s: m %u, n %u, k %u must each be at most 4095", api, p.m, p.n, p.k);
    }
    const uint32_t c0a = 32 / sizeof(U), c0b = 32 / sizeof(S);
    const uint64_t M1 = (p.m + 15) / 16, N1 = (p.n + 15) / 16;
    npuemu::check_on(api, "dst (C)", dst, npuemu::HW_L0C, 64, M1 * N1 * 256);
    npuemu::check_on(api, "fm (A)", fm, npuemu::HW_L0A, 512, M1 * ((p.k + c0a - 1) / c0a) * 16 * c0a);
    npuemu::check_on(api, "filter (B)", filter, npuemu::HW_L0B, 512, ((p.k + c0b - 1) / c0b) * N1 * 16 * c0b);
}

} // namespace detail_mm

/* C = A x B, C += A x B (isBias, or cmatrixInitVal = false), in L0C. */
template <typename T, typename U, typename S>
__aicore__ inline void Mmad(const LocalTensor<T> &dst, const LocalTensor<U> &fm, const LocalTensor<S> &filter,
                            const MmadParams &p)
{
    const char *api = "AscendC::Mmad";
    if (p.m == 0 || p.n == 0 || p.k == 0) {
        return;
    }
    detail_mm::check_mmad(api, dst, fm, filter, p);
    if (p.cmatrixSource) {
        npuemu::fault("%s: cmatrixSource = true initialises C from the bias table: pass the bias tensor (the Mmad "
                      "overload with a bias argument)",
                      api);
    }
    const int init = (p.isBias || !p.cmatrixInitVal) ? 1 : 0;
    detail_mm::mmad<T, U, S, T>(dst.addr_, fm.addr_, filter.addr_, nullptr, p.m, p.n, p.k, init);
}

/* C = bias (1 x n, broadcast over the rows) + A x B. */
template <typename T, typename U, typename S, typename V>
__aicore__ inline void Mmad(const LocalTensor<T> &dst, const LocalTensor<U> &fm, const LocalTensor<S> &filter,
                            const LocalTensor<V> &bias, const MmadParams &p)
{
    const char *api = "AscendC::Mmad (bias)";
    if (p.m == 0 || p.n == 0 || p.k == 0) {
        return;
    }
    detail_mm::check_mmad(api, dst, fm, filter, p);
    bias.check_ub(api);
    if (bias.GetSize() < p.n) {
        npuemu::fault("%s: the bias holds %u elements, n is %u", api, bias.GetSize(), p.n);
    }
    detail_mm::mmad<T, U, S, V>(dst.addr_, fm.addr_, filter.addr_, bias.addr_, p.m, p.n, p.k, 2);
}

namespace detail_mm {

template <class T, class U>
NPUEMU_NOSAN inline T fix_convert(U v, const FixpipeParamsV220 &p, const char *api)
{
    float f;
    if (std::is_integral<U>::value) {
        if (p.quantPre == DEQF16) {
            uint32_t bits = static_cast<uint32_t>(p.deqScalar);
            float scale;
            std::memcpy(&scale, &bits, 4);
            f = static_cast<float>(static_cast<int64_t>(v)) * scale;
        } else {
            f = static_cast<float>(v);
        }
    } else {
        f = static_cast<float>(v);
    }
    if (p.reluEn && f < 0) {
        f = 0;
    }
    (void)api;
    if (std::is_integral<U>::value && std::is_integral<T>::value && p.quantPre == NoQuant) {
        const int64_t iv = static_cast<int64_t>(v);
        return static_cast<T>(p.reluEn && iv < 0 ? 0 : iv);
    }
    return static_cast<T>(f);
}

template <class T, class U>
inline void check_quant(const char *api, const FixpipeParamsV220 &p)
{
    const bool fl = std::is_same<U, float>::value, i32 = std::is_same<U, int32_t>::value;
    bool ok;
    switch (p.quantPre) {
    case NoQuant: ok = (fl && std::is_same<T, float>::value) || (i32 && std::is_same<T, int32_t>::value); break;
    case F322F16: ok = fl && std::is_same<T, half>::value; break;
    case F322BF16: ok = fl && std::is_same<T, bfloat16_t>::value; break;
    case DEQF16: ok = i32 && std::is_same<T, half>::value; break;
    default:
        npuemu::fault("%s: quantPre %d (a quantising conversion) is not supported by the CPU kernel headers; NoQuant, "
                      "F322F16, F322BF16 and DEQF16 are",
                      api, static_cast<int>(p.quantPre));
    }
    if (!ok) {
        npuemu::fault("%s: quantPre %d does not convert %s (L0C) to %s", api, static_cast<int>(p.quantPre),
                      npuemu::type_name<U>::get(), npuemu::type_name<T>::get());
    }
}

/* Fixpipe: (i, j) of each NZ matrix of L0C to dst; `out(nd, i, j)` is the destination element. */
template <class T, class U, CO2Layout layout, class Out>
NPUEMU_NOSAN inline void fixpipe(const char *api, const U *src, const FixpipeParamsV220 &p, Out out)
{
    for (uint32_t nd = 0; nd < p.ndNum; ++nd) {
        const U *s = src + static_cast<uint64_t>(nd) * p.srcNdStride * 256;
        for (uint32_t i = 0; i < p.mSize; ++i) {
            for (uint32_t j = 0; j < p.nSize; ++j) {
                const U v = s[static_cast<uint64_t>(j / 16) * p.srcStride * 16 + i * 16 + j % 16];
                out(nd, i, j, fix_convert<T, U>(v, p, api));
            }
        }
    }
}

template <class T, CO2Layout layout>
inline uint64_t fix_offset(const FixpipeParamsV220 &p, uint32_t nd, uint32_t i, uint32_t j)
{
    if (layout == CO2Layout::NZ) {
        return static_cast<uint64_t>(nd) * p.dstNdStride + static_cast<uint64_t>(j / 16) * p.dstStride * (32 / sizeof(T)) +
               static_cast<uint64_t>(i) * 16 + j % 16;
    }
    return static_cast<uint64_t>(nd) * p.dstNdStride + static_cast<uint64_t>(i) * p.dstStride + j;
}

template <class T, class U, CO2Layout layout>
inline uint64_t fix_extent(const char *api, const FixpipeParamsV220 &p)
{
    if (layout == CO2Layout::COLUMN_MAJOR) {
        npuemu::fault("%s: CFG_COLUMN_MAJOR (NZ2DN) is an Ascend 950 feature, not available on the emulated SoC", api);
    }
    if (p.nSize % 16 != 0 && layout == CO2Layout::NZ) {
        npuemu::fault("%s: nSize %u must be a multiple of 16 for NZ output", api, p.nSize);
    }
    if (p.srcStride < p.mSize && p.nSize > 16) {
        npuemu::fault("%s: srcStride %u (rows of a Z column of L0C) is less than mSize %u", api, p.srcStride, p.mSize);
    }
    if (layout == CO2Layout::ROW_MAJOR && p.dstStride < p.nSize) {
        npuemu::fault("%s: dstStride %u (elements of a destination row) is less than nSize %u", api, p.dstStride, p.nSize);
    }
    return fix_offset<T, layout>(p, p.ndNum - 1u, p.mSize - 1u, p.nSize - 1u) + 1;
}

} // namespace detail_mm

/* L0C (CO1) -> GM. */
template <typename T, typename U, const FixpipeConfig &config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const GlobalTensor<T> &dst, const LocalTensor<U> &src, const FixpipeParamsV220 &p)
{
    const char *api = "AscendC::Fixpipe L0C->GM";
    if (p.nSize == 0 || p.mSize == 0 || p.ndNum == 0) {
        return;
    }
    detail_mm::check_quant<T, U>(api, p);
    const uint64_t ext = detail_mm::fix_extent<T, U, config.format>(api, p);
    const uint64_t srows = p.srcStride < p.mSize ? p.mSize : p.srcStride;
    npuemu::check_on(api, "source", src, npuemu::HW_L0C, 64,
                     static_cast<uint64_t>(p.ndNum - 1u) * p.srcNdStride * 256 +
                         static_cast<uint64_t>((p.nSize + 15) / 16 - 1) * srows * 16 + srows * 16);
    uint8_t *d = npuemu::gm_translate(dst.addr_, ext * sizeof(T), "Fixpipe L0C->GM writes");
    const int atomic = npuemu::ctx().atomic_op;
    detail_mm::fixpipe<T, U, config.format>(api, src.addr_, p, [&](uint32_t nd, uint32_t i, uint32_t j, T v) {
        T *e = reinterpret_cast<T *>(d) + detail_mm::fix_offset<T, config.format>(p, nd, i, j);
        if (atomic == 0) {
            *e = v;
        } else {
            npuemu::gm_write(api, reinterpret_cast<uint8_t *>(e), reinterpret_cast<const uint8_t *>(&v), sizeof(T));
        }
    });
}

/* L0C (CO1) -> UB (VECIN / CO2) or L1. */
template <typename T, typename U, const FixpipeConfig &config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const LocalTensor<T> &dst, const LocalTensor<U> &src, const FixpipeParamsV220 &p)
{
    const char *api = "AscendC::Fixpipe L0C->local";
    if (p.nSize == 0 || p.mSize == 0 || p.ndNum == 0) {
        return;
    }
    detail_mm::check_quant<T, U>(api, p);
    const uint64_t ext = detail_mm::fix_extent<T, U, config.format>(api, p);
    const uint64_t srows = p.srcStride < p.mSize ? p.mSize : p.srcStride;
    npuemu::check_on(api, "source", src, npuemu::HW_L0C, 64,
                     static_cast<uint64_t>(p.ndNum - 1u) * p.srcNdStride * 256 +
                         static_cast<uint64_t>((p.nSize + 15) / 16 - 1) * srows * 16 + srows * 16);
    const int hw = npuemu::hw_of(dst.addr_);
    if (hw != npuemu::HW_UB && hw != npuemu::HW_L1) {
        dst.check_ub(api);
        npuemu::fault("%s: the destination must be in the Unified Buffer or L1", api);
    }
    npuemu::check_on(api, "destination", dst, hw, 32, ext);
    T *d = dst.addr_;
    detail_mm::fixpipe<T, U, config.format>(api, src.addr_, p, [&](uint32_t nd, uint32_t i, uint32_t j, T v) {
        d[detail_mm::fix_offset<T, config.format>(p, nd, i, j)] = v;
    });
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_MM_H */
