/* npu-emu Ascend C CPU headers: reductions.
 *
 * Per-instruction forms (level 0, one result per repeat / data block / pair):
 *   WholeReduceSum/Max/Min   every active element of a repeat (Max/Min: value and index)
 *   BlockReduceSum/Max/Min   every active element of each 32-byte data block of a repeat
 *   PairReduceSum            each pair (2k, 2k+1) of a repeat
 *   RepeatReduceSum          WholeReduceSum with a continuous mask
 * Whole-tensor forms (one result):
 *   ReduceSum, ReduceMax, ReduceMin   (dst, src, sharedTmpBuffer, count[, calIndex]) and
 *                                     (dst, src, sharedTmpBuffer, mask, repeatTime, srcRepStride[, calIndex])
 * and the newer names ReduceRepeat<ReduceType>, ReduceDataBlock<ReduceType>, ReducePairElem.
 *
 * Summation order (deterministic, as the Ascend C reference describes the A2/A3 vector unit):
 * - within a repeat (or a data block) the elements are added as a binary tree of neighbours:
 *   (e0+e1), (e2+e3), ..., then the neighbouring partial sums, and so on over all the slots of
 *   the repeat (256 bytes) or block (32 bytes); inactive (masked-out) elements count as 0;
 * - every addition is rounded to the element type (IEEE round-to-nearest-even, overflow to
 *   +-inf): the vector unit's default non-saturating mode. The saturating mode the reference
 *   describes for half (SetCtrlSpr; 60000+60000 = 65504) is not emulated;
 * - ReduceSum, first-n form: one tree per repeat, the repeat results added in order ("方式一");
 *   mask/repeat form: one tree per repeat, then trees over the repeat results, repeat after
 *   repeat, until one value is left ("方式二"); the first round's results are written to
 *   sharedTmpBuffer as on the NPU.
 * How close to hardware: the order of the additions is the documented one, so float results
 * match an NPU that rounds each addition to float; whether the vector unit keeps wider partial
 * sums for half is not documented, so half results may differ from the NPU in the last bit.
 * Max/Min compare exactly and return the lowest index among equal values. */
#ifndef NPUEMU_KERNEL_OPERATOR_REDUCE_H
#define NPUEMU_KERNEL_OPERATOR_REDUCE_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "interface/kernel_operator_mask.h"
#include "interface/kernel_operator_vec.h"

namespace AscendC {

enum class ReduceOrder : uint8_t {
    ORDER_VALUE_INDEX = 0,
    ORDER_INDEX_VALUE,
    ORDER_ONLY_VALUE,
    ORDER_ONLY_INDEX,
};
enum class ReduceType : uint8_t { SUM = 0, MAX, MIN };

} // namespace AscendC

namespace npuemu {

/* One rounded addition of two elements of T, in T's precision (the float sum of two halves is
 * exact, so rounding it to half is the correctly rounded half addition). */
template <class T> struct red_add {
    static float add(float a, float b) { return a + b; }
};
template <> struct red_add<half> {
    static float add(float a, float b) { return static_cast<float>(half(a + b)); }
};

/* The binary tree of neighbours over n slots (n a power of two), in place. */
template <class T>
NPUEMU_NOSAN inline float tree_sum(float *v, uint32_t n)
{
    for (uint32_t w = n; w > 1; w /= 2) {
        for (uint32_t i = 0; i < w / 2; ++i) {
            v[i] = red_add<T>::add(v[2 * i], v[2 * i + 1]);
        }
    }
    return v[0];
}

template <class T>
inline void check_red_types(const char *api)
{
    (void)api;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "npu-emu: the Ascend C reductions support half and float elements only");
}

/* dst operand of a reduction: `elems` elements, start aligned to `align` bytes. */
template <class T>
inline void check_red_dst(const char *api, const AscendC::LocalTensor<T> &dst, uint64_t elems, uint32_t align)
{
    dst.check_ub(api);
    if (ub_offset(dst.addr_) % align != 0) {
        fault("%s: the dst operand starts at UB offset 0x%llx, which is not %u-byte aligned", api,
              static_cast<unsigned long long>(ub_offset(dst.addr_)), align);
    }
    if (elems > dst.GetSize()) {
        fault("%s: writes %llu %s elements of the dst operand, which holds %u", api,
              static_cast<unsigned long long>(elems), type_name<T>::get(), dst.GetSize());
    }
}

