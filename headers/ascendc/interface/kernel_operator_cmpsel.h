/* npu-emu Ascend C CPU headers: Compare, CompareScalar and Select (the calCount and the level-0
 * mask / repeat forms), the CmpMask register (Compare without dst, GetCmpMask, SetCmpMask).
 *
 * Compare writes one bit per element (bit i % 8 of byte i / 8, 1 where the comparison holds);
 * its count must fill whole 256-byte repeats, as on the vector unit. The level-0 forms write the
 * results of repeat r contiguously from bit r * (256 / sizeof(T)) of dst (the results are packed:
 * dst's block / repeat strides are not used), 0 for the elements the mask leaves out. Select
 * takes src0 where the mask bit is 1 and src1 (a tensor, or a scalar in VSEL_TENSOR_SCALAR_MODE)
 * where it is 0: in VSEL_CMPMASK_SPR every repeat uses the first 256 / sizeof(T) bits of selMask,
 * in the two other modes repeat r uses the next 256 / sizeof(T) bits; the level-0 forms leave
 * the elements the mask leaves out of dst unchanged. */
#ifndef NPUEMU_KERNEL_OPERATOR_CMPSEL_H
#define NPUEMU_KERNEL_OPERATOR_CMPSEL_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "interface/kernel_operator_vec.h"

namespace AscendC {

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

} // namespace AscendC

namespace npuemu {

template <class C>
inline bool compare(AscendC::CMPMODE m, C a, C b)
{
    switch (m) {
    case AscendC::CMPMODE::LT: return a < b;
    case AscendC::CMPMODE::GT: return a > b;
    case AscendC::CMPMODE::EQ: return a == b;
    case AscendC::CMPMODE::LE: return a <= b;
    case AscendC::CMPMODE::GE: return a >= b;
    default: return a != b;
    }
}

template <class T, class U, class Get>
inline void compare_into(const char *api, const AscendC::LocalTensor<U> &dst, const AscendC::LocalTensor<T> &src0,
                         AscendC::CMPMODE mode, uint32_t count, Get src1)
{
    const int32_t n = static_cast<int32_t>(count);
    check_count(api, n);
    check_vec_operand(api, "src0", src0, n);
    if ((static_cast<uint64_t>(count) * sizeof(T)) % 256 != 0) {
        fault("%s: count %u of %s is %llu bytes, not a whole number of 256-byte repeats", api, count,
              type_name<T>::get(), static_cast<unsigned long long>(static_cast<uint64_t>(count) * sizeof(T)));
    }
    dst.check_ub(api);
    if (ub_offset(dst.addr_) % UB_ALIGN != 0) {
        fault("%s: the dst operand starts at UB offset 0x%llx, which is not 32-byte aligned", api,
              static_cast<unsigned long long>(ub_offset(dst.addr_)));
    }
    if (count / 8 > static_cast<uint64_t>(dst.GetSize()) * sizeof(U)) {
        fault("%s: %u result bits need %u bytes, the dst operand holds %llu", api, count, count / 8,
              static_cast<unsigned long long>(static_cast<uint64_t>(dst.GetSize()) * sizeof(U)));
    }
    using C = typename calc_type<T>::type;
    uint8_t *bits = reinterpret_cast<uint8_t *>(dst.addr_);
    for (uint32_t byte = 0; byte < count / 8; ++byte) {
        uint8_t v = 0;
        for (uint32_t k = 0; k < 8; ++k) {
            const uint32_t i = byte * 8 + k;
            if (compare<C>(mode, static_cast<C>(src0.addr_[i]), static_cast<C>(src1(i)))) {
                v = static_cast<uint8_t>(v | (1u << k));
            }
        }
        bits[byte] = v;
    }
}

} // namespace npuemu

