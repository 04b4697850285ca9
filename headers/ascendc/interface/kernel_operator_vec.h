/* npu-emu Ascend C CPU headers: vector computation (the calCount forms).
 *
 * Each operation checks its operands (Unified Buffer start 32-byte aligned, calCount within every
 * operand) and computes element by element: half and bfloat16_t in float with the result rounded
 * back to the 16-bit type (round to nearest even), as the vector unit produces 16-bit results;
 * integers wrap. Element types follow the vector unit: a type the real instruction does not take
 * fails to compile with a message naming the API. */
#ifndef NPUEMU_KERNEL_OPERATOR_VEC_H
#define NPUEMU_KERNEL_OPERATOR_VEC_H

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "interface/kernel_tensor.h"
#include "npuemu/context.h"

namespace AscendC {

/* Strides of the level-0 forms, in 32-byte blocks: between the data blocks of one repeat
 * (BlkStride) and between repeats (RepStride). */
struct BinaryRepeatParams {
    __aicore__ BinaryRepeatParams() {}
    __aicore__ BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn,
                                  const uint8_t src1BlkStrideIn, const uint8_t dstRepStrideIn,
                                  const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn)
    {
    }
    uint32_t blockNumber = 8;
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct UnaryRepeatParams {
    __aicore__ UnaryRepeatParams() {}
    __aicore__ UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn,
                                 const uint8_t dstRepStrideIn, const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn)
    {
    }
    uint32_t blockNumber = 8;
    uint16_t dstBlkStride = 1;
    uint16_t srcBlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t srcRepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

} // namespace AscendC

