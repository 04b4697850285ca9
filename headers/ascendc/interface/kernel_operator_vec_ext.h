/* npu-emu Ascend C CPU headers: the vector calls that use their destination as an input
 * (MulAddDst, FusedMulAdd), the UB -> UB vector Copy, InitGlobalMemory, the scalar bit
 * operations (GetBitCount / ScalarGetCountOfValue, CountLeadingZero / ScalarCountLeadingZero,
 * CountBitsCntSameAsSignBit, ScalarGetSFFValue), and the element-wise math of the high-level API
 * (Sigmoid, Tanh, Sin, Cos, Erf, Floor, Ceil, Trunc, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
 * Acosh, Atanh, Frac, Log, Log2, Log10, Power, Sum, Mean, ArithProgression, ClampMax, ClampMin) and its
 * activations (Silu, Swish, Gelu, FasterGelu).
 *
 * Arithmetic is done in float and rounded once to the element type (as the other vector calls of
 * these headers); the high-level math functions compute with the C library in float, where the
 * NPU runs the reference's polynomial / iterative algorithms, which may differ in the last bits.
 * Their sharedTmpBuffer is checked to be a UB tensor but not used. */
#ifndef NPUEMU_KERNEL_OPERATOR_VEC_EXT_H
#define NPUEMU_KERNEL_OPERATOR_VEC_EXT_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#include <type_traits>

#include "interface/kernel_operator_vec.h"
#include "interface/kernel_tensor.h"
#include "npuemu/context.h"

namespace AscendC {

/* Copy's strides: within a repeat between data blocks (dstStride / srcStride) and between
 * repeats (dstRepeatSize / srcRepeatSize), in 32-byte blocks. */
struct CopyRepeatParams {
    __aicore__ CopyRepeatParams() {}
    __aicore__ CopyRepeatParams(const uint16_t dstStrideIn, const uint16_t srcStrideIn, uint16_t dstRepeatSizeIn,
                                uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn),
          srcRepeatSize(srcRepeatSizeIn)
    {
    }
    uint16_t dstStride = 1;
    uint16_t srcStride = 1;
    uint16_t dstRepeatSize = 8;
    uint16_t srcRepeatSize = 8;
};

namespace npuemu_detail {
/* dst[i] = f(src0[i], src1[i], dst[i]), in float, rounded to T. */
template <typename T, typename U, class F>
inline void vec_ternary(const char *api, const LocalTensor<T> &dst, const LocalTensor<U> &src0,
                        const LocalTensor<U> &src1, int32_t count, F f)
{
    npuemu::check_count(api, count);
    npuemu::check_vec_operand(api, "dst", dst, count);
    npuemu::check_vec_operand(api, "src0", src0, count);
    npuemu::check_vec_operand(api, "src1", src1, count);
    npuemu::check_overlap(api, "src0", dst.addr_, count * sizeof(T), src0.addr_, count * sizeof(U));
    npuemu::check_overlap(api, "src1", dst.addr_, count * sizeof(T), src1.addr_, count * sizeof(U));
    for (int32_t i = 0; i < count; ++i) {
        dst.addr_[i] = static_cast<T>(f(static_cast<float>(src0.addr_[i]), static_cast<float>(src1.addr_[i]),
                                        static_cast<float>(dst.addr_[i])));
    }
}

template <typename T, typename U, class F>
inline void level0_ternary(const npuemu::Level0 &l, const LocalTensor<T> &dst, const LocalTensor<U> &src0,
                           const LocalTensor<U> &src1, const BinaryRepeatParams &p, F f)
{
    npuemu::check_level0_operand(l, "dst", dst, p.dstBlkStride, p.dstRepStride);
    npuemu::Level0 ls = l; /* half sources of a float destination: 16 elements per block */
    ls.epb = 32 / sizeof(U);
    npuemu::check_level0_operand(ls, "src0", src0, p.src0BlkStride, p.src0RepStride);
    npuemu::check_level0_operand(ls, "src1", src1, p.src1BlkStride, p.src1RepStride);
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e <= l.last_of(r); ++e) {
            if (l.active(r, e)) {
                T &d = dst.addr_[l.offset(r, e, p.dstBlkStride, p.dstRepStride)];
                d = static_cast<T>(f(static_cast<float>(src0.addr_[ls.offset(r, e, p.src0BlkStride, p.src0RepStride)]),
                                     static_cast<float>(src1.addr_[ls.offset(r, e, p.src1BlkStride, p.src1RepStride)]),
                                     static_cast<float>(d)));
            }
        }
    }
}