template <class T>
inline T bits_as(uint32_t index)
{
    T v;
    if (sizeof(T) == 2) {
        const uint16_t i = static_cast<uint16_t>(index);
        std::memcpy(&v, &i, 2);
    } else {
        std::memcpy(&v, &index, sizeof(T));
    }
    return v;
}

/* The active elements of repeat r of a level-0 reduction, as float (inactive: `fill`). */
template <class T>
NPUEMU_NOSAN inline void gather_repeat(const Level0 &l, const T *src, uint32_t r, uint32_t blk, uint32_t rep,
                                       float *v, bool *act, float fill)
{
    for (uint32_t e = 0; e < l.per_repeat; ++e) {
        act[e] = l.active(r, e);
        v[e] = act[e] ? static_cast<float>(src[l.offset(r, e, blk, rep)]) : fill;
    }
}

enum RedOp { RED_SUM, RED_MAX, RED_MIN };

/* WholeReduce*: one result per repeat at dst + r * dstRepStride (in result units). */
template <class T, RedOp op>
NPUEMU_NOSAN inline void whole_reduce(const char *api, const AscendC::LocalTensor<T> &dst,
                                      const AscendC::LocalTensor<T> &src, const Level0 &l, int32_t dstRepStride,
                                      int32_t srcBlkStride, int32_t srcRepStride, AscendC::ReduceOrder order)
{
    check_red_types<T>(api);
    if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) {
        fault("%s: dstRepStride %d, srcBlkStride %d and srcRepStride %d must not be negative", api, dstRepStride,
              srcBlkStride, srcRepStride);
    }
    if (l.repeat == 0) {
        return;
    }
    check_level0_operand(l, "src", src, static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride));
    using O = AscendC::ReduceOrder;
    /* result unit in elements of T and the dst alignment (the reference's table) */
    uint32_t unit = 1, align = sizeof(T);
    if (op != RED_SUM) {
        if (order == O::ORDER_VALUE_INDEX || order == O::ORDER_INDEX_VALUE) {
            unit = 2;
            align = 2 * sizeof(T);
        } else if (order == O::ORDER_ONLY_INDEX) {
            unit = 4 / sizeof(T);
            align = 4;
        }
    }
    check_red_dst(api, dst, static_cast<uint64_t>(l.repeat - 1) * dstRepStride * unit + unit, align);
    float v[128];
    bool act[128];
    for (uint32_t r = 0; r < l.repeat; ++r) {
        T *out = dst.addr_ + static_cast<uint64_t>(r) * dstRepStride * unit;
        if (op == RED_SUM) {
            gather_repeat(l, src.addr_, r, srcBlkStride, srcRepStride, v, act, 0.0f);
            *out = static_cast<T>(tree_sum<T>(v, l.per_repeat));
            continue;
        }
        gather_repeat(l, src.addr_, r, srcBlkStride, srcRepStride, v, act, 0.0f);
        int32_t best = -1;
        for (uint32_t e = 0; e < l.per_repeat; ++e) {
            if (act[e] && (best < 0 || (op == RED_MAX ? v[e] > v[best] : v[e] < v[best]))) {
                best = static_cast<int32_t>(e);
            }
        }
        if (best < 0) {
            continue;
        }
        const T value = src.addr_[l.offset(r, static_cast<uint32_t>(best), srcBlkStride, srcRepStride)];
        const T index = bits_as<T>(static_cast<uint32_t>(best));
        switch (order) {
        case O::ORDER_VALUE_INDEX: out[0] = value; out[1] = index; break;
        case O::ORDER_INDEX_VALUE: out[0] = index; out[1] = value; break;
        case O::ORDER_ONLY_VALUE: out[0] = value; break;
        default: {
            const uint32_t i = static_cast<uint32_t>(best);
            std::memcpy(out, &i, 4);
        }
        }
    }
}

/* BlockReduce*: eight results per repeat (one per data block) at dst + r * dstRepStride * 8.
 * A data block without active elements is not written. */
