/* npu-emu Ascend C CPU headers: gathers, broadcasts and index vectors of the vector unit
 * (Gather, GatherMask, Brcb, CreateVecIndex), Axpy and the 16x16 Transpose.
 *
 * Written from the Ascend C API reference (矢量计算: 数据收集 / 数据填充 / 数据转换). Every operand
 * is checked as the other vector calls check theirs (Unified Buffer, 32-byte aligned start, what the
 * call reads and writes inside the tensor); the element offsets the data picks (Gather's byte
 * offsets, GatherMask's kept elements) are checked against the source / destination tensor. */
#ifndef NPUEMU_KERNEL_OPERATOR_GATHER_H
#define NPUEMU_KERNEL_OPERATOR_GATHER_H

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "interface/kernel_operator_vec.h"
#include "interface/kernel_tensor.h"
#include "npuemu/context.h"

namespace AscendC {

/* Gatherb's strides: dstBlkStride / dstRepStride in 32-byte blocks (the other members are there
 * for source compatibility and are not used). */
struct GatherRepeatParams {
    __aicore__ GatherRepeatParams() {}
    __aicore__ GatherRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn)
    {
    }
    uint32_t blockNumber = 8;
    uint16_t dstRepStride = 8;
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

/* Brcb's strides, in 32-byte blocks (dstBlkStride 0 is taken as 1, as the reference says). */
struct BrcbRepeatParams {
    __aicore__ BrcbRepeatParams() {}
    __aicore__ BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn)
    {
    }
    uint32_t blockNumber = 8;
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

/* GatherMask's iteration: src0 block / repeat strides and the user pattern's repeat stride, in
 * 32-byte blocks. */
struct GatherMaskParams {
    __aicore__ GatherMaskParams() {}
    __aicore__ GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn,
                                const uint16_t src0RepeatStrideIn, const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn)
    {
    }
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = 0;
    uint8_t src1RepeatStride = 0;
};

enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;
/* the reference's earlier spelling */
constexpr GatherMaskMode defaultGahterMaskMode = GatherMaskMode::VERSION_V1;

} // namespace AscendC