template <typename T, typename U> struct mul_add_dst_types {
    static constexpr bool value = (std::is_same<T, U>::value && npuemu::one_of<T, half, float>::value) ||
                                  (std::is_same<T, float>::value && std::is_same<U, half>::value);
};
} // namespace npuemu_detail

/* MulAddDst: dst = src0 * src1 + dst ((dst, src) = (half, half), (float, float), (float, half)). */
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void MulAddDst(const LocalTensor<T> &dst, const LocalTensor<U> &src0, const LocalTensor<U> &src1,
                                 const int32_t &calCount)
{
    static_assert(npuemu_detail::mul_add_dst_types<T, U>::value,
                  "npu-emu: AscendC::MulAddDst supports (dst, src) = (half, half), (float, float) and (float, half)");
    npuemu_detail::vec_ternary("AscendC::MulAddDst", dst, src0, src1,
                               npuemu::count_of<isSetMask>("AscendC::MulAddDst", calCount),
                               [](float a, float b, float d) { return a * b + d; });
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void MulAddDst(const LocalTensor<T> &dst, const LocalTensor<U> &src0, const LocalTensor<U> &src1,
                                 const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu_detail::mul_add_dst_types<T, U>::value,
                  "npu-emu: AscendC::MulAddDst supports (dst, src) = (half, half), (float, float) and (float, half)");
    npuemu_detail::level0_ternary(npuemu::level0<T>("AscendC::MulAddDst", mask, 0, repeatTime, isSetMask), dst, src0,
                                  src1, repeatParams, [](float a, float b, float d) { return a * b + d; });
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void MulAddDst(const LocalTensor<T> &dst, const LocalTensor<U> &src0, const LocalTensor<U> &src1,
                                 uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu_detail::mul_add_dst_types<T, U>::value,
                  "npu-emu: AscendC::MulAddDst supports (dst, src) = (half, half), (float, float) and (float, half)");
    npuemu_detail::level0_ternary(npuemu::level0<T>("AscendC::MulAddDst", nullptr, mask, repeatTime, isSetMask), dst,
                                  src0, src1, repeatParams, [](float a, float b, float d) { return a * b + d; });
}

/* FusedMulAdd: dst = src0 * dst + src1 (half, float). */
template <typename T, bool isSetMask = true>
__aicore__ inline void FusedMulAdd(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                                   const int32_t &calCount)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::FusedMulAdd supports half and float only");
    npuemu_detail::vec_ternary("AscendC::FusedMulAdd", dst, src0, src1,
                               npuemu::count_of<isSetMask>("AscendC::FusedMulAdd", calCount),
                               [](float a, float b, float d) { return a * d + b; });
}
template <typename T, bool isSetMask = true>
__aicore__ inline void FusedMulAdd(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                                   const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::FusedMulAdd supports half and float only");
    npuemu_detail::level0_ternary(npuemu::level0<T>("AscendC::FusedMulAdd", mask, 0, repeatTime, isSetMask), dst, src0,
                                  src1, repeatParams, [](float a, float b, float d) { return a * d + b; });
}
template <typename T, bool isSetMask = true>
__aicore__ inline void FusedMulAdd(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                                   uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::FusedMulAdd supports half and float only");
    npuemu_detail::level0_ternary(npuemu::level0<T>("AscendC::FusedMulAdd", nullptr, mask, repeatTime, isSetMask), dst,
                                  src0, src1, repeatParams, [](float a, float b, float d) { return a * d + b; });
}