namespace AscendC {

/* dst bit i = (src0[i] cmpMode src1[i]) for i < count. */
template <typename T, typename U>
__aicore__ inline void Compare(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                               CMPMODE cmpMode, uint32_t count)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Compare supports half and float elements only");
    static_assert(npuemu::one_of<U, uint8_t, int8_t>::value, "npu-emu: AscendC::Compare writes uint8_t / int8_t bit masks");
    npuemu::check_vec_operand("AscendC::Compare", "src1", src1, static_cast<int32_t>(count));
    npuemu::compare_into("AscendC::Compare", dst, src0, cmpMode, count, [&](uint32_t i) { return src1.addr_[i]; });
}

/* dst bit i = (src0[i] cmpMode scalar) for i < count. */
template <typename T, typename U, bool isSetMask = true, typename S>
__aicore__ inline void CompareScalar(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const S src1Scalar,
                                     CMPMODE cmpMode, uint32_t count)
{
    static_assert(npuemu::one_of<T, half, float>::value,
                  "npu-emu: AscendC::CompareScalar supports half and float elements only");
    static_assert(npuemu::one_of<U, uint8_t, int8_t>::value,
                  "npu-emu: AscendC::CompareScalar writes uint8_t / int8_t bit masks");
    const T s = static_cast<T>(src1Scalar);
    npuemu::compare_into("AscendC::CompareScalar", dst, src0, cmpMode, count, [s](uint32_t) { return s; });
}

namespace detail_sel {
template <typename T, typename U, class Get>
inline void select(const char *api, const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                   uint32_t count, Get src1, bool reuse = false)
{
    const int32_t n = static_cast<int32_t>(count);
    npuemu::check_count(api, n);
    npuemu::check_vec_operand(api, "dst", dst, n);
    npuemu::check_vec_operand(api, "src0", src0, n);
    selMask.check_ub(api);
    const uint32_t mask_bits = reuse && count > 256 / sizeof(T) ? static_cast<uint32_t>(256 / sizeof(T)) : count;
    if ((static_cast<uint64_t>(mask_bits) + 7) / 8 > static_cast<uint64_t>(selMask.GetSize()) * sizeof(U)) {
        npuemu::fault("%s: %u elements need %u mask bytes, selMask holds %llu", api, count, (mask_bits + 7) / 8,
                      static_cast<unsigned long long>(static_cast<uint64_t>(selMask.GetSize()) * sizeof(U)));
    }
    npuemu::check_overlap(api, "src0", dst.addr_, count * sizeof(T), src0.addr_, count * sizeof(T));
    const uint8_t *bits = reinterpret_cast<const uint8_t *>(selMask.addr_);
    const uint32_t per = reuse ? 256 / sizeof(T) : 0xffffffffu;
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t b = i % per;
        dst.addr_[i] = ((bits[b / 8] >> (b % 8)) & 1) ? src0.addr_[i] : src1(i);
    }
}
} // namespace detail_sel

/* dst[i] = mask bit i ? src0[i] : src1[i] (selMode VSEL_TENSOR_TENSOR_MODE; VSEL_CMPMASK_SPR: bit
 * i % (256 / sizeof(T)), the first repeat's bits for every repeat). */
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              const LocalTensor<T> &src1, SELMODE selMode, uint32_t count)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    const char *api = "AscendC::Select";
    if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        npuemu::fault("%s with a src1 tensor needs SELMODE::VSEL_TENSOR_TENSOR_MODE or VSEL_CMPMASK_SPR (got "
                      "VSEL_TENSOR_SCALAR_MODE, which takes a scalar src1)",
                      api);
    }
    npuemu::check_vec_operand(api, "src1", src1, static_cast<int32_t>(count));
    npuemu::check_overlap(api, "src1", dst.addr_, count * sizeof(T), src1.addr_, count * sizeof(T));
    detail_sel::select(api, dst, selMask, src0, count, [&](uint32_t i) { return src1.addr_[i]; },
                       selMode == SELMODE::VSEL_CMPMASK_SPR);
}