namespace npuemu {

template <class T>
inline void check_ub_span(const char *api, const char *which, const AscendC::LocalTensor<T> &t, uint64_t first_byte,
                          uint64_t end_byte)
{
    const uint64_t size = static_cast<uint64_t>(t.GetSize()) * sizeof(T);
    const uint64_t limit = (size + UB_ALIGN - 1) / UB_ALIGN * UB_ALIGN;
    if (end_byte > limit) {
        fault("%s: the %s operand is accessed at bytes [%llu, %llu), past its %u %s elements (%llu bytes)", api, which,
              static_cast<unsigned long long>(first_byte), static_cast<unsigned long long>(end_byte), t.GetSize(),
              type_name<T>::get(), static_cast<unsigned long long>(size));
    }
}

template <class T> inline void check_aligned_ub(const char *api, const char *which, const AscendC::LocalTensor<T> &t)
{
    t.check_ub(api);
    if (ub_offset(t.addr_) % UB_ALIGN != 0) {
        fault("%s: the %s operand starts at UB offset 0x%llx, which is not 32-byte aligned", api, which,
              static_cast<unsigned long long>(ub_offset(t.addr_)));
    }
}

/* One element of Gather: src's element at byte srcBaseAddr + off (relative to src's start). */
template <class T>
inline T gather_one(const char *api, const AscendC::LocalTensor<T> &src, uint32_t base, uint32_t off, uint32_t i)
{
    const uint64_t byte = static_cast<uint64_t>(base) + off;
    if (byte % sizeof(T) != 0) {
        fault("%s: srcOffset[%u] = %u (+ srcBaseAddr %u) is not a multiple of the %u-byte %s element", api, i, off,
              base, static_cast<unsigned>(sizeof(T)), type_name<T>::get());
    }
    if (byte + sizeof(T) > static_cast<uint64_t>(src.GetSize()) * sizeof(T)) {
        fault("%s: srcOffset[%u] = %u (+ srcBaseAddr %u) bytes is past the src operand's %u %s elements", api, i, off,
              base, src.GetSize(), type_name<T>::get());
    }
    return src.addr_[byte / sizeof(T)];
}

/* GatherMask's built-in patterns: bit e of the pattern of a repeat keeps element e. */
inline bool gather_mask_builtin(uint8_t p, uint32_t e)
{
    switch (p) {
    case 1: return e % 2 == 0;
    case 2: return e % 2 == 1;
    case 3: return e % 4 == 0;
    case 4: return e % 4 == 1;
    case 5: return e % 4 == 2;
    case 6: return e % 4 == 3;
    default: return true;
    }
}

/* GatherMask: the kept elements of src0, packed from dst[0]; `keep(r, e)` says whether element e
 * of repeat r is kept. reduceMode false: gm.repeatTimes repeats of 256 bytes (mask unused);
 * true (counter mode): `mask` elements in as many repeats as they fill (repeatTimes unused). */
template <class T, class Keep>
inline uint64_t gather_mask(const char *api, const AscendC::LocalTensor<T> &dst, const AscendC::LocalTensor<T> &src0,
                            bool reduceMode, uint32_t mask, const AscendC::GatherMaskParams &gm, Keep keep)
{
    check_aligned_ub(api, "dst", dst);
    check_aligned_ub(api, "src0", src0);
    const uint32_t epb = 32 / sizeof(T), per = 256 / sizeof(T);
    uint64_t total;
    uint32_t repeats;
    if (reduceMode) {
        if (mask == 0) {
            fault("%s: reduceMode = true (counter mode) with mask 0: the mask is the number of elements", api);
        }
        total = mask;
        repeats = static_cast<uint32_t>((total + per - 1) / per);
    } else {
        repeats = gm.repeatTimes;
        total = static_cast<uint64_t>(repeats) * per;
    }
    const uint32_t blk = gm.src0BlockStride;
    uint64_t n = 0;
    for (uint32_t r = 0; r < repeats; ++r) {
        for (uint32_t e = 0; e < per && static_cast<uint64_t>(r) * per + e < total; ++e) {
            if (!keep(r, e)) {
                continue;
            }
            const uint64_t s = (static_cast<uint64_t>(r) * gm.src0RepeatStride + (e / epb) * blk) * epb + e % epb;
            check_ub_span(api, "src0", src0, s * sizeof(T), (s + 1) * sizeof(T));
            check_ub_span(api, "dst", dst, n * sizeof(T), (n + 1) * sizeof(T));
            dst.addr_[n++] = src0.addr_[s];
        }
    }
    return n;
}

} // namespace npuemu

namespace AscendC {

/* ---- Gather: dst[i] = the element of src at byte srcBaseAddr + srcOffset[i] ---- */

#define NPUEMU_GATHER_TYPES half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t

template <typename T>
__aicore__ inline void Gather(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<uint32_t> &srcOffset,
                              const uint32_t srcBaseAddr, const uint32_t count)
{
    static_assert(npuemu::one_of<T, NPUEMU_GATHER_TYPES>::value,
                  "npu-emu: AscendC::Gather supports 16- and 32-bit elements only");
    const char *api = "AscendC::Gather";
    npuemu::check_vec_operand(api, "dst", dst, static_cast<int32_t>(count));
    npuemu::check_aligned_ub(api, "src", src);
    npuemu::check_vec_operand(api, "srcOffset", srcOffset, static_cast<int32_t>(count));
    for (uint32_t i = 0; i < count; ++i) {
        dst.addr_[i] = npuemu::gather_one(api, src, srcBaseAddr, srcOffset.addr_[i], i);
    }
}

namespace npuemu_detail {
template <typename T>
inline void gather_level0(const npuemu::Level0 &l, const LocalTensor<T> &dst, const LocalTensor<T> &src,
                          const LocalTensor<uint32_t> &srcOffset, uint32_t srcBaseAddr, uint16_t dstRepStride)
{
    npuemu::check_level0_operand(l, "dst", dst, 1, dstRepStride);
    npuemu::check_aligned_ub(l.api, "src", src);
    npuemu::check_aligned_ub(l.api, "srcOffset", srcOffset);
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e <= l.last_of(r); ++e) {
            if (!l.active(r, e)) {
                continue;
            }
            const uint64_t oi = static_cast<uint64_t>(r) * l.per_repeat + e;
            if (oi >= srcOffset.GetSize()) {
                npuemu::fault("%s: repeat %u needs srcOffset[%llu], past its %u elements", l.api, r,
                              static_cast<unsigned long long>(oi), srcOffset.GetSize());
            }
            dst.addr_[l.offset(r, e, 1, dstRepStride)] =
                npuemu::gather_one(l.api, src, srcBaseAddr, srcOffset.addr_[oi], static_cast<uint32_t>(oi));
        }
    }
}
} // namespace npuemu_detail

