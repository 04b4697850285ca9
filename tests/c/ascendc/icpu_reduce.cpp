/* The reductions and mask registers of the kernel API against host references written from the
 * Ascend C reference (归约计算, 掩码操作), independent of the kernel headers:
 * - a level-0 instruction works on `repeatTime` repeats of 256 bytes; element e of repeat r is
 *   at r * srcRepStride * epb + (e / epb) * srcBlkStride * epb + e % epb (epb = elements per
 *   32-byte block); the mask selects the active elements of a repeat (a count: the first n;
 *   bits: mask[0] bit i for element i, mask[1] bit i for element 64 + i);
 * - sums are binary trees of neighbours over the repeat's (or block's) slots, inactive slots 0,
 *   each addition rounded to the element type (GCC's _Float16 for half);
 * - WholeReduceSum writes one value per repeat at dst + r * dstRepStride; WholeReduceMax/Min
 *   [value, index] / [index, value] (unit 2 elements), value only (unit 1) or index only (unit
 *   4 bytes), the index as the bits of the element type, the lowest index among equal values;
 * - BlockReduce*: 8 results per repeat (unit 8 elements), a block without active elements keeps
 *   dst; PairReduceSum: per-repeat/2 results (unit 128 bytes), an inactive pair keeps dst;
 * - ReduceSum first-n form: repeat trees added in order; mask/repeat form: trees of the repeat
 *   results until one is left; ReduceMax/Min: the extreme value and its index over everything;
 * - SetVectorMask (normal: bits; counter: the first n elements) with isSetMask = false.
 * One "PASS <case> <type>" line per case; exits with the number of failures. */
#include "tikicpulib.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "host_f16.h"

constexpr uint32_t SRC_N = 9216, DST_N = 512, TMP_N = 1024;

enum Case {
    WHOLE_SUM_COUNT,
    WHOLE_SUM_BITS,
    WHOLE_MAX_VI,
    WHOLE_MIN_IV,
    WHOLE_MAX_VALUE,
    WHOLE_MIN_INDEX,
    BLOCK_SUM,
    BLOCK_MAX,
    BLOCK_MIN,
    PAIR_SUM,
    REPEAT_SUM,
    REDUCE_SUM_COUNT,
    REDUCE_SUM_MASK,
    REDUCE_MAX_COUNT,
    REDUCE_MIN_COUNT,
    REDUCE_MAX_MASK,
    REDUCE_MIN_MASK,
    REDUCE_REPEAT_SUM,
    MASK_NORMAL_ADD,
    MASK_COUNTER_ADD,
    MASK_REGISTER_WHOLE_SUM,
    CASE_COUNT
};
static const char *case_names[CASE_COUNT] = {
    "WholeReduceSum(count mask)", "WholeReduceSum(bit mask)", "WholeReduceMax(VALUE_INDEX)",
    "WholeReduceMin(INDEX_VALUE)", "WholeReduceMax(ONLY_VALUE)", "WholeReduceMin(ONLY_INDEX)",
    "BlockReduceSum", "BlockReduceMax", "BlockReduceMin", "PairReduceSum", "RepeatReduceSum",
    "ReduceSum(count)", "ReduceSum(mask, repeat)", "ReduceMax(count, index)", "ReduceMin(count, index)",
    "ReduceMax(mask, repeat, index)", "ReduceMin(mask, repeat)", "ReduceRepeat<SUM>",
    "SetVectorMask(normal)+Add", "SetVectorMask(counter)+Add", "SetVectorMask+WholeReduceSum"};

/* The mask bits the bit-mask cases use (mask[1] is not used by 32-bit types). */
constexpr uint64_t BITS0 = 0x5555AAAA0F0FF0F0ull, BITS1 = 0x00FF00FF12345678ull;