/* dst[i] = mask bit i ? src0[i] : scalar (selMode VSEL_TENSOR_SCALAR_MODE). */
template <typename T, typename U, typename S,
          typename std::enable_if<!std::is_same<S, LocalTensor<T>>::value, int>::type = 0>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              S src1Scalar, SELMODE selMode, uint32_t count)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    static_assert(std::is_arithmetic<S>::value || std::is_same<S, T>::value,
                  "npu-emu: AscendC::Select: src1 must be a LocalTensor or a number");
    const char *api = "AscendC::Select";
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        npuemu::fault("%s with a src1 scalar needs SELMODE::VSEL_TENSOR_SCALAR_MODE (got mode %d)", api,
                      static_cast<int>(selMode));
    }
    const T s = static_cast<T>(src1Scalar);
    detail_sel::select(api, dst, selMask, src0, count, [s](uint32_t) { return s; });
}

/* ------------------------------------------------------------------ level-0 forms ---- */

} // namespace AscendC

namespace npuemu {

/* The CmpMask register of the block's vector unit (128 bits): written by Compare without dst and
 * SetCmpMask, read by GetCmpMask and the Select forms without a mask tensor. */
struct CmpMaskReg {
    uint8_t bytes[16];
    bool set;
};
inline CmpMaskReg &cmp_mask_reg()
{
    static thread_local CmpMaskReg r = {{0}, false};
    return r;
}

template <class T, class U>
inline void check_bits_dst(const char *api, const char *which, const AscendC::LocalTensor<U> &t, uint64_t bits,
                           uint32_t align)
{
    t.check_ub(api);
    if (ub_offset(t.addr_) % align != 0) {
        fault("%s: the %s operand starts at UB offset 0x%llx, which is not %u-byte aligned", api, which,
              static_cast<unsigned long long>(ub_offset(t.addr_)), align);
    }
    const uint64_t need = (bits + 7) / 8;
    const uint64_t have = static_cast<uint64_t>(t.GetSize()) * sizeof(U);
    if (need > have) {
        fault("%s: %llu bits need %llu bytes of %s, which holds %llu", api, static_cast<unsigned long long>(bits),
              static_cast<unsigned long long>(need), which, static_cast<unsigned long long>(have));
    }
}

/* Level-0 compare: bit r * per_repeat + e of `out` = src0 (r, e) cmp src1(r, e) for active e, 0 for
 * the others. */
template <class T, class Get>
inline void compare_level0(const Level0 &l, uint8_t *out, AscendC::CMPMODE mode, const AscendC::LocalTensor<T> &src0,
                           uint32_t blk0, uint32_t rep0, Get src1)
{
    using C = typename calc_type<T>::type;
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e < l.per_repeat; ++e) {
            const uint64_t bit = static_cast<uint64_t>(r) * l.per_repeat + e;
            bool v = false;
            if (e <= l.last_of(r) && l.active(r, e)) {
                v = compare<C>(mode, static_cast<C>(src0.addr_[l.offset(r, e, blk0, rep0)]), static_cast<C>(src1(r, e)));
            }
            if (v) {
                out[bit / 8] = static_cast<uint8_t>(out[bit / 8] | (1u << (bit % 8)));
            } else {
                out[bit / 8] = static_cast<uint8_t>(out[bit / 8] & ~(1u << (bit % 8)));
            }
        }
    }
}

/* Level-0 select: dst(r, e) = selMask bit ? src0(r, e) : src1(r, e) for the active e. `bits` holds
 * the selection bits; `reuse`: every repeat takes the first per_repeat bits (VSEL_CMPMASK_SPR). */