template <typename T>
__aicore__ inline void Gather(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<uint32_t> &srcOffset,
                              const uint32_t srcBaseAddr, const uint64_t mask[], const uint8_t repeatTimes,
                              const uint16_t dstRepStride)
{
    static_assert(npuemu::one_of<T, NPUEMU_GATHER_TYPES>::value,
                  "npu-emu: AscendC::Gather supports 16- and 32-bit elements only");
    npuemu_detail::gather_level0(npuemu::level0<T>("AscendC::Gather", mask, 0, repeatTimes), dst, src, srcOffset,
                                 srcBaseAddr, dstRepStride);
}

template <typename T>
__aicore__ inline void Gather(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<uint32_t> &srcOffset,
                              const uint32_t srcBaseAddr, const uint64_t mask, const uint8_t repeatTimes,
                              const uint16_t dstRepStride)
{
    static_assert(npuemu::one_of<T, NPUEMU_GATHER_TYPES>::value,
                  "npu-emu: AscendC::Gather supports 16- and 32-bit elements only");
    npuemu_detail::gather_level0(npuemu::level0<T>("AscendC::Gather", nullptr, mask, repeatTimes), dst, src,
                                 srcOffset, srcBaseAddr, dstRepStride);
}

/* ---- GatherMask ---- */

template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<U> &src1Pattern,
                                  const bool reduceMode, const uint32_t mask, const GatherMaskParams &gatherMaskParams,
                                  uint64_t &rsvdCnt)
{
    static_assert(npuemu::one_of<T, NPUEMU_GATHER_TYPES>::value,
                  "npu-emu: AscendC::GatherMask supports 16- and 32-bit elements only");
    static_assert(sizeof(U) == sizeof(T) && std::is_unsigned<U>::value,
                  "npu-emu: AscendC::GatherMask: src1Pattern is uint16_t for 16-bit elements, uint32_t for 32-bit");
    const char *api = "AscendC::GatherMask";
    npuemu::check_aligned_ub(api, "src1Pattern", src1Pattern);
    const uint32_t per = 256 / sizeof(T), bits = 8 * sizeof(U);
    /* the pattern of repeat r starts src1RepeatStride * 32 bytes after that of repeat r - 1 */
    const uint64_t rep_elems = static_cast<uint64_t>(gatherMaskParams.src1RepeatStride) * 32 / sizeof(U);
    rsvdCnt = npuemu::gather_mask(api, dst, src0, reduceMode, mask, gatherMaskParams, [&](uint32_t r, uint32_t e) {
        /* in counter mode the pattern runs on over the elements, one bit per element */
        const uint64_t idx = reduceMode ? static_cast<uint64_t>(r) * per + e : r * rep_elems + e;
        const uint64_t word = reduceMode ? idx / bits : r * rep_elems + e / bits;
        npuemu::check_ub_span(api, "src1Pattern", src1Pattern, word * sizeof(U), (word + 1) * sizeof(U));
        return ((src1Pattern.addr_[word] >> (e % bits)) & 1u) != 0;
    });
}

