/* npu-emu Ascend C CPU headers: the SoftMax and SimpleSoftMax high-level APIs (ND format), and
 * LayerNorm (the form with mean and variance outputs; see its section below).
 *
 * The input is [m, k] (every dimension but the last a row; k, the row length in the tensor, 32-byte
 * aligned). For each row, over its first oriSrcK elements: max = the largest element, e = exp(x -
 * max), sum = the sum of e, dst = e / sum (the padding columns past oriSrcK are not written). The
 * max and sum outputs hold each row's value repeated over one 32-byte block (8 floats or 16
 * halves). Computed in float (half inputs converted exactly), each result rounded once to its
 * type; the sum is added in column order, where the NPU adds in a tree, so sums may differ in the
 * last bits. The shape comes from the SoftMaxShapeInfo (srcM, srcK, oriSrcM, oriSrcK) when it is
 * given, else from the tiling's srcM and srcK. sharedTmpBuffer is checked to be a UB tensor but
 * not used. The NZ format (isDataFormatNZ) does not compile. */
#ifndef NPUEMU_KERNEL_OPERATOR_SOFTMAX_H
#define NPUEMU_KERNEL_OPERATOR_SOFTMAX_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "interface/kernel_operator_vec.h"
#include "interface/kernel_tensor.h"
#include "kernel_tiling/kernel_tiling.h"
#include "npuemu/context.h"

namespace AscendC {

struct SoftMaxShapeInfo {
    uint32_t srcM = 0;
    uint32_t srcK = 0;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
};

struct SoftmaxConfig {
    bool isCheckTiling = true;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
};
constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0};

namespace npuemu_softmax {

/* The tiling argument: the kernel struct, or the host class of the same layout (an op's tiling
 * header compiled into the kernel translation unit declares its fields as optiling::SoftMaxTiling /
 * optiling::LayerNormTiling). */
template <class X, class K, class = void> struct is_tiling_of : std::false_type {};
template <class X>
struct is_tiling_of<X, SoftMaxTiling, decltype(void(std::declval<const X &>().tailReduceSize))>
    : std::integral_constant<bool, sizeof(X) == sizeof(SoftMaxTiling) && std::is_trivially_copyable<X>::value> {};
template <class X>
struct is_tiling_of<X, LayerNormTiling, decltype(void(std::declval<const X &>().lastDimValueBack))>
    : std::integral_constant<bool, sizeof(X) == sizeof(LayerNormTiling) && std::is_trivially_copyable<X>::value> {};
template <class K, class X> inline K kernel_tiling(const X &t)
{
    K k;
    std::memcpy(static_cast<void *>(&k), static_cast<const void *>(&t), sizeof(K));
    return k;
}

struct Shape {
    uint32_t m, k, oriK;
};

template <class T>
inline Shape shape_of(const char *api, const SoftMaxTiling &tiling, const SoftMaxShapeInfo &info)
{
    Shape s;
    if (info.srcM == 0 && info.srcK == 0) {
        s.m = tiling.srcM;
        s.k = tiling.srcK;
        s.oriK = tiling.srcK;
    } else {
        s.m = info.srcM;
        s.k = info.srcK;
        s.oriK = info.oriSrcK == 0 ? info.srcK : info.oriSrcK;
    }
    if ((static_cast<uint64_t>(s.k) * sizeof(T)) % 32 != 0) {
        npuemu::fault("%s: the row length srcK = %u %s elements is not 32-byte aligned", api, s.k,
                      npuemu::type_name<T>::get());
    }
    if (s.oriK > s.k) {
        npuemu::fault("%s: oriSrcK %u exceeds srcK %u", api, s.oriK, s.k);
    }
    return s;
}

template <class T> inline void check_rows(const char *api, const char *which, const LocalTensor<T> &t, uint64_t n)
{
    t.check_ub(api);
    if (npuemu::ub_offset(t.addr_) % npuemu::UB_ALIGN != 0) {
        npuemu::fault("%s: the %s operand starts at UB offset 0x%llx, which is not 32-byte aligned", api, which,
                      static_cast<unsigned long long>(npuemu::ub_offset(t.addr_)));
    }
    if (n > t.GetSize()) {
        npuemu::fault("%s: the %s operand needs %llu %s elements, it holds %u", api, which,
                      static_cast<unsigned long long>(n), npuemu::type_name<T>::get(), t.GetSize());
    }
}

/* One call: `given` = SimpleSoftMax (max and sum are inputs). */
template <class T, class U>
inline void run(const char *api, const LocalTensor<T> &dst, const LocalTensor<U> *sum, const LocalTensor<U> *max,
                const LocalTensor<T> &src, const Shape &s, bool given)
{
    const uint32_t per = 32 / sizeof(U);
    check_rows(api, "dst", dst, static_cast<uint64_t>(s.m) * s.k);
    check_rows(api, "src", src, static_cast<uint64_t>(s.m) * s.k);
    if (sum != nullptr) {
        check_rows(api, "sum", *sum, static_cast<uint64_t>(s.m) * per);
        check_rows(api, "max", *max, static_cast<uint64_t>(s.m) * per);
    }
    for (uint32_t r = 0; r < s.m; ++r) {
        const T *x = src.addr_ + static_cast<uint64_t>(r) * s.k;
        T *y = dst.addr_ + static_cast<uint64_t>(r) * s.k;
        float mx, sm;
        if (given) {
            mx = static_cast<float>(max->addr_[static_cast<uint64_t>(r) * per]);
            sm = static_cast<float>(sum->addr_[static_cast<uint64_t>(r) * per]);
        } else {
            mx = -INFINITY;
            for (uint32_t j = 0; j < s.oriK; ++j) {
                mx = std::fmax(mx, static_cast<float>(x[j]));
            }
            sm = 0.0f;
            for (uint32_t j = 0; j < s.oriK; ++j) {
                sm += std::exp(static_cast<float>(x[j]) - mx);
            }
        }
        /* max / sum are written after the row is read: src may be dst (isReuseSource) */
        float e[64];
        for (uint32_t j0 = 0; j0 < s.oriK; j0 += 64) {
            const uint32_t n = s.oriK - j0 < 64 ? s.oriK - j0 : 64;
            for (uint32_t j = 0; j < n; ++j) {
                e[j] = std::exp(static_cast<float>(x[j0 + j]) - mx);
            }
            for (uint32_t j = 0; j < n; ++j) {
                y[j0 + j] = static_cast<T>(e[j] / sm);
            }
        }
        if (!given && sum != nullptr) {
            for (uint32_t j = 0; j < per; ++j) {
                max->addr_[static_cast<uint64_t>(r) * per + j] = static_cast<U>(mx);
                sum->addr_[static_cast<uint64_t>(r) * per + j] = static_cast<U>(sm);
            }
        }
    }
}

} // namespace npuemu_softmax