template <class T, class Get>
inline void select_level0(const Level0 &l, const AscendC::LocalTensor<T> &dst, const uint8_t *bits, bool reuse,
                          const AscendC::LocalTensor<T> &src0, const AscendC::BinaryRepeatParams &p, Get src1)
{
    check_level0_operand(l, "dst", dst, p.dstBlkStride, p.dstRepStride);
    check_level0_operand(l, "src0", src0, p.src0BlkStride, p.src0RepStride);
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e <= l.last_of(r); ++e) {
            if (!l.active(r, e)) {
                continue;
            }
            const uint64_t bit = (reuse ? 0 : static_cast<uint64_t>(r) * l.per_repeat) + e;
            const bool take0 = ((bits[bit / 8] >> (bit % 8)) & 1) != 0;
            dst.addr_[l.offset(r, e, p.dstBlkStride, p.dstRepStride)] =
                take0 ? src0.addr_[l.offset(r, e, p.src0BlkStride, p.src0RepStride)] : src1(r, e);
        }
    }
}

template <class T, class U>
inline void check_sel_mask(const Level0 &l, const AscendC::LocalTensor<U> &selMask, bool reuse)
{
    const uint64_t bits = reuse ? l.per_repeat : static_cast<uint64_t>(l.repeat) * l.per_repeat;
    check_bits_dst<T>(l.api, "selMask", selMask, l.repeat == 0 ? 0 : bits, UB_ALIGN);
}

} // namespace npuemu

namespace AscendC {

#define NPUEMU_CMP_TYPES(API)                                                                        \
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::" API " supports half and float elements only"); \
    static_assert(npuemu::one_of<U, uint8_t, int8_t>::value, "npu-emu: AscendC::" API " writes uint8_t / int8_t bit masks")

namespace detail_sel {
template <typename T, typename U>
inline void compare0(const npuemu::Level0 &l, const LocalTensor<U> &dst, const LocalTensor<T> &src0,
                     const LocalTensor<T> &src1, CMPMODE cmpMode, const BinaryRepeatParams &p)
{
    npuemu::check_level0_operand(l, "src0", src0, p.src0BlkStride, p.src0RepStride);
    npuemu::check_level0_operand(l, "src1", src1, p.src1BlkStride, p.src1RepStride);
    npuemu::check_bits_dst<T>(l.api, "dst", dst, static_cast<uint64_t>(l.repeat) * l.per_repeat, npuemu::UB_ALIGN);
    npuemu::compare_level0(l, reinterpret_cast<uint8_t *>(dst.addr_), cmpMode, src0, p.src0BlkStride, p.src0RepStride,
                           [&](uint32_t r, uint32_t e) { return src1.addr_[l.offset(r, e, p.src1BlkStride, p.src1RepStride)]; });
}
template <typename T, typename U, typename S>
inline void compare_scalar0(const npuemu::Level0 &l, const LocalTensor<U> &dst, const LocalTensor<T> &src0, S scalar,
                            CMPMODE cmpMode, const UnaryRepeatParams &p)
{
    npuemu::check_level0_operand(l, "src0", src0, p.srcBlkStride, p.srcRepStride);
    npuemu::check_bits_dst<T>(l.api, "dst", dst, static_cast<uint64_t>(l.repeat) * l.per_repeat, npuemu::UB_ALIGN);
    const T s = static_cast<T>(scalar);
    npuemu::compare_level0(l, reinterpret_cast<uint8_t *>(dst.addr_), cmpMode, src0, p.srcBlkStride, p.srcRepStride,
                           [s](uint32_t, uint32_t) { return s; });
}
/* Compare into the CmpMask register: one repeat. */
template <typename T>
inline void compare_reg(const npuemu::Level0 &l, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                        CMPMODE cmpMode, const BinaryRepeatParams &p)
{
    npuemu::check_level0_operand(l, "src0", src0, p.src0BlkStride, p.src0RepStride);
    npuemu::check_level0_operand(l, "src1", src1, p.src1BlkStride, p.src1RepStride);
    npuemu::CmpMaskReg &reg = npuemu::cmp_mask_reg();
    std::memset(reg.bytes, 0, sizeof reg.bytes);
    reg.set = true;
    npuemu::compare_level0(l, reg.bytes, cmpMode, src0, p.src0BlkStride, p.src0RepStride,
                           [&](uint32_t r, uint32_t e) { return src1.addr_[l.offset(r, e, p.src1BlkStride, p.src1RepStride)]; });
}
} // namespace detail_sel

/* Level 0: repeatTime repeats of 256 bytes of src0 / src1 (block and repeat strides of
 * repeatParams), the results of repeat r from bit r * (256 / sizeof(T)) of dst. */
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                               CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime,
                               const BinaryRepeatParams &repeatParams)
{
    NPUEMU_CMP_TYPES("Compare");
    detail_sel::compare0(npuemu::level0<T>("AscendC::Compare", mask, 0, repeatTime, isSetMask), dst, src0, src1,
                         cmpMode, repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                               CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime,
                               const BinaryRepeatParams &repeatParams)
{
    NPUEMU_CMP_TYPES("Compare");
    detail_sel::compare0(npuemu::level0<T>("AscendC::Compare", nullptr, mask, repeatTime, isSetMask), dst, src0, src1,
                         cmpMode, repeatParams);
}

/* Compare without dst: one repeat, the 256 / sizeof(T) result bits into the CmpMask register
 * (read with GetCmpMask, or used by Select<T, VSEL_CMPMASK_SPR>). */
template <typename T, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<T> &src0, const LocalTensor<T> &src1, CMPMODE cmpMode,
                               const uint64_t mask[], const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Compare supports half and float elements only");
    detail_sel::compare_reg(npuemu::level0<T>("AscendC::Compare", mask, 0, 1, isSetMask), src0, src1, cmpMode,
                            repeatParams);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<T> &src0, const LocalTensor<T> &src1, CMPMODE cmpMode,
                               const uint64_t mask, const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Compare supports half and float elements only");
    detail_sel::compare_reg(npuemu::level0<T>("AscendC::Compare", nullptr, mask, 1, isSetMask), src0, src1, cmpMode,
                            repeatParams);
}

