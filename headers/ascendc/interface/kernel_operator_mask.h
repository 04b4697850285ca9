/* npu-emu Ascend C CPU headers: the vector mask register.
 *
 * Each block has one mask register (128 bits) and a mode. Normal mode (the default): the mask
 * selects the elements of every repeat of a level-0 ("mask / repeat") call. Counter mode
 * (SetMaskCount): the low 64 bits are the number of elements of the whole call, whose repeats are
 * as many as they fill. Vector calls with isSetMask = false take their mask (or count, for the
 * "first n elements" forms, which then ignore their count argument) from the register; with
 * isSetMask = true (the default) they take it from their arguments, in the current mode. */
#ifndef NPUEMU_KERNEL_OPERATOR_MASK_H
#define NPUEMU_KERNEL_OPERATOR_MASK_H

#include <cstdint>

#include "interface/kernel_common.h"
#include "npuemu/context.h"

namespace AscendC {

enum class MaskMode : uint8_t {
    NORMAL = 0,
    COUNTER,
};

/* The mask argument of a call with isSetMask = false: a placeholder, ignored. */
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

/* Normal mode: maskHigh:maskLow is a bit mask (bit i selects element i of a repeat; 32-bit
 * elements use maskLow only). Counter mode: maskLow is the element count, maskHigh must be 0. */
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ static inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow)
{
    npuemu::BlockContext &c = npuemu::ctx();
    if (mode == MaskMode::COUNTER || c.mask_counter) {
        c.mask_hi = 0;
        c.mask_lo = maskLow;
        return;
    }
    if (sizeof(T) == 4 && maskHigh != 0) {
        npuemu::fault("AscendC::SetVectorMask<%s>(0x%llx, 0x%llx): maskHigh must be 0 for 32-bit elements",
                      npuemu::type_name<T>::get(), static_cast<unsigned long long>(maskHigh),
                      static_cast<unsigned long long>(maskLow));
    }
    c.mask_hi = maskHigh;
    c.mask_lo = maskLow;
}

/* Normal mode: the first len elements of each repeat. Counter mode: len elements in all. */
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ static inline void SetVectorMask(int32_t len)
{
    npuemu::BlockContext &c = npuemu::ctx();
    if (mode == MaskMode::COUNTER || c.mask_counter) {
        if (len < 0) {
            npuemu::fault("AscendC::SetVectorMask<%s, COUNTER>(%d): the count is negative", npuemu::type_name<T>::get(),
                          len);
        }
        c.mask_hi = 0;
        c.mask_lo = static_cast<uint64_t>(len);
        return;
    }
    const int32_t per_repeat = static_cast<int32_t>(256 / sizeof(T));
    if (len < 0 || len > per_repeat) {
        npuemu::fault("AscendC::SetVectorMask<%s>(%d): len must be in [0, %d] in normal mode (elements of a repeat)",
                      npuemu::type_name<T>::get(), len, per_repeat);
    }
    const uint32_t n = static_cast<uint32_t>(len);
    c.mask_lo = n >= 64 ? ~0ull : (1ull << n) - 1;
    c.mask_hi = n <= 64 ? 0 : n >= 128 ? ~0ull : (1ull << (n - 64)) - 1;
}

/* Back to the default mask: every element of a repeat. */
__aicore__ inline void ResetMask()
{
    npuemu::BlockContext &c = npuemu::ctx();
    c.mask_hi = ~0ull;
    c.mask_lo = ~0ull;
}

__aicore__ inline void SetMaskCount() { npuemu::ctx().mask_counter = true; }
__aicore__ inline void SetMaskNorm() { npuemu::ctx().mask_counter = false; }

} // namespace AscendC

#endif /* NPUEMU_KERNEL_OPERATOR_MASK_H */