/* Copy (UB -> UB through the vector unit): the level-0 forms. */
namespace npuemu_detail {
template <typename T>
inline void vec_copy(const npuemu::Level0 &l, const LocalTensor<T> &dst, const LocalTensor<T> &src,
                     const CopyRepeatParams &p)
{
    npuemu::check_level0_operand(l, "dst", dst, p.dstStride, p.dstRepeatSize);
    npuemu::check_level0_operand(l, "src", src, p.srcStride, p.srcRepeatSize);
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e <= l.last_of(r); ++e) {
            if (l.active(r, e)) {
                dst.addr_[l.offset(r, e, p.dstStride, p.dstRepeatSize)] =
                    src.addr_[l.offset(r, e, p.srcStride, p.srcRepeatSize)];
            }
        }
    }
}
} // namespace npuemu_detail

template <typename T, bool isSetMask = true>
__aicore__ inline void Copy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask[],
                            const uint8_t repeatTime, const CopyRepeatParams &repeatParams)
{
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "npu-emu: AscendC::Copy supports 16- and 32-bit elements only");
    npuemu_detail::vec_copy(npuemu::level0<T>("AscendC::Copy", mask, 0, repeatTime, isSetMask), dst, src, repeatParams);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Copy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask,
                            const uint8_t repeatTime, const CopyRepeatParams &repeatParams)
{
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "npu-emu: AscendC::Copy supports 16- and 32-bit elements only");
    npuemu_detail::vec_copy(npuemu::level0<T>("AscendC::Copy", nullptr, mask, repeatTime, isSetMask), dst, src,
                            repeatParams);
}

/* InitGlobalMemory: the first `size` elements of the GlobalTensor = value (every element must lie
 * in a buffer of the kernel, as for DataCopy). */
template <typename T>
__aicore__ inline void InitGlobalMemory(GlobalTensor<T> &gmWorkspaceAddr, const uint64_t size, const T value)
{
    static_assert(npuemu::one_of<T, half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t>::value,
                  "npu-emu: AscendC::InitGlobalMemory supports half, bfloat16_t, float, int16_t, uint16_t, int32_t "
                  "and uint32_t");
    if (size == 0) {
        return;
    }
    uint8_t *p = npuemu::gm_translate(gmWorkspaceAddr.GetPhyAddr(0), size * sizeof(T), "InitGlobalMemory writes");
    for (uint64_t i = 0; i < size; ++i) {
        std::memcpy(p + i * sizeof(T), &value, sizeof(T));
    }
}

/* ---- scalar bit operations ---- */

/* The number of 0 bits (countValue 0) or 1 bits (countValue 1) of valueIn. */
template <int countValue> __aicore__ inline int64_t GetBitCount(uint64_t valueIn)
{
    static_assert(countValue == 0 || countValue == 1, "npu-emu: AscendC::GetBitCount counts 0 or 1 bits");
    const int64_t ones = __builtin_popcountll(valueIn);
    return countValue == 1 ? ones : 64 - ones;
}
template <int countValue> __aicore__ inline int64_t ScalarGetCountOfValue(uint64_t valueIn)
{
    return GetBitCount<countValue>(valueIn);
}
/* Leading 0 bits (64 for 0). */
__aicore__ inline int64_t CountLeadingZero(uint64_t valueIn)
{
    return valueIn == 0 ? 64 : __builtin_clzll(valueIn);
}
__aicore__ inline int64_t ScalarCountLeadingZero(uint64_t valueIn)
{
    return CountLeadingZero(valueIn);
}
/* The bits after the sign bit equal to it, counted from the top (-1 for 0 and -1). */
__aicore__ inline int64_t CountBitsCntSameAsSignBit(int64_t valueIn)
{
    if (valueIn == 0 || valueIn == -1) {
        return -1;
    }
    const uint64_t v = static_cast<uint64_t>(valueIn < 0 ? ~valueIn : valueIn);
    return __builtin_clzll(v) - 1;
}
/* The position of the lowest bit equal to countValue (-1 if there is none). */
template <int countValue> __aicore__ inline int64_t ScalarGetSFFValue(uint64_t valueIn)
{
    static_assert(countValue == 0 || countValue == 1, "npu-emu: AscendC::ScalarGetSFFValue finds a 0 or a 1 bit");
    const uint64_t v = countValue == 1 ? valueIn : ~valueIn;
    return v == 0 ? -1 : __builtin_ctzll(v);
}