/* Level 0 with a scalar src1 (UnaryRepeatParams: dst's strides are not used). */
template <typename T, typename U, bool isSetMask = true, typename S>
__aicore__ inline void CompareScalar(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const S src1Scalar,
                                     CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime,
                                     const UnaryRepeatParams &repeatParams)
{
    NPUEMU_CMP_TYPES("CompareScalar");
    detail_sel::compare_scalar0(npuemu::level0<T>("AscendC::CompareScalar", mask, 0, repeatTime, isSetMask), dst, src0,
                                src1Scalar, cmpMode, repeatParams);
}
template <typename T, typename U, bool isSetMask = true, typename S>
__aicore__ inline void CompareScalar(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const S src1Scalar,
                                     CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime,
                                     const UnaryRepeatParams &repeatParams)
{
    NPUEMU_CMP_TYPES("CompareScalar");
    detail_sel::compare_scalar0(npuemu::level0<T>("AscendC::CompareScalar", nullptr, mask, repeatTime, isSetMask), dst,
                                src0, src1Scalar, cmpMode, repeatParams);
}

/* The CmpMask register's 128 bits into dst (16 bytes). */
template <typename T>
__aicore__ inline void GetCmpMask(const LocalTensor<T> &dst)
{
    npuemu::check_bits_dst<T>("AscendC::GetCmpMask", "dst", dst, 128, 16);
    std::memcpy(dst.addr_, npuemu::cmp_mask_reg().bytes, 16);
}
/* The first 16 bytes of src into the CmpMask register: the selection bits (VSEL_CMPMASK_SPR), the
 * scalar src1 (VSEL_TENSOR_SCALAR_MODE) or the address of selMask (VSEL_TENSOR_TENSOR_MODE) of
 * the Select forms without those operands. */