template <class T, RedOp op>
NPUEMU_NOSAN inline void block_reduce(const char *api, const AscendC::LocalTensor<T> &dst,
                                      const AscendC::LocalTensor<T> &src, const Level0 &l, int32_t dstRepStride,
                                      int32_t srcBlkStride, int32_t srcRepStride)
{
    check_red_types<T>(api);
    if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) {
        fault("%s: dstRepStride %d, srcBlkStride %d and srcRepStride %d must not be negative", api, dstRepStride,
              srcBlkStride, srcRepStride);
    }
    if (l.repeat == 0) {
        return;
    }
    check_level0_operand(l, "src", src, static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride));
    check_red_dst(api, dst, static_cast<uint64_t>(l.repeat - 1) * dstRepStride * 8 + 8, sizeof(T));
    float v[128];
    bool act[128];
    for (uint32_t r = 0; r < l.repeat; ++r) {
        gather_repeat(l, src.addr_, r, srcBlkStride, srcRepStride, v, act, 0.0f);
        T *out = dst.addr_ + static_cast<uint64_t>(r) * dstRepStride * 8;
        for (uint32_t j = 0; j < 8; ++j) {
            float *b = v + j * l.epb;
            const bool *a = act + j * l.epb;
            bool any = false;
            for (uint32_t k = 0; k < l.epb; ++k) {
                any = any || a[k];
            }
            if (!any) {
                continue;
            }
            if (op == RED_SUM) {
                out[j] = static_cast<T>(tree_sum<T>(b, l.epb));
            } else {
                int32_t best = -1;
                for (uint32_t k = 0; k < l.epb; ++k) {
                    if (a[k] && (best < 0 || (op == RED_MAX ? b[k] > b[best] : b[k] < b[best]))) {
                        best = static_cast<int32_t>(k);
                    }
                }
                out[j] = src.addr_[l.offset(r, j * l.epb + static_cast<uint32_t>(best), srcBlkStride, srcRepStride)];
            }
        }
    }
}

/* PairReduceSum: per_repeat / 2 results per repeat at dst + r * dstRepStride * (per_repeat / 2);
 * a pair without active elements is not written. */
template <class T>
NPUEMU_NOSAN inline void pair_reduce(const char *api, const AscendC::LocalTensor<T> &dst,
                                     const AscendC::LocalTensor<T> &src, const Level0 &l, int32_t dstRepStride,
                                     int32_t srcBlkStride, int32_t srcRepStride)
{
    check_red_types<T>(api);
    if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) {
        fault("%s: dstRepStride %d, srcBlkStride %d and srcRepStride %d must not be negative", api, dstRepStride,
              srcBlkStride, srcRepStride);
    }
    if (l.repeat == 0) {
        return;
    }
    const uint32_t half_rep = l.per_repeat / 2;
    check_level0_operand(l, "src", src, static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride));
    check_red_dst(api, dst, static_cast<uint64_t>(l.repeat - 1) * dstRepStride * half_rep + half_rep, sizeof(T));
    float v[128];
    bool act[128];
    for (uint32_t r = 0; r < l.repeat; ++r) {
        gather_repeat(l, src.addr_, r, srcBlkStride, srcRepStride, v, act, 0.0f);
        T *out = dst.addr_ + static_cast<uint64_t>(r) * dstRepStride * half_rep;
        for (uint32_t k = 0; k < half_rep; ++k) {
            if (act[2 * k] || act[2 * k + 1]) {
                out[k] = static_cast<T>(red_add<T>::add(v[2 * k], v[2 * k + 1]));
            }
        }
    }
}