namespace npuemu {

/* The type arithmetic is done in. */
template <class T> struct calc_type { using type = T; };
template <> struct calc_type<half> { using type = float; };
template <> struct calc_type<bfloat16_t> { using type = float; };
template <> struct calc_type<int8_t> { using type = int32_t; };
template <> struct calc_type<uint8_t> { using type = uint32_t; };
template <> struct calc_type<int16_t> { using type = int32_t; };
template <> struct calc_type<uint16_t> { using type = uint32_t; };

template <class T, class... U> struct one_of : std::false_type {};
template <class T, class U, class... R>
struct one_of<T, U, R...> : std::integral_constant<bool, std::is_same<T, U>::value || one_of<T, R...>::value> {};

template <class T>
inline void check_vec_operand(const char *api, const char *which, const AscendC::LocalTensor<T> &t, int32_t count)
{
    t.check_ub(api);
    if (ub_offset(t.addr_) % UB_ALIGN != 0) {
        fault("%s: the %s operand starts at UB offset 0x%llx, which is not 32-byte aligned", api, which,
              static_cast<unsigned long long>(ub_offset(t.addr_)));
    }
    if (static_cast<uint32_t>(count) > t.GetSize()) {
        fault("%s: calCount %d exceeds the %s operand's %u %s elements (UB offset 0x%llx)", api, count, which,
              t.GetSize(), type_name<T>::get(), static_cast<unsigned long long>(ub_offset(t.addr_)));
    }
}

/* The vector unit reads a whole repeat before writing it: an operand may be the destination
 * itself (in place) or lie apart from it, but not overlap it at another offset. */
inline void check_overlap(const char *api, const char *which, const void *dst, uint64_t dbytes, const void *src,
                          uint64_t sbytes)
{
    const uint8_t *d = static_cast<const uint8_t *>(dst), *s = static_cast<const uint8_t *>(src);
    if (d == s || dbytes == 0 || sbytes == 0 || d + dbytes <= s || s + sbytes <= d) {
        return;
    }
    fault("%s: dst (UB 0x%llx..0x%llx) and %s (UB 0x%llx..0x%llx) overlap at different offsets; operands must be "
          "the same tensor (in place) or not overlap",
          api, static_cast<unsigned long long>(ub_offset(d)), static_cast<unsigned long long>(ub_offset(d) + dbytes),
          which, static_cast<unsigned long long>(ub_offset(s)), static_cast<unsigned long long>(ub_offset(s) + sbytes));
}

inline void check_count(const char *api, int32_t count)
{
    if (count < 0) {
        fault("%s: calCount %d is negative", api, count);
    }
}

template <class T, class F>
inline void vec_binary(const char *api, const AscendC::LocalTensor<T> &dst, const AscendC::LocalTensor<T> &a,
                       const AscendC::LocalTensor<T> &b, int32_t count, F f)
{
    check_count(api, count);
    check_vec_operand(api, "dst", dst, count);
    check_vec_operand(api, "src0", a, count);
    check_vec_operand(api, "src1", b, count);
    check_overlap(api, "src0", dst.addr_, count * sizeof(T), a.addr_, count * sizeof(T));
    check_overlap(api, "src1", dst.addr_, count * sizeof(T), b.addr_, count * sizeof(T));
    using C = typename calc_type<T>::type;
    for (int32_t i = 0; i < count; ++i) {
        dst.addr_[i] = static_cast<T>(f(static_cast<C>(a.addr_[i]), static_cast<C>(b.addr_[i])));
    }
}

template <class T, class F>
inline void vec_unary(const char *api, const AscendC::LocalTensor<T> &dst, const AscendC::LocalTensor<T> &a,
                      int32_t count, F f)
{
    check_count(api, count);
    check_vec_operand(api, "dst", dst, count);
    check_vec_operand(api, "src", a, count);
    check_overlap(api, "src", dst.addr_, count * sizeof(T), a.addr_, count * sizeof(T));
    using C = typename calc_type<T>::type;
    for (int32_t i = 0; i < count; ++i) {
        dst.addr_[i] = static_cast<T>(f(static_cast<C>(a.addr_[i])));
    }
}


/* The level-0 ("mask / repeat") forms: repeatTimes repeats of 256 bytes (8 data blocks of 32
 * bytes); in repeat r, data block j of an operand starts (r * repStride + j * blkStride) * 32
 * bytes after the operand's start; the mask selects the elements of each repeat that take part
 * (the first `mask` elements, or the set bits of mask[0] / mask[1]).
 *
 * The mask comes from the call (isSetMask = true) or from the mask register (isSetMask = false:
 * SetVectorMask). In counter mode (SetMaskCount) the mask is the number of elements of the whole
 * operation: repeatTimes is ignored, the repeats are as many as those elements fill, every
 * element of a repeat is active except past the count in the last one. */
struct Level0 {
    const char *api;
    uint32_t epb;        /* elements per 32-byte block */
    uint32_t per_repeat; /* elements per repeat */
    bool bits;
    uint64_t m0, m1, count;
    uint64_t total;      /* counter mode: elements of the whole operation (0: normal mode) */
    uint32_t repeat;
    uint32_t last;       /* last active element of a (full) repeat */
    bool active(uint32_t e) const
    {
        return bits ? (((e < 64 ? m0 >> e : m1 >> (e - 64)) & 1) != 0) : e < count;
    }
    bool active(uint32_t r, uint32_t e) const
    {
        if (total != 0) {
            return static_cast<uint64_t>(r) * per_repeat + e < total;
        }
        return active(e);
    }
    /* last active element of repeat r */
    uint32_t last_of(uint32_t r) const
    {
        if (total != 0 && r + 1 == repeat) {
            return static_cast<uint32_t>((total - 1) % per_repeat);
        }
        return last;
    }
    uint64_t offset(uint32_t r, uint32_t e, uint32_t blk, uint32_t rep) const
    {
        return (static_cast<uint64_t>(r) * rep + static_cast<uint64_t>(e / epb) * blk) * epb + e % epb;
    }
};

/* The mask of a level-0 call: `mask` (bit form) or `count` (continuous form) when isSetMask,
 * else the mask register. */
template <class T>
inline Level0 level0(const char *api, const uint64_t *mask, uint64_t count, uint32_t repeat, bool isSetMask = true)
{
    Level0 l;
    l.api = api;
    l.epb = 32 / sizeof(T);
    l.per_repeat = 256 / sizeof(T);
    l.total = 0;
    const BlockContext &c = ctx();
    if (c.mask_counter) {
        /* counter mode: the low 64 bits are the element count of the whole operation */
        const uint64_t n = isSetMask ? (mask != nullptr ? mask[0] : count) : c.mask_lo;
        l.bits = false;
        l.m0 = l.m1 = 0;
        l.count = l.per_repeat;
        l.total = n;
        l.repeat = static_cast<uint32_t>((n + l.per_repeat - 1) / l.per_repeat);
        l.last = l.per_repeat - 1;
        if (n == 0) {
            l.repeat = 0;
        }
        return l;
    }
    if (!isSetMask) {
        /* the register holds a bit mask (SetVectorMask(len) set its first len bits) */
        l.bits = true;
        l.m0 = c.mask_lo;
        l.m1 = sizeof(T) == 4 ? 0 : c.mask_hi;
        l.count = 0;
    } else {
        l.bits = mask != nullptr;
        l.m0 = mask ? mask[0] : 0;
        l.m1 = mask ? mask[1] : 0;
        l.count = count;
    }
    l.repeat = repeat;
    l.last = 0;
    if (l.bits) {
        if (sizeof(T) == 4 && l.m1 != 0) {
            fault("%s: mask[1] = 0x%llx must be 0 for 32-bit elements (a repeat holds 64 of them)", api,
                  static_cast<unsigned long long>(l.m1));
        }
        if (l.m0 == 0 && l.m1 == 0) {
            fault("%s: %s are both 0", api, isSetMask ? "mask[0] and mask[1]" : "the halves of the mask register");
        }
    } else if (count == 0 || count > l.per_repeat) {
        fault("%s: mask %llu is outside [1, %u] (elements of %s per repeat)", api,
              static_cast<unsigned long long>(count), l.per_repeat, type_name<T>::get());
    }
    for (uint32_t e = 0; e < l.per_repeat; ++e) {
        if (l.active(e)) {
            l.last = e;
        }
    }
    return l;
}

/* The element count of a "first n elements" (calCount) form: the argument, or (isSetMask =
 * false) the counter-mode mask register, as the API then ignores its count. */
template <bool isSetMask>
inline int32_t count_of(const char *api, int32_t calCount)
{
    if (isSetMask) {
        return calCount;
    }
    const BlockContext &c = ctx();
    if (!c.mask_counter) {
        fault("%s<isSetMask = false>: the count comes from the mask register in counter mode, but the mask is in "
              "normal mode (call SetMaskCount() and SetVectorMask<T, MaskMode::COUNTER>(count) first)",
              api);
    }
    if (c.mask_lo > 0x7fffffffull) {
        fault("%s: the counter-mode mask register holds %llu elements", api, static_cast<unsigned long long>(c.mask_lo));
    }
    return static_cast<int32_t>(c.mask_lo);
}

template <class T>
inline void check_level0_operand(const Level0 &l, const char *which, const AscendC::LocalTensor<T> &t, uint32_t blk,
                                 uint32_t rep)
{
    t.check_ub(l.api);
    if (ub_offset(t.addr_) % UB_ALIGN != 0) {
        fault("%s: the %s operand starts at UB offset 0x%llx, which is not 32-byte aligned", l.api, which,
              static_cast<unsigned long long>(ub_offset(t.addr_)));
    }
    if (l.repeat == 0) {
        return;
    }
    uint64_t end = (l.offset(l.repeat - 1, l.last_of(l.repeat - 1), blk, rep) + 1) * sizeof(T);
    if (l.repeat > 1) {
        const uint64_t e2 = (l.offset(l.repeat - 2, l.last, blk, rep) + 1) * sizeof(T);
        end = e2 > end ? e2 : end;
    }
    const uint64_t size = static_cast<uint64_t>(t.GetSize()) * sizeof(T);
    const uint64_t limit = (size + UB_ALIGN - 1) / UB_ALIGN * UB_ALIGN;
    if (end > limit) {
        fault("%s: %u repeats (block stride %u, repeat stride %u) reach byte %llu of the %s operand, which holds "
              "%u %s elements (%llu bytes)",
              l.api, l.repeat, blk, rep, static_cast<unsigned long long>(end), which, t.GetSize(),
              type_name<T>::get(), static_cast<unsigned long long>(size));
    }
}

template <class T, class F>
inline void level0_binary(const Level0 &l, const AscendC::LocalTensor<T> &dst, const AscendC::LocalTensor<T> &a,
                          const AscendC::LocalTensor<T> &b, const AscendC::BinaryRepeatParams &p, F f)
{
    check_level0_operand(l, "dst", dst, p.dstBlkStride, p.dstRepStride);
    check_level0_operand(l, "src0", a, p.src0BlkStride, p.src0RepStride);
    check_level0_operand(l, "src1", b, p.src1BlkStride, p.src1RepStride);
    using C = typename calc_type<T>::type;
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e <= l.last_of(r); ++e) {
            if (l.active(r, e)) {
                dst.addr_[l.offset(r, e, p.dstBlkStride, p.dstRepStride)] = static_cast<T>(
                    f(static_cast<C>(a.addr_[l.offset(r, e, p.src0BlkStride, p.src0RepStride)]),
                      static_cast<C>(b.addr_[l.offset(r, e, p.src1BlkStride, p.src1RepStride)])));
            }
        }
    }
}

