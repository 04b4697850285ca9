/* npu-emu Ascend C CPU headers: sorting of the vector unit in the Atlas A2 / A3 layout
 * (排布方式一): Sort, Sort32, MrgSort, Extract, Concat, GetSortLen, GetSortOffset, GetMrgSortResult.
 *
 * A sorted element is an 8-byte (score, index) structure: the score in the low bytes (a float in
 * bytes 0-3, or a half in bytes 0-1 with bytes 2-3 reserved, written 0) and the uint32_t index in
 * bytes 4-7. Sorting is by score, descending; equal scores keep their input order (the reference
 * does not document the order of ties). The tmp buffer of Sort is checked to be a UB tensor but not
 * used. The Region Proposal layout of the Atlas inference products (排布方式二) is not emulated. */
#ifndef NPUEMU_KERNEL_OPERATOR_SORT_H
#define NPUEMU_KERNEL_OPERATOR_SORT_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "interface/kernel_operator_vec.h"
#include "interface/kernel_tensor.h"
#include "npuemu/context.h"

namespace AscendC {

template <typename T> struct MrgSortSrcList {
    __aicore__ MrgSortSrcList() {}
    __aicore__ MrgSortSrcList(const LocalTensor<T> &src1In, const LocalTensor<T> &src2In, const LocalTensor<T> &src3In,
                              const LocalTensor<T> &src4In)
        : src1(src1In), src2(src2In), src3(src3In), src4(src4In)
    {
    }
    LocalTensor<T> src1;
    LocalTensor<T> src2;
    LocalTensor<T> src3;
    LocalTensor<T> src4;
};

struct MrgSort4Info {
    __aicore__ MrgSort4Info() {}
    __aicore__ MrgSort4Info(const uint16_t elementLengthsIn[4], const bool ifExhaustedSuspensionIn,
                            const uint16_t validBitIn, const uint16_t repeatTimesIn)
        : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn), repeatTimes(repeatTimesIn)
    {
        for (int i = 0; i < 4; ++i) {
            elementLengths[i] = elementLengthsIn[i];
        }
    }
    uint16_t elementLengths[4] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint16_t repeatTimes = 1;
};

/* Elements of T that `elemCount` sorted (score, index) structures take, and the offset in elements
 * of T of structure `elemOffset`. */
template <typename T> __aicore__ inline uint32_t GetSortLen(const uint32_t elemCount)
{
    return elemCount * 8 / static_cast<uint32_t>(sizeof(T));
}
template <typename T> __aicore__ inline uint32_t GetSortOffset(const uint32_t elemOffset)
{
    return elemOffset * 8 / static_cast<uint32_t>(sizeof(T));
}

} // namespace AscendC