#define NPUEMU_SOFTMAX_TEMPLATE                                                                     \
    template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false, \
              const SoftmaxConfig &config = SOFTMAX_DEFAULT_CFG, typename TilingT = SoftMaxTiling,       \
              typename std::enable_if<npuemu_softmax::is_tiling_of<TilingT, SoftMaxTiling>::value, int>::type = 0>
#define NPUEMU_SOFTMAX_CHECK(NAME)                                                                  \
    static_assert(npuemu::one_of<T, half, float>::value,                                            \
                  "npu-emu: AscendC::" NAME " supports half and float elements only");             \
    static_assert(!isDataFormatNZ, "npu-emu: AscendC::" NAME " in the NZ format is not supported by the CPU kernel headers")

/* dst, sum and max of one element type. */
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SoftMax(const LocalTensor<T> &dstTensor, const LocalTensor<T> &sumTensor,
                               const LocalTensor<T> &maxTensor, const LocalTensor<T> &srcTensor,
                               const TilingT &tiling, const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    NPUEMU_SOFTMAX_CHECK("SoftMax");
    const char *api = "AscendC::SoftMax";
    npuemu_softmax::run(api, dstTensor, &sumTensor, &maxTensor, srcTensor,
                        npuemu_softmax::shape_of<T>(api, npuemu_softmax::kernel_tiling<SoftMaxTiling>(tiling), softmaxShapeInfo), false);
}
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SoftMax(const LocalTensor<T> &dstTensor, const LocalTensor<T> &sumTensor,
                               const LocalTensor<T> &maxTensor, const LocalTensor<T> &srcTensor,
                               const LocalTensor<uint8_t> &sharedTmpBuffer, const TilingT &tiling,
                               const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    NPUEMU_SOFTMAX_CHECK("SoftMax");
    sharedTmpBuffer.check_ub("AscendC::SoftMax (sharedTmpBuffer)");
    SoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(dstTensor, sumTensor, maxTensor, srcTensor, tiling,
                                                                    softmaxShapeInfo);
}