template <class T>
inline void check_tmp(const char *api, const AscendC::LocalTensor<T> &tmp, uint64_t need)
{
    tmp.check_ub(api);
    if (ub_offset(tmp.addr_) % UB_ALIGN != 0) {
        fault("%s: sharedTmpBuffer starts at UB offset 0x%llx, which is not 32-byte aligned", api,
              static_cast<unsigned long long>(ub_offset(tmp.addr_)));
    }
    if (tmp.GetSize() < need) {
        fault("%s: sharedTmpBuffer holds %u %s elements; this call needs %llu (see the API reference's formula)", api,
              tmp.GetSize(), type_name<T>::get(), static_cast<unsigned long long>(need));
    }
}

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* ReduceSum over the first `count` elements: a tree per repeat, repeat results added in order. */
template <class T>
NPUEMU_NOSAN inline void reduce_sum_count(const char *api, const AscendC::LocalTensor<T> &dst,
                                          const AscendC::LocalTensor<T> &src, int32_t count)
{
    check_red_types<T>(api);
    check_count(api, count);
    if (count == 0) {
        return;
    }
    check_vec_operand(api, "src", src, count);
    check_red_dst(api, dst, 1, sizeof(T));
    const uint32_t per = 256 / sizeof(T);
    float v[128];
    float acc = 0.0f;
    for (uint64_t base = 0; base < static_cast<uint64_t>(count); base += per) {
        for (uint32_t e = 0; e < per; ++e) {
            v[e] = base + e < static_cast<uint64_t>(count) ? static_cast<float>(src.addr_[base + e]) : 0.0f;
        }
        const float s = tree_sum<T>(v, per);
        acc = base == 0 ? s : red_add<T>::add(acc, s);
    }
    dst.addr_[0] = static_cast<T>(acc);
}

/* ReduceSum, mask/repeat form: a tree per repeat (results to tmp), then trees over the results. */
template <class T>
NPUEMU_NOSAN inline void reduce_sum_level0(const char *api, const AscendC::LocalTensor<T> &dst,
                                           const AscendC::LocalTensor<T> &src, const AscendC::LocalTensor<T> &tmp,
                                           const Level0 &l, int32_t srcRepStride)
{
    check_red_types<T>(api);
    if (srcRepStride < 0) {
        fault("%s: srcRepStride %d must not be negative", api, srcRepStride);
    }
    if (l.repeat == 0) {
        return;
    }
    check_level0_operand(l, "src", src, 1, static_cast<uint32_t>(srcRepStride));
    check_red_dst(api, dst, 1, sizeof(T));
    check_tmp(api, tmp, ceil_div(l.repeat, l.epb) * l.epb);
    float v[128];
    bool act[128];
    std::vector<float> cur(l.repeat);
    for (uint32_t r = 0; r < l.repeat; ++r) {
        gather_repeat(l, src.addr_, r, 1, srcRepStride, v, act, 0.0f);
        cur[r] = static_cast<float>(static_cast<T>(tree_sum<T>(v, l.per_repeat)));
        tmp.addr_[r] = static_cast<T>(cur[r]);
    }
    while (cur.size() > 1) {
        std::vector<float> next(ceil_div(cur.size(), l.per_repeat));
        for (size_t g = 0; g < next.size(); ++g) {
            for (uint32_t e = 0; e < l.per_repeat; ++e) {
                const size_t i = g * l.per_repeat + e;
                v[e] = i < cur.size() ? cur[i] : 0.0f;
            }
            next[g] = static_cast<float>(static_cast<T>(tree_sum<T>(v, l.per_repeat)));
        }
        cur.swap(next);
    }
    dst.addr_[0] = static_cast<T>(cur[0]);
}

/* ReduceMax / ReduceMin over `n` logical elements given by get(i) (value, and whether active). */
template <class T, RedOp op, class Get>
NPUEMU_NOSAN inline void reduce_extreme(const char *api, const AscendC::LocalTensor<T> &dst, uint64_t n, bool calIndex,
                                        Get get)
{
    check_red_dst(api, dst, calIndex ? 2 : 1, calIndex ? 2 * sizeof(T) : sizeof(T));
    bool found = false;
    T best_v = T(0);
    float best = 0.0f;
    uint64_t best_i = 0;
    for (uint64_t i = 0; i < n; ++i) {
        T x;
        if (!get(i, x)) {
            continue;
        }
        const float f = static_cast<float>(x);
        if (!found || (op == RED_MAX ? f > best : f < best)) {
            found = true;
            best = f;
            best_v = x;
            best_i = i;
        }
    }
    if (!found) {
        return;
    }
    if (calIndex && std::is_same<T, half>::value && best_i > 65535) {
        fault("%s: the index %llu of the result does not fit the 16 bits a half index has (at most 65535)", api,
              static_cast<unsigned long long>(best_i));
    }
    dst.addr_[0] = best_v;
    if (calIndex) {
        dst.addr_[1] = bits_as<T>(static_cast<uint32_t>(best_i));
    }
}