namespace npuemu {

struct SortItem {
    float score;
    uint32_t index;
    uint8_t raw[4]; /* the score's bytes as stored */
};

/* Per block: the structures MrgSort took from each list in its last call. */
inline uint16_t *mrg_sort_result()
{
    static thread_local uint16_t r[4] = {0, 0, 0, 0};
    return r;
}

template <class T> inline SortItem sort_read(const uint8_t *p)
{
    SortItem it;
    T s;
    std::memcpy(&s, p, sizeof(T));
    it.score = static_cast<float>(s);
    std::memcpy(it.raw, p, 4);
    std::memcpy(&it.index, p + 4, 4);
    return it;
}
template <class T> inline void sort_write(uint8_t *p, const SortItem &it)
{
    std::memcpy(p, it.raw, 4);
    std::memcpy(p + 4, &it.index, 4);
}
template <class T> inline SortItem sort_make(T score, uint32_t index)
{
    SortItem it;
    it.score = static_cast<float>(score);
    it.index = index;
    std::memset(it.raw, 0, 4);
    std::memcpy(it.raw, &score, sizeof(T));
    return it;
}

inline void sort_desc(std::vector<SortItem> &v)
{
    std::stable_sort(v.begin(), v.end(), [](const SortItem &a, const SortItem &b) { return a.score > b.score; });
}

template <class T>
inline void check_sort_operand(const char *api, const char *which, const AscendC::LocalTensor<T> &t, uint64_t bytes)
{
    t.check_ub(api);
    if (ub_offset(t.addr_) % UB_ALIGN != 0) {
        fault("%s: the %s operand starts at UB offset 0x%llx, which is not 32-byte aligned", api, which,
              static_cast<unsigned long long>(ub_offset(t.addr_)));
    }
    const uint64_t size = static_cast<uint64_t>(t.GetSize()) * sizeof(T);
    if (bytes > (size + UB_ALIGN - 1) / UB_ALIGN * UB_ALIGN) {
        fault("%s: the %s operand needs %llu bytes, it holds %u %s elements (%llu bytes)", api, which,
              static_cast<unsigned long long>(bytes), t.GetSize(), type_name<T>::get(),
              static_cast<unsigned long long>(size));
    }
}

/* Sort / Sort32: groups of `group` scores sorted each (group = 32 * repeat: all of them). */
template <class T>
inline void sort_groups(const char *api, const AscendC::LocalTensor<T> &dst, const AscendC::LocalTensor<T> &concat,
                        const AscendC::LocalTensor<uint32_t> &index, int32_t repeat, bool full)
{
    if (repeat < 0 || repeat > 255) {
        fault("%s: repeatTime %d is outside [0, 255]", api, repeat);
    }
    const uint32_t n = 32u * static_cast<uint32_t>(repeat);
    check_sort_operand(api, "dst", dst, n * 8ull);
    check_sort_operand(api, "src (scores)", concat, n * sizeof(T));
    check_sort_operand(api, "index", index, n * 4ull);
    const uint32_t group = full ? n : 32u;
    std::vector<SortItem> v;
    uint8_t *out = reinterpret_cast<uint8_t *>(dst.addr_);
    for (uint32_t g0 = 0; g0 < n; g0 += group) {
        v.clear();
        for (uint32_t i = g0; i < g0 + group; ++i) {
            v.push_back(sort_make<T>(concat.addr_[i], index.addr_[i]));
        }
        sort_desc(v);
        for (uint32_t i = 0; i < group; ++i) {
            sort_write<T>(out + (g0 + i) * 8ull, v[i]);
        }
    }
}

} // namespace npuemu

namespace AscendC {

template <typename T, bool isFullSort>
__aicore__ inline void Sort(const LocalTensor<T> &dst, const LocalTensor<T> &concat, const LocalTensor<uint32_t> &index,
                            LocalTensor<T> &tmp, const int32_t repeatTime)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Sort supports half and float scores only");
    tmp.check_ub("AscendC::Sort (tmp)");
    npuemu::sort_groups("AscendC::Sort", dst, concat, index, repeatTime, isFullSort);
}

template <typename T>
__aicore__ inline void Sort32(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<uint32_t> &src1,
                              const int32_t repeatTime)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Sort32 supports half and float scores only");
    npuemu::sort_groups("AscendC::Sort32", dst, src0, src1, repeatTime, false);
}

/* Concat (Atlas A2 / A3): Sort's concat operand is the scores themselves, so Concat puts the
 * 16 * repeatTime elements of src in order into concat (tmp is checked, not used). */
template <typename T>
__aicore__ inline void Concat(LocalTensor<T> &concat, const LocalTensor<T> &src, const LocalTensor<T> &tmp,
                              const int32_t repeatTime)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Concat supports half and float only");
    const char *api = "AscendC::Concat";
    if (repeatTime < 0 || repeatTime > 255) {
        npuemu::fault("%s: repeatTime %d is outside [0, 255]", api, repeatTime);
    }
    tmp.check_ub(api);
    const int32_t n = repeatTime * 16;
    npuemu::check_vec_operand(api, "concat", concat, n);
    npuemu::check_vec_operand(api, "src", src, n);
    std::memmove(concat.addr_, src.addr_, static_cast<size_t>(n) * sizeof(T));
}

/* MrgSort: merge the 2..4 sorted lists that validBit selects (0b11, 0b111, 0b1111) into dst,
 * descending; ifExhaustedSuspension stops when a list runs out. With repeatTimes > 1 every repeat
 * moves the lists and dst on by the total length of the four lists. */