template <typename T>
__aicore__ inline void SetCmpMask(const LocalTensor<T> &src)
{
    npuemu::check_bits_dst<T>("AscendC::SetCmpMask", "src", src, 8 * sizeof(T), 32);
    npuemu::CmpMaskReg &reg = npuemu::cmp_mask_reg();
    const uint64_t have = static_cast<uint64_t>(src.GetSize()) * sizeof(T);
    std::memset(reg.bytes, 0, sizeof reg.bytes);
    std::memcpy(reg.bytes, src.addr_, have < 16 ? have : 16);
    reg.set = true;
}

namespace detail_sel {
template <typename T>
inline const uint8_t *reg_bits(const char *api)
{
    const npuemu::CmpMaskReg &reg = npuemu::cmp_mask_reg();
    if (!reg.set) {
        npuemu::fault("%s: the CmpMask register was never written (Compare without dst or SetCmpMask first)", api);
    }
    return reg.bytes;
}
template <typename T, typename U>
inline void sel_tensor0(const npuemu::Level0 &l, const LocalTensor<T> &dst, const LocalTensor<U> &selMask,
                        const LocalTensor<T> &src0, const LocalTensor<T> &src1, SELMODE selMode,
                        const BinaryRepeatParams &p)
{
    if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        npuemu::fault("%s with a src1 tensor needs SELMODE::VSEL_TENSOR_TENSOR_MODE or VSEL_CMPMASK_SPR (got "
                      "VSEL_TENSOR_SCALAR_MODE, which takes a scalar src1)",
                      l.api);
    }
    const bool reuse = selMode == SELMODE::VSEL_CMPMASK_SPR;
    npuemu::check_sel_mask<T>(l, selMask, reuse);
    npuemu::check_level0_operand(l, "src1", src1, p.src1BlkStride, p.src1RepStride);
    npuemu::select_level0(l, dst, reinterpret_cast<const uint8_t *>(selMask.addr_), reuse, src0, p,
                          [&](uint32_t r, uint32_t e) { return src1.addr_[l.offset(r, e, p.src1BlkStride, p.src1RepStride)]; });
}
template <typename T, typename U, typename S>
inline void sel_scalar0(const npuemu::Level0 &l, const LocalTensor<T> &dst, const LocalTensor<U> &selMask,
                        const LocalTensor<T> &src0, S scalar, SELMODE selMode, const BinaryRepeatParams &p)
{
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        npuemu::fault("%s with a src1 scalar needs SELMODE::VSEL_TENSOR_SCALAR_MODE (got mode %d)", l.api,
                      static_cast<int>(selMode));
    }
    npuemu::check_sel_mask<T>(l, selMask, false);
    const T s = static_cast<T>(scalar);
    npuemu::select_level0(l, dst, reinterpret_cast<const uint8_t *>(selMask.addr_), false, src0, p,
                          [s](uint32_t, uint32_t) { return s; });
}
} // namespace detail_sel

/* Level 0, src1 a tensor: VSEL_CMPMASK_SPR (the first repeat's selMask bits for every repeat) or
 * VSEL_TENSOR_TENSOR_MODE (repeat r: the next 256 / sizeof(T) bits). */
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              const LocalTensor<T> &src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                              const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    detail_sel::sel_tensor0(npuemu::level0<T>("AscendC::Select", mask, 0, repeatTime, isSetMask), dst, selMask, src0,
                            src1, selMode, repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              const LocalTensor<T> &src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                              const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    detail_sel::sel_tensor0(npuemu::level0<T>("AscendC::Select", nullptr, mask, repeatTime, isSetMask), dst, selMask,
                            src0, src1, selMode, repeatParams);
}
/* Level 0, src1 a scalar (VSEL_TENSOR_SCALAR_MODE). */
template <typename T, typename U, bool isSetMask = true, typename S,
          typename std::enable_if<!std::is_same<S, LocalTensor<T>>::value, int>::type = 0>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              S src1Scalar, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                              const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    detail_sel::sel_scalar0(npuemu::level0<T>("AscendC::Select", mask, 0, repeatTime, isSetMask), dst, selMask, src0,
                            src1Scalar, selMode, repeatParams);
}
template <typename T, typename U, bool isSetMask = true, typename S,
          typename std::enable_if<!std::is_same<S, LocalTensor<T>>::value, int>::type = 0>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              S src1Scalar, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                              const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    detail_sel::sel_scalar0(npuemu::level0<T>("AscendC::Select", nullptr, mask, repeatTime, isSetMask), dst, selMask,
                            src0, src1Scalar, selMode, repeatParams);
}