template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const uint8_t src1Pattern,
                                  const bool reduceMode, const uint32_t mask, const GatherMaskParams &gatherMaskParams,
                                  uint64_t &rsvdCnt)
{
    static_assert(npuemu::one_of<T, NPUEMU_GATHER_TYPES>::value,
                  "npu-emu: AscendC::GatherMask supports 16- and 32-bit elements only");
    if (src1Pattern < 1 || src1Pattern > 7) {
        npuemu::fault("AscendC::GatherMask: built-in src1Pattern %u is outside [1, 7]", src1Pattern);
    }
    rsvdCnt = npuemu::gather_mask("AscendC::GatherMask", dst, src0, reduceMode, mask, gatherMaskParams,
                                  [&](uint32_t, uint32_t e) { return npuemu::gather_mask_builtin(src1Pattern, e); });
}

/* ---- Brcb: element j of repeat r fills data block j of repeat r of dst ---- */

template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const uint8_t repeatTime,
                            const BrcbRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, NPUEMU_GATHER_TYPES>::value,
                  "npu-emu: AscendC::Brcb supports 16- and 32-bit elements only");
    const char *api = "AscendC::Brcb";
    npuemu::check_aligned_ub(api, "dst", dst);
    npuemu::check_aligned_ub(api, "src0", src0);
    if (dst.addr_ == src0.addr_) {
        npuemu::fault("%s: src0 and dst are the same tensor, which the reference does not allow", api);
    }
    if (static_cast<uint64_t>(src0.GetSize()) < 8ull * repeatTime) {
        npuemu::fault("%s: %u repeats read %u elements, but src0 holds %u", api, repeatTime, 8u * repeatTime,
                      src0.GetSize());
    }
    const uint32_t epb = 32 / sizeof(T);
    const uint64_t blk = repeatParams.dstBlkStride == 0 ? 1 : repeatParams.dstBlkStride;
    for (uint32_t r = 0; r < repeatTime; ++r) {
        for (uint32_t j = 0; j < 8; ++j) {
            const uint64_t b = static_cast<uint64_t>(r) * repeatParams.dstRepStride + j * blk;
            npuemu::check_ub_span(api, "dst", dst, b * 32, b * 32 + 32);
            const T v = src0.addr_[r * 8 + j];
            for (uint32_t k = 0; k < epb; ++k) {
                dst.addr_[b * epb + k] = v;
            }
        }
    }
}

/* ---- Gatherb: data block j of repeat r of dst = the 32 bytes at byte offset[r * 8 + j] of src0 ---- */