/* sharedTmpBuffer elements ReduceMax / ReduceMin need (the API reference's formulas). */
inline uint64_t extreme_tmp_need(uint64_t first_repeats, uint32_t epb, uint32_t per, bool calIndex)
{
    const uint64_t out1 = first_repeats * 2;
    if (!calIndex) {
        return ceil_div(out1, epb) * epb;
    }
    const uint64_t start2 = ceil_div(out1, epb) * epb;
    const uint64_t out2 = ceil_div(out1, per) * 2;
    const uint64_t end2 = ceil_div(out2, epb) * epb;
    uint64_t need = start2 + end2;
    if (out2 > 2) {
        const uint64_t start3 = end2;
        const uint64_t out3 = ceil_div(out2, per) * 2;
        const uint64_t end3 = ceil_div(out3, epb) * epb;
        need = start2 + start3 + end3;
    }
    return need;
}

} // namespace npuemu

namespace AscendC {

#define NPUEMU_RED_L0(NAME, KIND, OP, ...)                                                           \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, __VA_ARGS__)

/* ---- WholeReduceSum / Max / Min ---- */
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask[],
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride)
{
    npuemu::whole_reduce<T, npuemu::RED_SUM>(
        "AscendC::WholeReduceSum", dst, src,
        npuemu::level0<T>("AscendC::WholeReduceSum", mask, 0, static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask),
        dstRepStride, srcBlkStride, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride)
{
    npuemu::whole_reduce<T, npuemu::RED_SUM>(
        "AscendC::WholeReduceSum", dst, src,
        npuemu::level0<T>("AscendC::WholeReduceSum", nullptr, static_cast<uint64_t>(mask < 0 ? 0 : mask),
                          static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask),
        dstRepStride, srcBlkStride, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
}
#define NPUEMU_WHOLE_EXTREME(NAME, OP)                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask[], \
                                const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride, \
                                const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) \
    {                                                                                               \
        npuemu::whole_reduce<T, OP>("AscendC::" #NAME, dst, src,                                    \
                                    npuemu::level0<T>("AscendC::" #NAME, mask, 0,                    \
                                                      static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask), \
                                    dstRepStride, srcBlkStride, srcRepStride, order);               \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t mask, \
                                const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride, \
                                const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) \
    {                                                                                               \
        npuemu::whole_reduce<T, OP>("AscendC::" #NAME, dst, src,                                    \
                                    npuemu::level0<T>("AscendC::" #NAME, nullptr,                    \
                                                      static_cast<uint64_t>(mask < 0 ? 0 : mask),    \
                                                      static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask), \
                                    dstRepStride, srcBlkStride, srcRepStride, order);               \
    }
NPUEMU_WHOLE_EXTREME(WholeReduceMax, npuemu::RED_MAX)
NPUEMU_WHOLE_EXTREME(WholeReduceMin, npuemu::RED_MIN)
#undef NPUEMU_WHOLE_EXTREME

/* RepeatReduceSum: WholeReduceSum with a continuous mask (dstBlkStride has no effect). */
template <typename T, bool isSetMask = true>
__aicore__ inline void RepeatReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t repeatTime,
                                       const int32_t mask, const int32_t dstBlkStride, const int32_t srcBlkStride,
                                       const int32_t dstRepStride, const int32_t srcRepStride)
{
    (void)dstBlkStride;
    WholeReduceSum<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}