/* half data with float sum and max. */
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SoftMax(const LocalTensor<half> &dstTensor, const LocalTensor<float> &sumTensor,
                               const LocalTensor<float> &maxTensor, const LocalTensor<half> &srcTensor,
                               const TilingT &tiling, const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    static_assert(!isDataFormatNZ, "npu-emu: AscendC::SoftMax in the NZ format is not supported by the CPU kernel headers");
    const char *api = "AscendC::SoftMax";
    npuemu_softmax::run(api, dstTensor, &sumTensor, &maxTensor, srcTensor,
                        npuemu_softmax::shape_of<half>(api, npuemu_softmax::kernel_tiling<SoftMaxTiling>(tiling), softmaxShapeInfo), false);
}
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SoftMax(const LocalTensor<half> &dstTensor, const LocalTensor<float> &sumTensor,
                               const LocalTensor<float> &maxTensor, const LocalTensor<half> &srcTensor,
                               const LocalTensor<uint8_t> &sharedTmpBuffer, const TilingT &tiling,
                               const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    sharedTmpBuffer.check_ub("AscendC::SoftMax (sharedTmpBuffer)");
    SoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(dstTensor, sumTensor, maxTensor, srcTensor, tiling,
                                                                    softmaxShapeInfo);
}

/* Without the sum and max outputs. */
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SoftMax(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor,
                               const TilingT &tiling, const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    NPUEMU_SOFTMAX_CHECK("SoftMax");
    const char *api = "AscendC::SoftMax";
    npuemu_softmax::run<T, T>(api, dstTensor, nullptr, nullptr, srcTensor,
                              npuemu_softmax::shape_of<T>(api, npuemu_softmax::kernel_tiling<SoftMaxTiling>(tiling), softmaxShapeInfo), false);
}
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SoftMax(const LocalTensor<T> &dstTensor, const LocalTensor<T> &srcTensor,
                               const LocalTensor<uint8_t> &sharedTmpBuffer, const TilingT &tiling,
                               const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    NPUEMU_SOFTMAX_CHECK("SoftMax");
    sharedTmpBuffer.check_ub("AscendC::SoftMax (sharedTmpBuffer)");
    SoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(dstTensor, srcTensor, tiling, softmaxShapeInfo);
}

/* SimpleSoftMax: dst = exp(src - max) / sum with the given per-row max and sum. */
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SimpleSoftMax(const LocalTensor<T> &dstTensor, const LocalTensor<T> &inSumTensor,
                                     const LocalTensor<T> &inMaxTensor, const LocalTensor<T> &srcTensor,
                                     const TilingT &tiling, const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    NPUEMU_SOFTMAX_CHECK("SimpleSoftMax");
    const char *api = "AscendC::SimpleSoftMax";
    npuemu_softmax::run(api, dstTensor, &inSumTensor, &inMaxTensor, srcTensor,
                        npuemu_softmax::shape_of<T>(api, npuemu_softmax::kernel_tiling<SoftMaxTiling>(tiling), softmaxShapeInfo), true);
}
NPUEMU_SOFTMAX_TEMPLATE
__aicore__ inline void SimpleSoftMax(const LocalTensor<T> &dstTensor, const LocalTensor<T> &inSumTensor,
                                     const LocalTensor<T> &inMaxTensor, const LocalTensor<T> &srcTensor,
                                     const LocalTensor<uint8_t> &sharedTmpBuffer, const TilingT &tiling,
                                     const SoftMaxShapeInfo &softmaxShapeInfo = {})
{
    NPUEMU_SOFTMAX_CHECK("SimpleSoftMax");
    sharedTmpBuffer.check_ub("AscendC::SimpleSoftMax (sharedTmpBuffer)");
    SimpleSoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(dstTensor, inSumTensor, inMaxTensor,
                                                                          srcTensor, tiling, softmaxShapeInfo);
}

#undef NPUEMU_SOFTMAX_TEMPLATE
#undef NPUEMU_SOFTMAX_CHECK

/* ---- LayerNorm: [B, S, H] rows of hLength (32-byte aligned), the first originalHLength valid:
 * mean = the row's mean, variance = the mean of (x - mean)^2, output = (x - mean) /
 * sqrt(variance + epsilon) * gamma + beta; mean and variance are [B, S] (B * S contiguous values).
 * In float, each result rounded once to T; the padding columns of output are not written. ---- */