template <class T, class F>
inline void level0_unary(const Level0 &l, const AscendC::LocalTensor<T> &dst, const AscendC::LocalTensor<T> &a,
                         const AscendC::UnaryRepeatParams &p, F f)
{
    check_level0_operand(l, "dst", dst, p.dstBlkStride, p.dstRepStride);
    check_level0_operand(l, "src", a, p.srcBlkStride, p.srcRepStride);
    using C = typename calc_type<T>::type;
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e <= l.last_of(r); ++e) {
            if (l.active(r, e)) {
                dst.addr_[l.offset(r, e, p.dstBlkStride, p.dstRepStride)] =
                    static_cast<T>(f(static_cast<C>(a.addr_[l.offset(r, e, p.srcBlkStride, p.srcRepStride)])));
            }
        }
    }
}

/* Shifts by a scalar, on T's bits: left shifts drop the bits shifted out; right shifts are
 * arithmetic for signed T, logical for unsigned; a count of T's width or more gives 0 (-1 for a
 * negative value shifted right). */
template <class T, class C> inline C shift_left(C a, C s)
{
    using U = typename std::make_unsigned<T>::type;
    if (s < 0 || static_cast<uint64_t>(s) >= 8 * sizeof(T)) {
        return 0;
    }
    return static_cast<C>(static_cast<T>(static_cast<U>(static_cast<U>(static_cast<T>(a)) << s)));
}
template <class T, class C> inline C shift_right(C a, C s)
{
    const T v = static_cast<T>(a);
    if (s < 0 || static_cast<uint64_t>(s) >= 8 * sizeof(T)) {
        return static_cast<C>(v < 0 ? T(-1) : T(0));
    }
    return static_cast<C>(static_cast<T>(v >> s));
}

} // namespace npuemu