/* ---- BlockReduceSum / Max / Min, PairReduceSum (repeat before mask) ---- */
#define NPUEMU_BLOCK_RED(NAME, CALL)                                                                 \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t repeatTime, \
                                const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride, \
                                const int32_t srcRepStride)                                         \
    {                                                                                               \
        CALL("AscendC::" #NAME, dst, src,                                                           \
             npuemu::level0<T>("AscendC::" #NAME, mask, 0, static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), \
                               isSetMask),                                                          \
             dstRepStride, srcBlkStride, srcRepStride);                                             \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t repeatTime, \
                                const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride, \
                                const int32_t srcRepStride)                                         \
    {                                                                                               \
        CALL("AscendC::" #NAME, dst, src,                                                           \
             npuemu::level0<T>("AscendC::" #NAME, nullptr, static_cast<uint64_t>(mask < 0 ? 0 : mask), \
                               static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask),   \
             dstRepStride, srcBlkStride, srcRepStride);                                             \
    }
NPUEMU_BLOCK_RED(BlockReduceSum, (npuemu::block_reduce<T, npuemu::RED_SUM>))
NPUEMU_BLOCK_RED(BlockReduceMax, (npuemu::block_reduce<T, npuemu::RED_MAX>))
NPUEMU_BLOCK_RED(BlockReduceMin, (npuemu::block_reduce<T, npuemu::RED_MIN>))
NPUEMU_BLOCK_RED(PairReduceSum, npuemu::pair_reduce<T>)
#undef NPUEMU_BLOCK_RED

/* ---- ReduceSum ---- */
template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,
                                 const int32_t count)
{
    (void)sharedTmpBuffer; /* not used by the first-n form on A2/A3 ("方式一") */
    npuemu::reduce_sum_count("AscendC::ReduceSum", dst, src, npuemu::count_of<isSetMask>("AscendC::ReduceSum", count));
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,
                                 const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride)
{
    npuemu::reduce_sum_level0(
        "AscendC::ReduceSum", dst, src, sharedTmpBuffer,
        npuemu::level0<T>("AscendC::ReduceSum", mask, 0, static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask),
        srcRepStride);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,
                                 const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride)
{
    npuemu::reduce_sum_level0("AscendC::ReduceSum", dst, src, sharedTmpBuffer,
                              npuemu::level0<T>("AscendC::ReduceSum", nullptr, static_cast<uint64_t>(mask < 0 ? 0 : mask),
                                                static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask),
                              srcRepStride);
}

/* ---- ReduceMax / ReduceMin: dst[0] = the value, dst[1] = its index (as T's bits) if calIndex ---- */
#define NPUEMU_REDUCE_EXTREME(NAME, OP)                                                              \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src,               \
                                const LocalTensor<T> &sharedTmpBuffer, const int32_t count, bool calIndex = 0) \
    {                                                                                               \
        const char *api = "AscendC::" #NAME;                                                        \
        npuemu::check_red_types<T>(api);                                                            \
        const int32_t n = npuemu::count_of<isSetMask>(api, count);                                  \
        npuemu::check_count(api, n);                                                                \
        if (n == 0) {                                                                               \
            return;                                                                                 \
        }                                                                                           \
        npuemu::check_vec_operand(api, "src", src, n);                                              \
        const uint32_t per = 256 / sizeof(T), epb = 32 / sizeof(T);                                 \
        npuemu::check_tmp(api, sharedTmpBuffer,                                                     \
                          npuemu::extreme_tmp_need(npuemu::ceil_div(static_cast<uint64_t>(n), per), epb, per, calIndex)); \
        npuemu::reduce_extreme<T, OP>(api, dst, static_cast<uint64_t>(n), calIndex, [&](uint64_t i, T &x) { \
            x = src.addr_[i];                                                                       \
            return true;                                                                            \
        });                                                                                         \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME##_l0(const LocalTensor<T> &dst, const LocalTensor<T> &src,          \
                                     const LocalTensor<T> &sharedTmpBuffer, const npuemu::Level0 &l, \
                                     const int32_t srcRepStride, bool calIndex)                     \
    {                                                                                               \
        const char *api = "AscendC::" #NAME;                                                        \
        npuemu::check_red_types<T>(api);                                                            \
        if (srcRepStride < 0) {                                                                     \
            npuemu::fault("%s: srcRepStride %d must not be negative", api, srcRepStride);           \
        }                                                                                           \
        if (l.repeat == 0) {                                                                        \
            return;                                                                                 \
        }                                                                                           \
        npuemu::check_level0_operand(l, "src", src, 1, static_cast<uint32_t>(srcRepStride));       \
        npuemu::check_tmp(api, sharedTmpBuffer, npuemu::extreme_tmp_need(l.repeat, l.epb, l.per_repeat, calIndex)); \
        const uint64_t total = static_cast<uint64_t>(l.repeat) * l.per_repeat;                      \
        npuemu::reduce_extreme<T, OP>(api, dst, total, calIndex, [&](uint64_t i, T &x) {            \
            const uint32_t r = static_cast<uint32_t>(i / l.per_repeat), e = static_cast<uint32_t>(i % l.per_repeat); \
            if (!l.active(r, e)) {                                                                  \
                return false;                                                                       \
            }                                                                                       \
            x = src.addr_[l.offset(r, e, 1, static_cast<uint32_t>(srcRepStride))];                  \
            return true;                                                                            \
        });                                                                                         \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src,               \
                                const LocalTensor<T> &sharedTmpBuffer, const uint64_t mask[],       \
                                const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0) \
    {                                                                                               \
        NAME##_l0<T, isSetMask>(dst, src, sharedTmpBuffer,                                          \
                                npuemu::level0<T>("AscendC::" #NAME, mask, 0,                        \
                                                  static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask), \
                                srcRepStride, calIndex);                                            \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src,               \
                                const LocalTensor<T> &sharedTmpBuffer, const int32_t mask,          \
                                const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0) \
    {                                                                                               \
        NAME##_l0<T, isSetMask>(dst, src, sharedTmpBuffer,                                          \
                                npuemu::level0<T>("AscendC::" #NAME, nullptr,                        \
                                                  static_cast<uint64_t>(mask < 0 ? 0 : mask),        \
                                                  static_cast<uint32_t>(repeatTime < 0 ? 0 : repeatTime), isSetMask), \
                                srcRepStride, calIndex);                                            \
    }