template <typename T>
__aicore__ inline void Gatherb(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<uint32_t> &offset,
                               const uint8_t repeatTime, const GatherRepeatParams &repeatParams)
{
    static_assert(npuemu::one_of<T, uint16_t, uint32_t>::value,
                  "npu-emu: AscendC::Gatherb supports uint16_t and uint32_t elements only (Atlas A2 / A3)");
    const char *api = "AscendC::Gatherb";
    npuemu::check_aligned_ub(api, "dst", dst);
    npuemu::check_aligned_ub(api, "src0", src0);
    npuemu::check_aligned_ub(api, "offset", offset);
    if (repeatTime == 0) {
        npuemu::fault("%s: repeatTime 0 is outside (0, 255]", api);
    }
    if (static_cast<uint64_t>(offset.GetSize()) < 8ull * repeatTime) {
        npuemu::fault("%s: %u repeats read %u offsets, but offset holds %u", api, repeatTime, 8u * repeatTime,
                      offset.GetSize());
    }
    const uint64_t src_bytes = static_cast<uint64_t>(src0.GetSize()) * sizeof(T);
    const uint64_t src_limit = (src_bytes + npuemu::UB_ALIGN - 1) / npuemu::UB_ALIGN * npuemu::UB_ALIGN;
    /* read every source block first: dst may overlap src0 */
    std::vector<uint8_t> blocks(static_cast<size_t>(repeatTime) * 8 * 32);
    for (uint32_t i = 0; i < 8u * repeatTime; ++i) {
        const uint32_t off = offset.addr_[i];
        if (off % 32 != 0) {
            npuemu::fault("%s: offset[%u] = %u bytes is not a multiple of 32 (each offset picks a 32-byte data block)",
                          api, i, off);
        }
        if (static_cast<uint64_t>(off) + 32 > src_limit) {
            npuemu::fault("%s: offset[%u] = %u bytes: the data block is past the src0 operand's %u %s elements (%llu "
                          "bytes)",
                          api, i, off, src0.GetSize(), npuemu::type_name<T>::get(),
                          static_cast<unsigned long long>(src_bytes));
        }
        std::memcpy(&blocks[static_cast<size_t>(i) * 32], reinterpret_cast<const uint8_t *>(src0.addr_) + off, 32);
    }
    uint8_t *d = reinterpret_cast<uint8_t *>(dst.addr_);
    for (uint32_t r = 0; r < repeatTime; ++r) {
        for (uint32_t j = 0; j < 8; ++j) {
            const uint64_t b = static_cast<uint64_t>(r) * repeatParams.dstRepStride +
                               static_cast<uint64_t>(j) * repeatParams.dstBlkStride;
            npuemu::check_ub_span(api, "dst", dst, b * 32, b * 32 + 32);
            std::memcpy(d + b * 32, &blocks[(static_cast<size_t>(r) * 8 + j) * 32], 32);
        }
    }
}

/* ---- CreateVecIndex: dst[i] = firstValue + i ---- */

template <typename T>
__aicore__ inline void CreateVecIndex(LocalTensor<T> dst, const T &firstValue, uint32_t calCount)
{
    static_assert(npuemu::one_of<T, half, float, int16_t, int32_t>::value,
                  "npu-emu: AscendC::CreateVecIndex supports half, float, int16_t and int32_t elements only");
    const char *api = "AscendC::CreateVecIndex";
    npuemu::check_vec_operand(api, "dst", dst, static_cast<int32_t>(calCount));
    using C = typename npuemu::calc_type<T>::type;
    const C f = static_cast<C>(firstValue);
    for (uint32_t i = 0; i < calCount; ++i) {
        dst.addr_[i] = static_cast<T>(f + static_cast<C>(i));
    }
}

/* ---- Axpy: dst[i] = src[i] * scalar + dst[i] (half/half, float/float, half src into float dst),
 * computed in float and rounded once to T ---- */

template <typename T, typename U>
__aicore__ inline void Axpy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const U &scalarValue,
                            const int32_t &calCount)
{
    static_assert((std::is_same<T, U>::value && npuemu::one_of<T, half, float>::value) ||
                      (std::is_same<T, float>::value && std::is_same<U, half>::value),
                  "npu-emu: AscendC::Axpy supports (dst, src) = (half, half), (float, float) and (float, half)");
    const char *api = "AscendC::Axpy";
    npuemu::check_count(api, calCount);
    npuemu::check_vec_operand(api, "dst", dst, calCount);
    npuemu::check_vec_operand(api, "src", src, calCount);
    npuemu::check_overlap(api, "src", dst.addr_, calCount * sizeof(T), src.addr_, calCount * sizeof(U));
    const float s = static_cast<float>(scalarValue);
    for (int32_t i = 0; i < calCount; ++i) {
        dst.addr_[i] = static_cast<T>(static_cast<float>(src.addr_[i]) * s + static_cast<float>(dst.addr_[i]));
    }
}