#define NPUEMU_PAREN(...) __VA_ARGS__
#define NPUEMU_VEC_TYPES_ARITH half, float, int16_t, int32_t
#define NPUEMU_VEC_TYPES_FLOAT half, float

/* Binary: dst[i] = src0[i] OP src1[i]. */
#define NPUEMU_VEC_BINARY(NAME, TYPES, TYPES_TEXT, EXPR)                                             \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src0,               \
                                const LocalTensor<T> &src1, const int32_t &calCount)                \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        npuemu::vec_binary("AscendC::" #NAME, dst, src0, src1,                                     \
                           npuemu::count_of<isSetMask>("AscendC::" #NAME, calCount), [](C a, C b) { return EXPR; }); \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src0,               \
                                const LocalTensor<T> &src1, const uint64_t mask[], const uint8_t repeatTimes, \
                                const BinaryRepeatParams &repeatParams)                             \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        npuemu::level0_binary(npuemu::level0<T>("AscendC::" #NAME, mask, 0, repeatTimes, isSetMask), dst, src0, src1, \
                              repeatParams, [](C a, C b) { return EXPR; });                         \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src0,               \
                                const LocalTensor<T> &src1, uint64_t mask, const uint8_t repeatTimes, \
                                const BinaryRepeatParams &repeatParams)                             \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        npuemu::level0_binary(npuemu::level0<T>("AscendC::" #NAME, nullptr, mask, repeatTimes, isSetMask), dst, src0, \
                              src1, repeatParams, [](C a, C b) { return EXPR; });                   \
    }

/* Unary: dst[i] = f(src[i]). */
#define NPUEMU_VEC_UNARY(NAME, TYPES, TYPES_TEXT, EXPR)                                              \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t &calCount) \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        npuemu::vec_unary("AscendC::" #NAME, dst, src, npuemu::count_of<isSetMask>("AscendC::" #NAME, calCount), \
                          [](C a) { return EXPR; });         \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask[], \
                                const uint8_t repeatTimes, const UnaryRepeatParams &repeatParams)   \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        npuemu::level0_unary(npuemu::level0<T>("AscendC::" #NAME, mask, 0, repeatTimes, isSetMask), dst, src, repeatParams, \
                             [](C a) { return EXPR; });                                             \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, uint64_t mask, \
                                const uint8_t repeatTimes, const UnaryRepeatParams &repeatParams)   \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        npuemu::level0_unary(npuemu::level0<T>("AscendC::" #NAME, nullptr, mask, repeatTimes, isSetMask), dst, src,       \
                             repeatParams, [](C a) { return EXPR; });                               \
    }