NPUEMU_REDUCE_EXTREME(ReduceMax, npuemu::RED_MAX)
NPUEMU_REDUCE_EXTREME(ReduceMin, npuemu::RED_MIN)
#undef NPUEMU_REDUCE_EXTREME
#undef NPUEMU_RED_L0

/* ---- the newer names (ReduceType template argument; T = U) ---- */
template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
__aicore__ inline void ReduceRepeat(const LocalTensor<T> &dst, const LocalTensor<U> &src, const int32_t mask,
                                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                    const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    static_assert(std::is_same<T, U>::value, "npu-emu: ReduceRepeat: dst and src must have one element type");
    if (reduceType == ReduceType::SUM) {
        WholeReduceSum<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride);
    } else if (reduceType == ReduceType::MAX) {
        WholeReduceMax<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
    } else {
        WholeReduceMin<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
    }
}
template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
__aicore__ inline void ReduceRepeat(const LocalTensor<T> &dst, const LocalTensor<U> &src, const uint64_t mask[],
                                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                    const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    static_assert(std::is_same<T, U>::value, "npu-emu: ReduceRepeat: dst and src must have one element type");
    if (reduceType == ReduceType::SUM) {
        WholeReduceSum<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride);
    } else if (reduceType == ReduceType::MAX) {
        WholeReduceMax<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
    } else {
        WholeReduceMin<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
    }
}
template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true, class M>
__aicore__ inline void ReduceDataBlock(const LocalTensor<T> &dst, const LocalTensor<U> &src, M mask,
                                       const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                       const int32_t srcRepStride)
{
    static_assert(std::is_same<T, U>::value, "npu-emu: ReduceDataBlock: dst and src must have one element type");
    if (reduceType == ReduceType::SUM) {
        BlockReduceSum<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);
    } else if (reduceType == ReduceType::MAX) {
        BlockReduceMax<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);
    } else {
        BlockReduceMin<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);
    }
}
template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true, class M>
__aicore__ inline void ReducePairElem(const LocalTensor<T> &dst, const LocalTensor<U> &src, M mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride)
{
    static_assert(std::is_same<T, U>::value && reduceType == ReduceType::SUM,
                  "npu-emu: ReducePairElem supports ReduceType::SUM with one element type");
    PairReduceSum<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride);
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_REDUCE_H */