/* ---- element-wise math of the high-level API: (dst, src[, sharedTmpBuffer], calCount) ---- */

#define NPUEMU_ADV_UNARY(NAME, EXPR)                                                                \
    template <typename T, bool isReuseSource = false>                                               \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t calCount) \
    {                                                                                               \
        static_assert(npuemu::one_of<T, half, float>::value,                                        \
                      "npu-emu: AscendC::" #NAME " supports half and float elements only");         \
        npuemu::vec_unary("AscendC::" #NAME, dst, src, static_cast<int32_t>(calCount),              \
                          [](float a) { return EXPR; });                                            \
    }                                                                                               \
    template <typename T, bool isReuseSource = false>                                               \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src,                \
                                const LocalTensor<uint8_t> &sharedTmpBuffer, const uint32_t calCount) \
    {                                                                                               \
        sharedTmpBuffer.check_ub("AscendC::" #NAME " (sharedTmpBuffer)");                           \
        NAME<T, isReuseSource>(dst, src, calCount);                                                 \
    }

NPUEMU_ADV_UNARY(Sigmoid, 1.0f / (1.0f + std::exp(-a)))
NPUEMU_ADV_UNARY(Tanh, std::tanh(a))
NPUEMU_ADV_UNARY(Sin, std::sin(a))
NPUEMU_ADV_UNARY(Cos, std::cos(a))
NPUEMU_ADV_UNARY(Erf, std::erf(a))
NPUEMU_ADV_UNARY(Floor, std::floor(a))
NPUEMU_ADV_UNARY(Ceil, std::ceil(a))
NPUEMU_ADV_UNARY(Trunc, std::trunc(a))
NPUEMU_ADV_UNARY(Tan, std::tan(a))
NPUEMU_ADV_UNARY(Asin, std::asin(a))
NPUEMU_ADV_UNARY(Acos, std::acos(a))
NPUEMU_ADV_UNARY(Atan, std::atan(a))
NPUEMU_ADV_UNARY(Sinh, std::sinh(a))
NPUEMU_ADV_UNARY(Cosh, std::cosh(a))
NPUEMU_ADV_UNARY(Asinh, std::asinh(a))
NPUEMU_ADV_UNARY(Acosh, std::acosh(a))
NPUEMU_ADV_UNARY(Atanh, std::atanh(a))
NPUEMU_ADV_UNARY(Frac, a - std::trunc(a))
NPUEMU_ADV_UNARY(Log, std::log(a))
NPUEMU_ADV_UNARY(Log2, std::log2(a))
NPUEMU_ADV_UNARY(Log10, std::log10(a))

#undef NPUEMU_ADV_UNARY

/* ---- activations of the high-level API (computed in float, rounded once) ---- */

namespace detail_act {
/* Silu and Swish: the reference does not allow src and dst to overlap (not even in place). */
template <typename T>
inline void check_apart(const char *api, const LocalTensor<T> &dst, const LocalTensor<T> &src, uint32_t n)
{
    const uint8_t *d = reinterpret_cast<const uint8_t *>(dst.addr_), *s = reinterpret_cast<const uint8_t *>(src.addr_);
    const uint64_t bytes = static_cast<uint64_t>(n) * sizeof(T);
    if (n != 0 && d < s + bytes && s < d + bytes) {
        npuemu::fault("%s: src (UB 0x%llx) and dst (UB 0x%llx) overlap; the reference does not allow it", api,
                      static_cast<unsigned long long>(npuemu::ub_offset(s)),
                      static_cast<unsigned long long>(npuemu::ub_offset(d)));
    }
}
} // namespace detail_act

/* silu(x) = x / (1 + e^-x) */
template <typename T, bool isReuseSource = false>
__aicore__ inline void Silu(const LocalTensor<T> &dstLocal, const LocalTensor<T> &srcLocal, uint32_t dataSize)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Silu supports half and float elements only");
    srcLocal.check_ub("AscendC::Silu");
    dstLocal.check_ub("AscendC::Silu");
    detail_act::check_apart("AscendC::Silu", dstLocal, srcLocal, dataSize);
    npuemu::vec_unary("AscendC::Silu", dstLocal, srcLocal, static_cast<int32_t>(dataSize),
                      [](float a) { return a / (1.0f + std::exp(-a)); });
}