template <typename T>
__aicore__ inline void MrgSort(const LocalTensor<T> &dst, const MrgSortSrcList<T> &src, const MrgSort4Info &params)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::MrgSort supports half and float scores only");
    const char *api = "AscendC::MrgSort";
    int lists;
    switch (params.validBit) {
    case 3: lists = 2; break;
    case 7: lists = 3; break;
    case 15: lists = 4; break;
    default:
        npuemu::fault("%s: validBit %u is not 3 (2 lists), 7 (3 lists) or 15 (4 lists)", api, params.validBit);
    }
    const LocalTensor<T> *in[4] = {&src.src1, &src.src2, &src.src3, &src.src4};
    uint64_t total = 0;
    for (int k = 0; k < lists; ++k) {
        total += params.elementLengths[k];
    }
    const uint32_t reps = params.repeatTimes == 0 ? 1 : params.repeatTimes;
    npuemu::check_sort_operand(api, "dst", dst, total * 8 * reps);
    uint16_t *taken = npuemu::mrg_sort_result();
    for (uint32_t r = 0; r < reps; ++r) {
        std::vector<npuemu::SortItem> v[4];
        for (int k = 0; k < lists; ++k) {
            static const char *names[4] = {"src1", "src2", "src3", "src4"};
            npuemu::check_sort_operand(api, names[k], *in[k], (r * total + params.elementLengths[k]) * 8);
            const uint8_t *p = reinterpret_cast<const uint8_t *>(in[k]->addr_) + r * total * 8;
            for (uint32_t i = 0; i < params.elementLengths[k]; ++i) {
                v[k].push_back(npuemu::sort_read<T>(p + i * 8ull));
            }
        }
        /* the lists' data is read before dst is written: dst may be one of them */
        uint8_t *out = reinterpret_cast<uint8_t *>(dst.addr_) + r * total * 8;
        size_t pos[4] = {0, 0, 0, 0};
        uint64_t n = 0;
        for (;;) {
            int best = -1;
            bool exhausted = false;
            for (int k = 0; k < lists; ++k) {
                if (pos[k] >= v[k].size()) {
                    exhausted = true;
                    continue;
                }
                if (best < 0 || v[k][pos[k]].score > v[best][pos[best]].score) {
                    best = k;
                }
            }
            if (best < 0 || (exhausted && params.ifExhaustedSuspension)) {
                break;
            }
            npuemu::sort_write<T>(out + n * 8, v[best][pos[best]]);
            ++pos[best];
            ++n;
        }
        for (int k = 0; k < 4; ++k) {
            taken[k] = static_cast<uint16_t>(k < lists ? pos[k] : 0);
        }
    }
}

/* The structures MrgSort took from each list in the block's last call (with
 * ifExhaustedSuspension, where it stopped). */
__aicore__ inline void GetMrgSortResult(uint16_t &mrgSortList1, uint16_t &mrgSortList2, uint16_t &mrgSortList3,
                                        uint16_t &mrgSortList4)
{
    const uint16_t *t = npuemu::mrg_sort_result();
    mrgSortList1 = t[0];
    mrgSortList2 = t[1];
    mrgSortList3 = t[2];
    mrgSortList4 = t[3];
}

/* Extract: the scores and indexes of 32 * repeatTime sorted structures. */
template <typename T>
__aicore__ inline void Extract(const LocalTensor<T> &dstValue, const LocalTensor<uint32_t> &dstIndex,
                               const LocalTensor<T> &sorted, const int32_t repeatTime)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::Extract supports half and float scores only");
    const char *api = "AscendC::Extract";
    if (repeatTime < 0 || repeatTime > 255) {
        npuemu::fault("%s: repeatTime %d is outside [0, 255]", api, repeatTime);
    }
    const uint32_t n = 32u * static_cast<uint32_t>(repeatTime);
    npuemu::check_sort_operand(api, "dstValue", dstValue, n * sizeof(T));
    npuemu::check_sort_operand(api, "dstIndex", dstIndex, n * 4ull);
    npuemu::check_sort_operand(api, "sorted", sorted, n * 8ull);
    const uint8_t *p = reinterpret_cast<const uint8_t *>(sorted.addr_);
    std::vector<npuemu::SortItem> v;
    for (uint32_t i = 0; i < n; ++i) {
        v.push_back(npuemu::sort_read<T>(p + i * 8ull));
    }
    for (uint32_t i = 0; i < n; ++i) {
        std::memcpy(&dstValue.addr_[i], v[i].raw, sizeof(T));
        dstIndex.addr_[i] = v[i].index;
    }
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_SORT_H */