/* Tensor-scalar: dst[i] = src[i] OP scalar (the scalar is converted to T first). */
#define NPUEMU_VEC_SCALAR(NAME, TYPES, TYPES_TEXT, EXPR)                                             \
    template <typename T, bool isSetMask = true, typename U>                                        \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const U &scalarValue, \
                                const int32_t &calCount)                                            \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        static_assert(std::is_arithmetic<U>::value || std::is_same<U, T>::value,                    \
                      "npu-emu: AscendC::" #NAME ": the scalar must be a number");                  \
        using C = typename npuemu::calc_type<T>::type;                                              \
        const C s = static_cast<C>(static_cast<T>(scalarValue));                                    \
        npuemu::vec_unary("AscendC::" #NAME, dst, src, npuemu::count_of<isSetMask>("AscendC::" #NAME, calCount), \
                          [s](C a) { return EXPR; });        \
    }                                                                                               \
    template <typename T, bool isSetMask = true, typename U>                                        \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const U &scalarValue, \
                                const uint64_t mask[], const uint8_t repeatTimes,                   \
                                const UnaryRepeatParams &repeatParams)                              \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        const C s = static_cast<C>(static_cast<T>(scalarValue));                                    \
        npuemu::level0_unary(npuemu::level0<T>("AscendC::" #NAME, mask, 0, repeatTimes, isSetMask), dst, src, repeatParams, \
                             [s](C a) { return EXPR; });                                            \
    }                                                                                               \
    template <typename T, bool isSetMask = true, typename U>                                        \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const U &scalarValue, \
                                uint64_t mask, const uint8_t repeatTimes, const UnaryRepeatParams &repeatParams) \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        const C s = static_cast<C>(static_cast<T>(scalarValue));                                    \
        npuemu::level0_unary(npuemu::level0<T>("AscendC::" #NAME, nullptr, mask, repeatTimes, isSetMask), dst, src,       \
                             repeatParams, [s](C a) { return EXPR; });                              \
    }