/* swish(x) = x / (1 + e^(-beta x)) */
template <typename T, bool isReuseSource = false>
__aicore__ inline void Swish(const LocalTensor<T> &dstLocal, const LocalTensor<T> &srcLocal, uint32_t dataSize,
                             const T &scalarValue)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Swish supports half and float elements only");
    srcLocal.check_ub("AscendC::Swish");
    dstLocal.check_ub("AscendC::Swish");
    detail_act::check_apart("AscendC::Swish", dstLocal, srcLocal, dataSize);
    const float beta = static_cast<float>(scalarValue);
    npuemu::vec_unary("AscendC::Swish", dstLocal, srcLocal, static_cast<int32_t>(dataSize),
                      [beta](float a) { return a / (1.0f + std::exp(-beta * a)); });
}

/* gelu(x) = x / (1 + e^(-1.59576912 (x + 0.044715 x^3))) (the reference's tanh form); in place
 * allowed; highPrecision / highPerformance choose the NPU's algorithm and do not change the
 * emulated result. */
template <typename T, bool highPrecision = false, bool highPerformance = false>
__aicore__ inline void Gelu(const LocalTensor<T> &dstLocal, const LocalTensor<T> &srcLocal, const uint32_t dataSize)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Gelu supports half and float elements only");
    npuemu::vec_unary("AscendC::Gelu", dstLocal, srcLocal, static_cast<int32_t>(dataSize), [](float a) {
        return a / (1.0f + std::exp(-1.59576912f * (a + 0.044715f * a * a * a)));
    });
}
template <typename T, bool highPrecision = false, bool highPerformance = false>
__aicore__ inline void Gelu(const LocalTensor<T> &dstLocal, const LocalTensor<T> &srcLocal,
                            const LocalTensor<uint8_t> &sharedTmpBuffer, const uint32_t dataSize)
{
    sharedTmpBuffer.check_ub("AscendC::Gelu (sharedTmpBuffer)");
    Gelu<T, highPrecision, highPerformance>(dstLocal, srcLocal, dataSize);
}

/* FasterGelu: fast_gelu(x) = x / (1 + e^(-1.702 |x|)) * e^(0.851 (x - |x|)), = x / (1 + e^(-1.702 x)). */
template <typename T, bool highPrecision = false, bool highPerformance = false>
__aicore__ inline void FasterGelu(const LocalTensor<T> &dstLocal, const LocalTensor<T> &srcLocal, const uint32_t dataSize)
{
    static_assert(npuemu::one_of<T, half, float>::value,
                  "npu-emu: AscendC::FasterGelu supports half and float elements only");
    npuemu::vec_unary("AscendC::FasterGelu", dstLocal, srcLocal, static_cast<int32_t>(dataSize),
                      [](float a) { return a / (1.0f + std::exp(-1.702f * a)); });
}
template <typename T, bool highPrecision = false, bool highPerformance = false>
__aicore__ inline void FasterGelu(const LocalTensor<T> &dstLocal, const LocalTensor<T> &srcLocal,
                                  const LocalTensor<uint8_t> &sharedTmpBuffer, const uint32_t dataSize)
{
    sharedTmpBuffer.check_ub("AscendC::FasterGelu (sharedTmpBuffer)");
    FasterGelu<T, highPrecision, highPerformance>(dstLocal, srcLocal, dataSize);
}

/* ---- Power: x ^ y element-wise (tensor ^ tensor, tensor ^ scalar, scalar ^ tensor) ---- */

