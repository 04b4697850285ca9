/* npu-emu Ascend C CPU headers: Compare, CompareScalar and Select (the calCount forms).
 *
 * Compare writes one bit per element (bit i % 8 of byte i / 8, 1 where the comparison holds);
 * its count must fill whole 256-byte repeats, as on the vector unit. Select takes src0 where the
 * mask bit is 1 and src1 (a tensor, or a scalar in VSEL_TENSOR_SCALAR_MODE) where it is 0. */
#ifndef NPUEMU_KERNEL_OPERATOR_CMPSEL_H
#define NPUEMU_KERNEL_OPERATOR_CMPSEL_H

#include <cstdint>
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
                   uint32_t count, Get src1)
{
    const int32_t n = static_cast<int32_t>(count);
    npuemu::check_count(api, n);
    npuemu::check_vec_operand(api, "dst", dst, n);
    npuemu::check_vec_operand(api, "src0", src0, n);
    selMask.check_ub(api);
    if ((static_cast<uint64_t>(count) + 7) / 8 > static_cast<uint64_t>(selMask.GetSize()) * sizeof(U)) {
        npuemu::fault("%s: %u elements need %u mask bytes, selMask holds %llu", api, count, (count + 7) / 8,
                      static_cast<unsigned long long>(static_cast<uint64_t>(selMask.GetSize()) * sizeof(U)));
    }
    npuemu::check_overlap(api, "src0", dst.addr_, count * sizeof(T), src0.addr_, count * sizeof(T));
    const uint8_t *bits = reinterpret_cast<const uint8_t *>(selMask.addr_);
    for (uint32_t i = 0; i < count; ++i) {
        dst.addr_[i] = ((bits[i / 8] >> (i % 8)) & 1) ? src0.addr_[i] : src1(i);
    }
}
} // namespace detail_sel

/* dst[i] = mask bit i ? src0[i] : src1[i] (selMode VSEL_TENSOR_TENSOR_MODE). */
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
                              const LocalTensor<T> &src1, SELMODE selMode, uint32_t count)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Select supports half and float elements only");
    const char *api = "AscendC::Select";
    if (selMode != SELMODE::VSEL_TENSOR_TENSOR_MODE) {
        npuemu::fault("%s with a src1 tensor needs SELMODE::VSEL_TENSOR_TENSOR_MODE (got mode %d)", api,
                      static_cast<int>(selMode));
    }
    npuemu::check_vec_operand(api, "src1", src1, static_cast<int32_t>(count));
    npuemu::check_overlap(api, "src1", dst.addr_, count * sizeof(T), src1.addr_, count * sizeof(T));
    detail_sel::select(api, dst, selMask, src0, count, [&](uint32_t i) { return src1.addr_[i]; });
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

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_CMPSEL_H */