namespace npuemu_detail {
template <typename T, typename U>
inline void axpy_level0(npuemu::Level0 l, const LocalTensor<T> &dst, const LocalTensor<U> &src, float s,
                        const UnaryRepeatParams &p)
{
    npuemu::check_level0_operand(l, "dst", dst, p.dstBlkStride, p.dstRepStride);
    npuemu::Level0 ls = l; /* the source's elements per block (half into float: 16 of 64 per repeat) */
    ls.epb = 32 / sizeof(U);
    npuemu::check_level0_operand(ls, "src", src, p.srcBlkStride, p.srcRepStride);
    for (uint32_t r = 0; r < l.repeat; ++r) {
        for (uint32_t e = 0; e <= l.last_of(r); ++e) {
            if (l.active(r, e)) {
                T &d = dst.addr_[l.offset(r, e, p.dstBlkStride, p.dstRepStride)];
                d = static_cast<T>(static_cast<float>(src.addr_[ls.offset(r, e, p.srcBlkStride, p.srcRepStride)]) * s +
                                   static_cast<float>(d));
            }
        }
    }
}
} // namespace npuemu_detail

template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Axpy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const U &scalarValue, uint64_t mask[],
                            const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    static_assert((std::is_same<T, U>::value && npuemu::one_of<T, half, float>::value) ||
                      (std::is_same<T, float>::value && std::is_same<U, half>::value),
                  "npu-emu: AscendC::Axpy supports (dst, src) = (half, half), (float, float) and (float, half)");
    npuemu_detail::axpy_level0(npuemu::level0<T>("AscendC::Axpy", mask, 0, repeatTime, isSetMask), dst, src,
                               static_cast<float>(scalarValue), repeatParams);
}

template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Axpy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const U &scalarValue, uint64_t mask,
                            const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    static_assert((std::is_same<T, U>::value && npuemu::one_of<T, half, float>::value) ||
                      (std::is_same<T, float>::value && std::is_same<U, half>::value),
                  "npu-emu: AscendC::Axpy supports (dst, src) = (half, half), (float, float) and (float, half)");
    npuemu_detail::axpy_level0(npuemu::level0<T>("AscendC::Axpy", nullptr, mask, repeatTime, isSetMask), dst, src,
                               static_cast<float>(scalarValue), repeatParams);
}

/* The high-level API's Axpy (Muls then Add, for precision): the same result here. */
template <typename T, typename U, bool isReuseSource = false>
__aicore__ inline void Axpy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const U scalarValue,
                            const LocalTensor<uint8_t> &sharedTmpBuffer, const uint32_t calCount)
{
    sharedTmpBuffer.check_ub("AscendC::Axpy (sharedTmpBuffer)");
    Axpy(dst, src, scalarValue, static_cast<int32_t>(calCount));
}

/* ---- Transpose: one 16x16 matrix of 16-bit elements (dst[i][j] = src[j][i]) ---- */

template <typename T> __aicore__ inline void Transpose(const LocalTensor<T> &dst, const LocalTensor<T> &src)
{
    static_assert(npuemu::one_of<T, half, int16_t, uint16_t>::value,
                  "npu-emu: AscendC::Transpose (the 16x16 form) supports half, int16_t and uint16_t elements only");
    const char *api = "AscendC::Transpose";
    npuemu::check_vec_operand(api, "dst", dst, 256);
    npuemu::check_vec_operand(api, "src", src, 256);
    T tmp[256];
    for (uint32_t i = 0; i < 16; ++i) {
        for (uint32_t j = 0; j < 16; ++j) {
            tmp[i * 16 + j] = src.addr_[j * 16 + i];
        }
    }
    std::memcpy(static_cast<void *>(dst.addr_), static_cast<const void *>(tmp), sizeof tmp);
}

/* The enhanced form (TransposeParamsExt: NCHW <-> NHWC, [N,C,H,W] transposes with a shared tmp
 * buffer) is not emulated. */
template <typename T, typename U, typename P>
__aicore__ inline void Transpose(const LocalTensor<T> &, const LocalTensor<T> &, const LocalTensor<U> &, const P &)
{
    static_assert(npuemu::dependent_false<T>::value,
                  "npu-emu: AscendC::Transpose with TransposeParamsExt is not supported by the CPU kernel headers "
                  "(see README.md)");
}

#undef NPUEMU_GATHER_TYPES

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_GATHER_H */