namespace detail_pow {
template <typename T> inline T power(T x, T y)
{
    return static_cast<T>(std::pow(static_cast<float>(x), static_cast<float>(y)));
}
/* int32_t: exact by repeated squaring (wrapping); a negative exponent gives 1 / x truncated */
template <> inline int32_t power<int32_t>(int32_t x, int32_t y)
{
    if (y < 0) {
        return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
    }
    uint32_t r = 1, b = static_cast<uint32_t>(x);
    for (uint32_t e = static_cast<uint32_t>(y); e != 0; e >>= 1) {
        if (e & 1) {
            r *= b;
        }
        b *= b;
    }
    return static_cast<int32_t>(r);
}
template <typename T, class X, class Y>
inline void run(const char *api, const LocalTensor<T> &dst, uint32_t n, X x, Y y)
{
    static_assert(npuemu::one_of<T, half, float, int32_t>::value,
                  "npu-emu: AscendC::Power supports half, float and int32_t elements only");
    npuemu::check_count(api, static_cast<int32_t>(n));
    npuemu::check_vec_operand(api, "dst", dst, static_cast<int32_t>(n));
    for (uint32_t i = 0; i < n; ++i) {
        dst.addr_[i] = power<T>(x(i), y(i));
    }
}
template <typename T>
inline void check_src(const char *api, const char *which, const LocalTensor<T> &dst, const LocalTensor<T> &src,
                      uint32_t n)
{
    npuemu::check_vec_operand(api, which, src, static_cast<int32_t>(n));
    npuemu::check_overlap(api, which, dst.addr_, n * sizeof(T), src.addr_, n * sizeof(T));
}
inline void check_tmp(const LocalTensor<uint8_t> &tmp) { tmp.check_ub("AscendC::Power (sharedTmpBuffer)"); }
} // namespace detail_pow

template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor,
                             const LocalTensor<T> &src1Tensor, uint32_t calCount)
{
    detail_pow::check_src("AscendC::Power", "src0", dstTensor, src0Tensor, calCount);
    detail_pow::check_src("AscendC::Power", "src1", dstTensor, src1Tensor, calCount);
    detail_pow::run("AscendC::Power", dstTensor, calCount, [&](uint32_t i) { return src0Tensor.addr_[i]; },
                    [&](uint32_t i) { return src1Tensor.addr_[i]; });
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor,
                             const LocalTensor<T> &src1Tensor, const LocalTensor<uint8_t> &sharedTmpBuffer,
                             uint32_t calCount)
{
    detail_pow::check_tmp(sharedTmpBuffer);
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, calCount);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor,
                             const LocalTensor<T> &src1Tensor, const LocalTensor<uint8_t> &sharedTmpBuffer)
{
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, sharedTmpBuffer, dstTensor.GetSize());
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor,
                             const LocalTensor<T> &src1Tensor)
{
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, dstTensor.GetSize());
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor, const T &src1Scalar,
                             uint32_t calCount)
{
    detail_pow::check_src("AscendC::Power", "src0", dstTensor, src0Tensor, calCount);
    const T e = src1Scalar;
    detail_pow::run("AscendC::Power", dstTensor, calCount, [&](uint32_t i) { return src0Tensor.addr_[i]; },
                    [e](uint32_t) { return e; });
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor, const T &src1Scalar,
                             const LocalTensor<uint8_t> &sharedTmpBuffer, uint32_t calCount)
{
    detail_pow::check_tmp(sharedTmpBuffer);
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Scalar, calCount);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor, const T &src1Scalar,
                             const LocalTensor<uint8_t> &sharedTmpBuffer)
{
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Scalar, sharedTmpBuffer, dstTensor.GetSize());
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const LocalTensor<T> &src0Tensor, const T &src1Scalar)
{
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Scalar, dstTensor.GetSize());
}