namespace AscendC {

NPUEMU_VEC_BINARY(Add, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a + b)
NPUEMU_VEC_BINARY(Sub, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a - b)
NPUEMU_VEC_BINARY(Mul, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a * b)
NPUEMU_VEC_BINARY(Div, NPUEMU_VEC_TYPES_FLOAT, "half and float", a / b)
NPUEMU_VEC_BINARY(Max, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a > b ? a : b)
NPUEMU_VEC_BINARY(Min, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a < b ? a : b)
NPUEMU_VEC_BINARY(And, NPUEMU_PAREN(int16_t, uint16_t), "int16_t and uint16_t", a & b)
NPUEMU_VEC_BINARY(Or, NPUEMU_PAREN(int16_t, uint16_t), "int16_t and uint16_t", a | b)

NPUEMU_VEC_BINARY(AddRelu, NPUEMU_PAREN(half, float, int16_t), "half, float and int16_t",
                  (a + b) > C(0) ? (a + b) : C(0))
NPUEMU_VEC_BINARY(SubRelu, NPUEMU_PAREN(half, float, int16_t), "half, float and int16_t",
                  (a - b) > C(0) ? (a - b) : C(0))

NPUEMU_VEC_UNARY(Exp, NPUEMU_VEC_TYPES_FLOAT, "half and float", std::exp(a))
NPUEMU_VEC_UNARY(Ln, NPUEMU_VEC_TYPES_FLOAT, "half and float", std::log(a))
NPUEMU_VEC_UNARY(Abs, NPUEMU_VEC_TYPES_FLOAT, "half and float", std::fabs(a))
NPUEMU_VEC_UNARY(Sqrt, NPUEMU_VEC_TYPES_FLOAT, "half and float", std::sqrt(a))
NPUEMU_VEC_UNARY(Rsqrt, NPUEMU_VEC_TYPES_FLOAT, "half and float", C(1) / std::sqrt(a))
NPUEMU_VEC_UNARY(Reciprocal, NPUEMU_VEC_TYPES_FLOAT, "half and float", C(1) / a)
NPUEMU_VEC_UNARY(Relu, NPUEMU_PAREN(half, float, int32_t), "half, float and int32_t", a > C(0) ? a : C(0))
NPUEMU_VEC_UNARY(Not, NPUEMU_PAREN(int16_t, uint16_t), "int16_t and uint16_t", ~a)

NPUEMU_VEC_SCALAR(Adds, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a + s)
NPUEMU_VEC_SCALAR(Muls, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a * s)
NPUEMU_VEC_SCALAR(Maxs, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a > s ? a : s)
NPUEMU_VEC_SCALAR(Mins, NPUEMU_VEC_TYPES_ARITH, "half, float, int16_t and int32_t", a < s ? a : s)
NPUEMU_VEC_SCALAR(ShiftLeft, NPUEMU_PAREN(int16_t, uint16_t, int32_t, uint32_t),
                  "int16_t, uint16_t, int32_t and uint32_t", npuemu::shift_left<T>(a, s))
NPUEMU_VEC_SCALAR(ShiftRight, NPUEMU_PAREN(int16_t, uint16_t, int32_t, uint32_t),
                  "int16_t, uint16_t, int32_t and uint32_t", npuemu::shift_right<T>(a, s))
NPUEMU_VEC_SCALAR(LeakyRelu, NPUEMU_VEC_TYPES_FLOAT, "half and float", a >= C(0) ? a : a * s)

/* dst[i] = scalarValue for i < calCount. */
template <typename T, bool isSetMask = true, typename U>
__aicore__ inline void Duplicate(const LocalTensor<T> &dst, const U &scalarValue, const int32_t &calCount)
{
    static_assert(npuemu::one_of<T, half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t>::value,
                  "npu-emu: AscendC::Duplicate supports half, bfloat16_t, float, int16_t, uint16_t, int32_t and "
                  "uint32_t elements only");
    static_assert(std::is_arithmetic<U>::value || std::is_same<U, T>::value,
                  "npu-emu: AscendC::Duplicate: the scalar must be a number");
    const int32_t n = npuemu::count_of<isSetMask>("AscendC::Duplicate", calCount);
    npuemu::check_count("AscendC::Duplicate", n);
    npuemu::check_vec_operand("AscendC::Duplicate", "dst", dst, n);
    const T v = static_cast<T>(scalarValue);
    for (int32_t i = 0; i < n; ++i) {
        dst.addr_[i] = v;
    }
}

/* Level-0 Duplicate: dst elements selected by mask in repeatTimes repeats = scalarValue. */
template <typename T, bool isSetMask = true, typename U>
__aicore__ inline void Duplicate(const LocalTensor<T> &dst, const U &scalarValue, const uint64_t mask[],
                                 const uint8_t repeatTimes, const uint16_t dstBlockStride, const uint8_t dstRepeatStride)
{
    static_assert(npuemu::one_of<T, half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t>::value,
                  "npu-emu: AscendC::Duplicate supports half, bfloat16_t, float, int16_t, uint16_t, int32_t and "
                  "uint32_t elements only");
    const T v = static_cast<T>(scalarValue);
    UnaryRepeatParams p(dstBlockStride, dstBlockStride, dstRepeatStride, dstRepeatStride);
    npuemu::level0_unary(npuemu::level0<T>("AscendC::Duplicate", mask, 0, repeatTimes, isSetMask), dst, dst, p,
                         [v](typename npuemu::calc_type<T>::type) { return v; });
}
template <typename T, bool isSetMask = true, typename U>
__aicore__ inline void Duplicate(const LocalTensor<T> &dst, const U &scalarValue, uint64_t mask,
                                 const uint8_t repeatTimes, const uint16_t dstBlockStride, const uint8_t dstRepeatStride)
{
    static_assert(npuemu::one_of<T, half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t>::value,
                  "npu-emu: AscendC::Duplicate supports half, bfloat16_t, float, int16_t, uint16_t, int32_t and "
                  "uint32_t elements only");
    const T v = static_cast<T>(scalarValue);
    UnaryRepeatParams p(dstBlockStride, dstBlockStride, dstRepeatStride, dstRepeatStride);
    npuemu::level0_unary(npuemu::level0<T>("AscendC::Duplicate", nullptr, mask, repeatTimes, isSetMask), dst, dst, p,
                         [v](typename npuemu::calc_type<T>::type) { return v; });
}

/* Symbol overloads: `dst = src0 + src1` computes over dst.GetSize() elements. */
#define NPUEMU_SYMBOL_OVERRIDE(OP, FN)                                                              \
    template <typename T>                                                                           \
    struct SymbolOverride##FN {                                                                     \
        LocalTensor<T> src0, src1;                                                                  \
        void npuemu_apply(const LocalTensor<T> &dst) const                                          \
        {                                                                                           \
            FN(dst, src0, src1, static_cast<int32_t>(dst.GetSize()));                               \
        }                                                                                           \
    };                                                                                              \
    template <typename T>                                                                           \
    __aicore__ inline SymbolOverride##FN<T> operator OP(const LocalTensor<T> &src0, const LocalTensor<T> &src1) \
    {                                                                                               \
        return SymbolOverride##FN<T>{src0, src1};                                                   \
    }
NPUEMU_SYMBOL_OVERRIDE(+, Add)
NPUEMU_SYMBOL_OVERRIDE(-, Sub)
NPUEMU_SYMBOL_OVERRIDE(*, Mul)
NPUEMU_SYMBOL_OVERRIDE(/, Div)
NPUEMU_SYMBOL_OVERRIDE(&, And)
NPUEMU_SYMBOL_OVERRIDE(|, Or)
#undef NPUEMU_SYMBOL_OVERRIDE

} // namespace AscendC

#undef NPUEMU_VEC_BINARY
#undef NPUEMU_VEC_UNARY
#undef NPUEMU_VEC_SCALAR
#undef NPUEMU_PAREN
#undef NPUEMU_VEC_TYPES_ARITH
#undef NPUEMU_VEC_TYPES_FLOAT

#endif /* NPUEMU_KERNEL_OPERATOR_VEC_H */
