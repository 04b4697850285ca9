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
    using C = typename calc_type<T>::type;
    for (int32_t i = 0; i < count; ++i) {
        dst.addr_[i] = static_cast<T>(f(static_cast<C>(a.addr_[i])));
    }
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
        npuemu::vec_binary("AscendC::" #NAME, dst, src0, src1, calCount, [](C a, C b) { return EXPR; }); \
    }

/* Unary: dst[i] = f(src[i]). */
#define NPUEMU_VEC_UNARY(NAME, TYPES, TYPES_TEXT, EXPR)                                              \
    template <typename T, bool isSetMask = true>                                                    \
    __aicore__ inline void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t &calCount) \
    {                                                                                               \
        static_assert(npuemu::one_of<T, TYPES>::value,                                              \
                      "npu-emu: AscendC::" #NAME " supports " TYPES_TEXT " elements only");         \
        using C = typename npuemu::calc_type<T>::type;                                              \
        npuemu::vec_unary("AscendC::" #NAME, dst, src, calCount, [](C a) { return EXPR; });         \
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
        npuemu::vec_unary("AscendC::" #NAME, dst, src, calCount, [s](C a) { return EXPR; });        \
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
    npuemu::check_count("AscendC::Duplicate", calCount);
    npuemu::check_vec_operand("AscendC::Duplicate", "dst", dst, calCount);
    const T v = static_cast<T>(scalarValue);
    for (int32_t i = 0; i < calCount; ++i) {
        dst.addr_[i] = v;
    }
}

} // namespace AscendC

#undef NPUEMU_VEC_BINARY
#undef NPUEMU_VEC_UNARY
#undef NPUEMU_VEC_SCALAR
#undef NPUEMU_PAREN
#undef NPUEMU_VEC_TYPES_ARITH
#undef NPUEMU_VEC_TYPES_FLOAT

#endif /* NPUEMU_KERNEL_OPERATOR_VEC_H */