template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const T &src0Scalar, const LocalTensor<T> &src1Tensor,
                             uint32_t calCount)
{
    detail_pow::check_src("AscendC::Power", "src1", dstTensor, src1Tensor, calCount);
    const T b = src0Scalar;
    detail_pow::run("AscendC::Power", dstTensor, calCount, [b](uint32_t) { return b; },
                    [&](uint32_t i) { return src1Tensor.addr_[i]; });
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const T &src0Scalar, const LocalTensor<T> &src1Tensor,
                             const LocalTensor<uint8_t> &sharedTmpBuffer, uint32_t calCount)
{
    detail_pow::check_tmp(sharedTmpBuffer);
    Power<T, isReuseSource>(dstTensor, src0Scalar, src1Tensor, calCount);
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const T &src0Scalar, const LocalTensor<T> &src1Tensor,
                             const LocalTensor<uint8_t> &sharedTmpBuffer)
{
    Power<T, isReuseSource>(dstTensor, src0Scalar, src1Tensor, sharedTmpBuffer, dstTensor.GetSize());
}
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T> &dstTensor, const T &src0Scalar, const LocalTensor<T> &src1Tensor)
{
    Power<T, isReuseSource>(dstTensor, src0Scalar, src1Tensor, dstTensor.GetSize());
}

/* ---- Sum: the sum of each of `outter` rows of n elements (rows inner elements apart) ---- */

struct SumParams {
    uint32_t outter = 1;
    uint32_t inner = 0;
    uint32_t n = 0;
};

/* dst[i] = src[i * inner + 0] + ... + src[i * inner + n - 1], added in order in float and rounded
 * once to T (the NPU's adder tree is not documented). */
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void Sum(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor, const SumParams &sumParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Sum supports half and float elements only");
    const char *api = "AscendC::Sum";
    const SumParams &p = sumParams;
    if (p.outter == 0 || p.n == 0 || p.n > p.inner || (static_cast<uint64_t>(p.inner) * sizeof(T)) % 32 != 0) {
        npuemu::fault("%s: SumParams{outter %u, inner %u, n %u}: outter and n must be positive, n <= inner, and "
                      "inner * sizeof(T) a multiple of 32 bytes (inner = (n * sizeof(T) + 31) / 32 * 32 / sizeof(T))",
                      api, p.outter, p.inner, p.n);
    }
    const uint64_t src_n = static_cast<uint64_t>(p.outter) * p.inner;
    if (src_n > 0x7fffffffull) {
        npuemu::fault("%s: %u rows of %u elements are too many", api, p.outter, p.inner);
    }
    npuemu::check_vec_operand(api, "src", srcTensor, static_cast<int32_t>(src_n));
    npuemu::check_vec_operand(api, "dst", dstTensor, static_cast<int32_t>(p.outter));
    std::vector<T> out(p.outter);
    for (uint32_t r = 0; r < p.outter; ++r) {
        float acc = 0.0f;
        for (uint32_t i = 0; i < p.n; ++i) {
            acc += static_cast<float>(srcTensor.addr_[static_cast<uint64_t>(r) * p.inner + i]);
        }
        out[r] = static_cast<T>(acc);
    }
    std::memcpy(dstTensor.addr_, out.data(), out.size() * sizeof(T));
}
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
__aicore__ inline void Sum(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor,
                           const LocalTensor<uint8_t> &sharedTmpBuffer, const SumParams &sumParams)
{
    sharedTmpBuffer.check_ub("AscendC::Sum (sharedTmpBuffer)");
    Sum<T, reduceDim, isReuseSource, isBasicBlock>(dstTensor, srcTensor, sumParams);
}

/* ---- Mean: the mean of each of `outter` rows of n elements (rows inner elements apart) ---- */

struct MeanParams {
    uint32_t outter = 1;
    uint32_t inner = 0;
    uint32_t n = 0;
};

/* dst[i] = (src[i * inner] + ... + src[i * inner + n - 1]) / n, computed in float (accType half
 * or float: the NPU's accumulation type) and rounded once to T. */