template <class T>
__aicore__ inline void reduce_probe(GM_ADDR src, GM_ADDR dst, uint32_t which)
{
    using namespace AscendC;
    TPipe pipe;
    TBuf<TPosition::VECCALC> bs, bd, bt;
    pipe.InitBuffer(bs, SRC_N * sizeof(T));
    pipe.InitBuffer(bd, DST_N * sizeof(T));
    pipe.InitBuffer(bt, TMP_N * sizeof(T));
    GlobalTensor<T> sg, dg;
    sg.SetGlobalBuffer((__gm__ T *)src, SRC_N);
    dg.SetGlobalBuffer((__gm__ T *)dst, DST_N);
    LocalTensor<T> s = bs.Get<T>(), d = bd.Get<T>(), t = bt.Get<T>();
    DataCopy(s, sg, SRC_N);
    DataCopy(d, dg, DST_N); /* the host's sentinel: what an instruction does not write stays */
    PipeBarrier<PIPE_ALL>();
    constexpr int32_t PER = 256 / sizeof(T);
    uint64_t bits[2] = {BITS0, sizeof(T) == 2 ? BITS1 : 0};
    switch (which) {
    case WHOLE_SUM_COUNT: WholeReduceSum<T>(d, s, PER - 28, 3, 2, 1, 8); break;
    case WHOLE_SUM_BITS: WholeReduceSum<T>(d, s, bits, 2, 1, 2, 16); break;
    case WHOLE_MAX_VI: WholeReduceMax<T>(d, s, PER, 4, 1, 1, 8); break;
    case WHOLE_MIN_IV: WholeReduceMin<T>(d, s, PER / 2 + 3, 2, 1, 1, 8, ReduceOrder::ORDER_INDEX_VALUE); break;
    case WHOLE_MAX_VALUE: WholeReduceMax<T>(d, s, PER, 3, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE); break;
    case WHOLE_MIN_INDEX: WholeReduceMin<T>(d, s, PER, 3, 1, 1, 8, ReduceOrder::ORDER_ONLY_INDEX); break;
    case BLOCK_SUM: BlockReduceSum<T>(d, s, 2, 40, 1, 1, 8); break;
    case BLOCK_MAX: BlockReduceMax<T>(d, s, 3, PER, 1, 1, 8); break;
    case BLOCK_MIN: BlockReduceMin<T>(d, s, 3, PER, 2, 1, 8); break;
    case PAIR_SUM: PairReduceSum<T>(d, s, 2, PER, 1, 1, 8); break;
    case REPEAT_SUM: RepeatReduceSum<T>(d, s, 4, PER, 0, 1, 1, 8); break;
    case REDUCE_SUM_COUNT: ReduceSum<T>(d, s, t, 1000); break;
    case REDUCE_SUM_MASK: ReduceSum<T>(d, s, t, PER, 65, 8); break;
    case REDUCE_MAX_COUNT: ReduceMax<T>(d, s, t, 1000, true); break;
    case REDUCE_MIN_COUNT: ReduceMin<T>(d, s, t, 999, true); break;
    case REDUCE_MAX_MASK: ReduceMax<T>(d, s, t, PER, 40, 8, true); break;
    case REDUCE_MIN_MASK: ReduceMin<T>(d, s, t, PER, 40, 8, false); break;
    case REDUCE_REPEAT_SUM: ReduceRepeat<ReduceType::SUM, T>(d, s, PER, 2, 1, 1, 8); break;
    case MASK_NORMAL_ADD:
        SetVectorMask<T, MaskMode::NORMAL>(bits[1], bits[0]);
        Add<T, false>(d, s, s, MASK_PLACEHOLDER, 2, {1, 1, 1, 8, 8, 8});
        ResetMask();
        break;
    case MASK_COUNTER_ADD:
        SetMaskCount();
        SetVectorMask<T, MaskMode::COUNTER>(0, 200);
        Add<T, false>(d, s, s, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
        SetMaskNorm();
        ResetMask();
        break;
    case MASK_REGISTER_WHOLE_SUM:
        SetVectorMask<T, MaskMode::NORMAL>(bits[1], bits[0]);
        WholeReduceSum<T, false>(d, s, MASK_PLACEHOLDER, 2, 1, 1, 8);
        ResetMask();
        break;
    default: break;
    }
    PipeBarrier<PIPE_ALL>();
    DataCopy(dg, d, DST_N);
}

extern "C" __global__ __aicore__ void reduce_half(GM_ADDR src, GM_ADDR dst, uint32_t which)
{
    reduce_probe<half>(src, dst, which);
}
extern "C" __global__ __aicore__ void reduce_float(GM_ADDR src, GM_ADDR dst, uint32_t which)
{
    reduce_probe<float>(src, dst, which);
}

/* ---- host reference ---- */

template <class H> struct Elem;
template <> struct Elem<_Float16> {
    static const char *name() { return "half"; }
    static float add(float a, float b) { return (float)(_Float16)(a + b); }
    static float round(float a) { return (float)(_Float16)a; }
};
template <> struct Elem<float> {
    static const char *name() { return "float"; }
    static float add(float a, float b) { return a + b; }
    static float round(float a) { return a; }
};

template <class H>
struct Ref {
    static constexpr uint32_t PER = 256 / sizeof(H), EPB = 32 / sizeof(H);
    const std::vector<H> &src;
    std::vector<H> dst; /* starts as the sentinel */

    static bool active_count(uint32_t e, uint32_t n) { return e < n; }
    static bool active_bits(uint32_t e)
    {
        uint64_t b1 = sizeof(H) == 2 ? BITS1 : 0;
        return e < 64 ? (BITS0 >> e & 1) : (b1 >> (e - 64) & 1);
    }
    float at(uint32_t r, uint32_t e, uint32_t blk, uint32_t rep) const
    {
        return (float)src[r * rep * EPB + (e / EPB) * blk * EPB + e % EPB];
    }
    static float tree(std::vector<float> v)
    {
        for (size_t w = v.size(); w > 1; w /= 2) {
            for (size_t i = 0; i < w / 2; i++) {
                v[i] = Elem<H>::add(v[2 * i], v[2 * i + 1]);
            }
        }
        return v[0];
    }
    template <class A> float repeat_sum(uint32_t r, uint32_t blk, uint32_t rep, A active) const
    {
        std::vector<float> v(PER);
        for (uint32_t e = 0; e < PER; e++) {
            v[e] = active(e) ? at(r, e, blk, rep) : 0.0f;
        }
        return tree(v);
    }
    template <class A> int32_t repeat_ext(uint32_t r, bool max, A active) const
    {
        int32_t best = -1;
        for (uint32_t e = 0; e < PER; e++) {
            if (!active(e)) {
                continue;
            }
            float x = at(r, e, 1, 8);
            if (best < 0 || (max ? x > at(r, best, 1, 8) : x < at(r, best, 1, 8))) {
                best = (int32_t)e;
            }
        }
        return best;
    }
    void put(uint32_t i, float v) { dst[i] = (H)v; }
    void put_index(uint32_t i, uint32_t idx)
    {
        if (sizeof(H) == 2) {
            uint16_t b = (uint16_t)idx;
            std::memcpy(&dst[i], &b, 2);
        } else {
            std::memcpy(&dst[i], &idx, 4);
        }
    }
    void put_index32(uint32_t i, uint32_t idx) { std::memcpy(&dst[i], &idx, 4); }

    void run(int which)
    {
        auto all = [](uint32_t) { return true; };
        switch (which) {
        case WHOLE_SUM_COUNT:
            for (uint32_t r = 0; r < 3; r++) {
                put(r * 2, repeat_sum(r, 1, 8, [](uint32_t e) { return active_count(e, PER - 28); }));
            }
            break;
        case WHOLE_SUM_BITS:
            for (uint32_t r = 0; r < 2; r++) {
                put(r, repeat_sum(r, 2, 16, active_bits));
            }
            break;
        case WHOLE_MAX_VI:
            for (uint32_t r = 0; r < 4; r++) {
                int32_t b = repeat_ext(r, true, all);
                put(2 * r, at(r, b, 1, 8));
                put_index(2 * r + 1, b);
            }
            break;
        case WHOLE_MIN_IV:
            for (uint32_t r = 0; r < 2; r++) {
                int32_t b = repeat_ext(r, false, [](uint32_t e) { return e < PER / 2 + 3; });
                put_index(2 * r, b);
                put(2 * r + 1, at(r, b, 1, 8));
            }
            break;
        case WHOLE_MAX_VALUE:
            for (uint32_t r = 0; r < 3; r++) {
                put(r, at(r, repeat_ext(r, true, all), 1, 8));
            }
            break;
        case WHOLE_MIN_INDEX:
            for (uint32_t r = 0; r < 3; r++) { /* unit 4 bytes: 2 halves or 1 float */
                put_index32(r * (4 / sizeof(H)), repeat_ext(r, false, all));
            }
            break;
        case BLOCK_SUM:
        case BLOCK_MAX:
        case BLOCK_MIN: {
            uint32_t reps = which == BLOCK_SUM ? 2 : 3, stride = which == BLOCK_MIN ? 2 : 1;
            uint32_t n = which == BLOCK_SUM ? 40 : PER;
            for (uint32_t r = 0; r < reps; r++) {
                for (uint32_t j = 0; j < 8; j++) {
                    std::vector<float> v;
                    for (uint32_t k = 0; k < EPB; k++) {
                        uint32_t e = j * EPB + k;
                        if (e < n) {
                            v.push_back(at(r, e, 1, 8));
                        }
                    }
                    if (v.empty()) {
                        continue; /* a block without active elements is not written */
                    }
                    float x = v[0];
                    if (which == BLOCK_SUM) {
                        v.resize(EPB, 0.0f);
                        x = tree(v);
                    } else {
                        for (float y : v) {
                            x = which == BLOCK_MAX ? (y > x ? y : x) : (y < x ? y : x);
                        }
                    }
                    put(r * stride * 8 + j, x);
                }
            }
            break;
        }
        case PAIR_SUM:
            for (uint32_t r = 0; r < 2; r++) {
                for (uint32_t k = 0; k < PER / 2; k++) {
                    put(r * PER / 2 + k, Elem<H>::add(at(r, 2 * k, 1, 8), at(r, 2 * k + 1, 1, 8)));
                }
            }
            break;
        case REPEAT_SUM:
        case REDUCE_REPEAT_SUM: {
            uint32_t reps = which == REPEAT_SUM ? 4 : 2;
            for (uint32_t r = 0; r < reps; r++) {
                put(r, repeat_sum(r, 1, 8, all));
            }
            break;
        }
        case REDUCE_SUM_COUNT: {
            const uint32_t n = 1000;
            float acc = 0;
            for (uint32_t r = 0; r * PER < n; r++) {
                float x = repeat_sum(r, 1, 8, [&](uint32_t e) { return r * PER + e < n; });
                acc = r == 0 ? x : Elem<H>::add(acc, x);
            }
            put(0, acc);
            break;
        }
        case REDUCE_SUM_MASK: {
            std::vector<float> v;
            for (uint32_t r = 0; r < 65; r++) {
                v.push_back(repeat_sum(r, 1, 8, all));
            }
            while (v.size() > 1) {
                std::vector<float> next;
                for (size_t i = 0; i < v.size(); i += PER) {
                    std::vector<float> w(PER, 0.0f);
                    for (size_t k = 0; k < PER && i + k < v.size(); k++) {
                        w[k] = v[i + k];
                    }
                    next.push_back(tree(w));
                }
                v = next;
            }
            put(0, v[0]);
            break;
        }
        case REDUCE_MAX_COUNT:
        case REDUCE_MIN_COUNT:
        case REDUCE_MAX_MASK:
        case REDUCE_MIN_MASK: {
            bool max = which == REDUCE_MAX_COUNT || which == REDUCE_MAX_MASK;
            bool counted = which == REDUCE_MAX_COUNT || which == REDUCE_MIN_COUNT;
            uint32_t n = which == REDUCE_MAX_COUNT ? 1000 : which == REDUCE_MIN_COUNT ? 999 : 40 * PER;
            int64_t best = -1;
            for (uint32_t i = 0; i < n; i++) {
                float x = (float)src[i];
                if (best < 0 || (max ? x > (float)src[best] : x < (float)src[best])) {
                    best = i;
                }
            }
            put(0, (float)src[best]);
            if (which != REDUCE_MIN_MASK) {
                put_index(1, (uint32_t)best);
            }
            (void)counted;
            break;
        }
        case MASK_NORMAL_ADD:
            for (uint32_t r = 0; r < 2; r++) {
                for (uint32_t e = 0; e < PER; e++) {
                    if (active_bits(e)) {
                        put(r * PER + e, Elem<H>::add((float)src[r * PER + e], (float)src[r * PER + e]));
                    }
                }
            }
            break;
        case MASK_COUNTER_ADD:
            for (uint32_t i = 0; i < 200; i++) {
                put(i, Elem<H>::add((float)src[i], (float)src[i]));
            }
            break;
        case MASK_REGISTER_WHOLE_SUM:
            for (uint32_t r = 0; r < 2; r++) {
                put(r, repeat_sum(r, 1, 8, active_bits));
            }
            break;
        default: break;
        }
    }
};

static int failures = 0;

template <class H, class K>
static void run_case(K kernel, int which, const std::vector<H> &input)
{
    H *src = (H *)AscendC::GmAlloc(SRC_N * sizeof(H));
    H *dst = (H *)AscendC::GmAlloc(DST_N * sizeof(H));
    std::memcpy(src, input.data(), SRC_N * sizeof(H));
    Ref<H> ref{input, std::vector<H>(DST_N)};
    for (uint32_t i = 0; i < DST_N; i++) {
        ref.dst[i] = (H)(-1000.0f - (float)(i % 97)); /* sentinel */
    }
    std::memcpy(dst, ref.dst.data(), DST_N * sizeof(H));
    ICPU_RUN_KF(kernel, 1, (GM_ADDR)src, (GM_ADDR)dst, (uint32_t)which);
    ref.run(which);
    int bad = 0;
    for (uint32_t i = 0; i < DST_N; i++) {
        if (std::memcmp(&dst[i], &ref.dst[i], sizeof(H)) != 0) {
            if (bad < 4) {
                uint32_t gb = 0, wb = 0;
                std::memcpy(&gb, &dst[i], sizeof(H));
                std::memcpy(&wb, &ref.dst[i], sizeof(H));
                std::printf("  %s %s: dst[%u] = %g (bits 0x%x), expected %g (bits 0x%x)\n", case_names[which],
                            Elem<H>::name(), i, (double)(float)dst[i], gb, (double)(float)ref.dst[i], wb);
            }
            bad++;
        }
    }
    std::printf("%s %s %s\n", bad == 0 ? "PASS" : "FAIL", case_names[which], Elem<H>::name());
    failures += bad != 0;
    AscendC::GmFree(src);
    AscendC::GmFree(dst);
}

int main()
{
    /* Inputs with distinct values, sums that round in half, and repeated extremes (the lowest
     * index must win). */
    std::vector<_Float16> h(SRC_N);
    std::vector<float> f(SRC_N);
    uint32_t s = 12345;
    for (uint32_t i = 0; i < SRC_N; i++) {
        s = s * 1664525u + 1013904223u;
        float v = ((float)(s >> 9) / 8388608.0f * 2.0f - 1.0f) * 37.0f;
        h[i] = (_Float16)v;
        f[i] = v * 1.0001f;
    }
    h[300] = h[301] = (_Float16)99.0f;
    f[300] = f[301] = 99.0f;
    h[77] = h[78] = (_Float16)-99.0f;
    f[77] = f[78] = -99.0f;
    for (int c = 0; c < CASE_COUNT; c++) {
        run_case<_Float16>(reduce_half, c, h);
        run_case<float>(reduce_float, c, f);
    }
    std::printf("%d failures\n", failures);
    return failures;
}