namespace npuemu_layernorm {
template <class T>
inline void run(const LocalTensor<T> &out, const LocalTensor<T> &mean, const LocalTensor<T> &var,
                const LocalTensor<T> &x, const LocalTensor<T> &gamma, const LocalTensor<T> &beta, float eps,
                const LayerNormTiling &t)
{
    const char *api = "AscendC::LayerNorm";
    const uint64_t rows = static_cast<uint64_t>(t.bLength) * t.sLength;
    const uint32_t h = t.hLength, valid = t.originalHLength == 0 ? t.hLength : t.originalHLength;
    if ((static_cast<uint64_t>(h) * sizeof(T)) % 32 != 0) {
        npuemu::fault("%s: hLength %u %s elements is not 32-byte aligned", api, h, npuemu::type_name<T>::get());
    }
    if (valid > h) {
        npuemu::fault("%s: originalHLength %u exceeds hLength %u", api, valid, h);
    }
    npuemu_softmax::check_rows(api, "output", out, rows * h);
    npuemu_softmax::check_rows(api, "inputX", x, rows * h);
    npuemu_softmax::check_rows(api, "outputMean", mean, rows);
    npuemu_softmax::check_rows(api, "outputVariance", var, rows);
    npuemu_softmax::check_rows(api, "gamma", gamma, valid);
    npuemu_softmax::check_rows(api, "beta", beta, valid);
    for (uint64_t r = 0; r < rows; ++r) {
        const T *xr = x.addr_ + r * h;
        T *yr = out.addr_ + r * h;
        float sum = 0.0f;
        for (uint32_t j = 0; j < valid; ++j) {
            sum += static_cast<float>(xr[j]);
        }
        const float mu = sum / static_cast<float>(valid);
        float sq = 0.0f;
        for (uint32_t j = 0; j < valid; ++j) {
            const float d = static_cast<float>(xr[j]) - mu;
            sq += d * d;
        }
        const float v = sq / static_cast<float>(valid);
        const float rstd = 1.0f / std::sqrt(v + eps);
        for (uint32_t j = 0; j < valid; ++j) {
            yr[j] = static_cast<T>((static_cast<float>(xr[j]) - mu) * rstd * static_cast<float>(gamma.addr_[j]) +
                                   static_cast<float>(beta.addr_[j]));
        }
        mean.addr_[r] = static_cast<T>(mu);
        var.addr_[r] = static_cast<T>(v);
    }
}
} // namespace npuemu_layernorm

#define NPUEMU_LAYERNORM_TEMPLATE                                                                   \
    template <typename T, bool isReuseSource = false, typename TilingT = LayerNormTiling,           \
              typename std::enable_if<npuemu_softmax::is_tiling_of<TilingT, LayerNormTiling>::value, int>::type = 0>
NPUEMU_LAYERNORM_TEMPLATE
__aicore__ inline void LayerNorm(const LocalTensor<T> &output, const LocalTensor<T> &outputMean,
                                 const LocalTensor<T> &outputVariance, const LocalTensor<T> &inputX,
                                 const LocalTensor<T> &gamma, const LocalTensor<T> &beta,
                                 const LocalTensor<uint8_t> &sharedTmpBuffer, const T epsilon, TilingT &tiling)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::LayerNorm supports half and float only");
    sharedTmpBuffer.check_ub("AscendC::LayerNorm (sharedTmpBuffer)");
    npuemu_layernorm::run(output, outputMean, outputVariance, inputX, gamma, beta, static_cast<float>(epsilon),
                          npuemu_softmax::kernel_tiling<LayerNormTiling>(tiling));
}
NPUEMU_LAYERNORM_TEMPLATE
__aicore__ inline void LayerNorm(const LocalTensor<T> &output, const LocalTensor<T> &outputMean,
                                 const LocalTensor<T> &outputVariance, const LocalTensor<T> &inputX,
                                 const LocalTensor<T> &gamma, const LocalTensor<T> &beta, const T epsilon,
                                 TilingT &tiling)
{
    static_assert(npuemu::one_of<T, half, float>::value, "npu-emu: AscendC::LayerNorm supports half and float only");
    npuemu_layernorm::run(output, outputMean, outputVariance, inputX, gamma, beta, static_cast<float>(epsilon),
                          npuemu_softmax::kernel_tiling<LayerNormTiling>(tiling));
}

} // namespace AscendC

#undef NPUEMU_LAYERNORM_TEMPLATE

#endif /* NPUEMU_KERNEL_OPERATOR_SOFTMAX_H */