/* Level 0 without a mask argument (the mask register, SetVectorMask), VSEL_TENSOR_SCALAR_MODE: the
 * scalar src1 is the first element of the tensor given to SetCmpMask. */
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    const char *api = "AscendC::Select";
    T s;
    std::memcpy(&s, detail_sel::reg_bits<T>(api), sizeof(T));
    detail_sel::sel_scalar0(npuemu::level0<T>(api, nullptr, 0, repeatTime, false), dst, selMask, src0, s,
                            SELMODE::VSEL_TENSOR_SCALAR_MODE, repeatParams);
}

/* Level 0 without selMask and mask arguments (the mask register): VSEL_CMPMASK_SPR takes the
 * selection bits from the CmpMask register (Compare without dst, or SetCmpMask(selMask));
 * VSEL_TENSOR_TENSOR_MODE takes selMask's address from it (SetCmpMask of a tensor whose first
 * element holds selMask's GetPhyAddr() as an int64_t, or its UB address as a uint32_t). */
template <typename T, SELMODE selMode>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                              uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    static_assert(selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE,
                  "npu-emu: AscendC::Select<T, VSEL_TENSOR_SCALAR_MODE> takes selMask: Select(dst, selMask, src0, "
                  "repeatTime, repeatParams)");
    const char *api = "AscendC::Select";
    const npuemu::Level0 l = npuemu::level0<T>(api, nullptr, 0, repeatTime, false);
    const uint8_t *reg = detail_sel::reg_bits<T>(api);
    const uint8_t *bits = reg;
    if (selMode == SELMODE::VSEL_TENSOR_TENSOR_MODE) {
        uint64_t a = 0;
        std::memcpy(&a, reg, 8);
        uint8_t *ub = npuemu::hw_base(npuemu::HW_UB);
        const uint32_t ub_size = npuemu::hw_size(npuemu::HW_UB);
        const uint8_t *p = reinterpret_cast<const uint8_t *>(static_cast<uintptr_t>(a));
        if (p >= ub && p < ub + ub_size) {
            bits = p;
        } else if ((a & 0xffffffffull) < ub_size) {
            bits = ub + (a & 0xffffffffull);
        } else {
            npuemu::fault("%s<T, VSEL_TENSOR_TENSOR_MODE>: the CmpMask register holds 0x%llx, which is not the "
                          "address of selMask in the Unified Buffer",
                          api, static_cast<unsigned long long>(a));
        }
        const uint64_t need = (static_cast<uint64_t>(l.repeat) * l.per_repeat + 7) / 8;
        if (static_cast<uint64_t>(bits - ub) + need > ub_size) {
            npuemu::fault("%s: selMask at UB offset 0x%llx: %llu bytes of selection bits run past the Unified Buffer",
                          api, static_cast<unsigned long long>(bits - ub), static_cast<unsigned long long>(need));
        }
    }
    npuemu::check_level0_operand(l, "src1", src1, repeatParams.src1BlkStride, repeatParams.src1RepStride);
    npuemu::select_level0(l, dst, bits, selMode == SELMODE::VSEL_CMPMASK_SPR, src0, repeatParams,
                          [&](uint32_t r, uint32_t e) {
                              return src1.addr_[l.offset(r, e, repeatParams.src1BlkStride, repeatParams.src1RepStride)];
                          });
}

#undef NPUEMU_CMP_TYPES

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_CMPSEL_H */