template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
__aicore__ inline void Mean(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor,
                            const MeanParams &meanParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Mean supports half and float elements only");
    static_assert(npuemu::one_of<accType, half, float>::value, "npu-emu: AscendC::Mean accumulates in half or float");
    const char *api = "AscendC::Mean";
    const MeanParams &p = meanParams;
    if (p.outter == 0 || p.n == 0 || p.n > p.inner || (static_cast<uint64_t>(p.inner) * sizeof(T)) % 32 != 0) {
        npuemu::fault("%s: MeanParams{outter %u, inner %u, n %u}: outter and n must be positive, n <= inner, and "
                      "inner * sizeof(T) a multiple of 32 bytes (inner = (n * sizeof(T) + 31) / 32 * 32 / sizeof(T))",
                      api, p.outter, p.inner, p.n);
    }
    const uint64_t src_n = static_cast<uint64_t>(p.outter) * p.inner;
    if (src_n > 0x7fffffffull) {
        npuemu::fault("%s: %u rows of %u elements are too many", api, p.outter, p.inner);
    }
    npuemu::check_vec_operand(api, "src", srcTensor, static_cast<int32_t>(src_n));
    npuemu::check_vec_operand(api, "dst", dstTensor, static_cast<int32_t>(p.outter));
    std::vector<T> out(p.outter);
    for (uint32_t r = 0; r < p.outter; ++r) {
        float acc = 0.0f;
        for (uint32_t i = 0; i < p.n; ++i) {
            acc += static_cast<float>(srcTensor.addr_[static_cast<uint64_t>(r) * p.inner + i]);
        }
        out[r] = static_cast<T>(acc / static_cast<float>(p.n));
    }
    std::memcpy(dstTensor.addr_, out.data(), out.size() * sizeof(T));
}
template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
__aicore__ inline void Mean(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor,
                            const LocalTensor<uint8_t> &sharedTmpBuffer, const MeanParams &meanParams)
{
    sharedTmpBuffer.check_ub("AscendC::Mean (sharedTmpBuffer)");
    Mean<T, accType, isReuseSource, isBasicBlock, reduceDim>(dstTensor, srcTensor, meanParams);
}

/* ---- ArithProgression: dst[i] = firstValue + i * diffValue ---- */

template <typename T>
__aicore__ inline void ArithProgression(const LocalTensor<T> &dstLocal, const T firstValue, const T diffValue,
                                        const int32_t count)
{
    static_assert(npuemu::one_of<T, half, float, int16_t, int32_t>::value,
                  "npu-emu: AscendC::ArithProgression supports half, float, int16_t and int32_t elements only");
    const char *api = "AscendC::ArithProgression";
    npuemu::check_count(api, count);
    npuemu::check_vec_operand(api, "dst", dstLocal, count);
    using C = typename npuemu::calc_type<T>::type;
    const C a = static_cast<C>(firstValue), d = static_cast<C>(diffValue);
    for (int32_t i = 0; i < count; ++i) {
        dstLocal.addr_[i] = static_cast<T>(a + static_cast<C>(i) * d);
    }
}

/* ---- ClampMax / ClampMin: values above (below) scalar become scalar ---- */

#define NPUEMU_CLAMP(NAME, CMP)                                                                     \
    template <typename T, bool isReuseSource = false>                                               \
    __aicore__ inline void NAME(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor, const T scalar, \
                                const uint32_t calCount)                                            \
    {                                                                                               \
        static_assert(npuemu::one_of<T, half, float>::value,                                        \
                      "npu-emu: AscendC::" #NAME " supports half and float elements only");         \
        const float s = static_cast<float>(scalar);                                                 \
        npuemu::vec_unary("AscendC::" #NAME, dstTensor, srcTensor, static_cast<int32_t>(calCount),  \
                          [s](float a) { return a CMP s ? s : a; });                                \
    }                                                                                               \
    template <typename T, bool isReuseSource = false>                                               \
    __aicore__ inline void NAME(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor,    \
                                const LocalTensor<uint8_t> &sharedTmpBuffer, const T scalar, const uint32_t calCount) \
    {                                                                                               \
        sharedTmpBuffer.check_ub("AscendC::" #NAME " (sharedTmpBuffer)");                           \
        NAME<T, isReuseSource>(dstTensor, srcTensor, scalar, calCount);                             \
    }

NPUEMU_CLAMP(ClampMax, >)
NPUEMU_CLAMP(ClampMin, <)

#undef NPUEMU_CLAMP

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_VEC_EXT_H */
