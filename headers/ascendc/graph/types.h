/* npu-emu: ge::DataType and ge::Format of the graph headers (`#include "graph/types.h"`), as op_host
 * code uses them in an OpDef (`.DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND})`) and tiling
 * functions read them (`context->GetInputDesc(0)->GetDataType()`). The numbers are GE's, the same
 * as aclDataType / aclFormat (abi.md §aclDataType, §aclFormat). */
#ifndef NPUEMU_GRAPH_TYPES_H
#define NPUEMU_GRAPH_TYPES_H

#include <cstdint>
#include <string>

#include "graph/ge_error_codes.h"

namespace ge {

enum DataType {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_STRING = 13,
    DT_DUAL_SUB_INT8 = 14,
    DT_DUAL_SUB_UINT8 = 15,
    DT_COMPLEX64 = 16,
    DT_COMPLEX128 = 17,
    DT_QINT8 = 18,
    DT_QINT16 = 19,
    DT_QINT32 = 20,
    DT_QUINT8 = 21,
    DT_QUINT16 = 22,
    DT_RESOURCE = 23,
    DT_STRING_REF = 24,
    DT_DUAL = 25,
    DT_VARIANT = 26,
    DT_BF16 = 27,
    DT_UNDEFINED = 28,
    DT_INT4 = 29,
    DT_UINT1 = 30,
    DT_INT2 = 31,
    DT_UINT2 = 32,
    DT_COMPLEX32 = 33,
    DT_HIFLOAT8 = 34,
    DT_FLOAT8_E5M2 = 35,
    DT_FLOAT8_E4M3FN = 36,
    DT_FLOAT8_E8M0 = 37,
    DT_FLOAT6_E3M2 = 38,
    DT_FLOAT6_E2M3 = 39,
    DT_FLOAT4_E2M1 = 40,
    DT_FLOAT4_E1M2 = 41,
    DT_MAX
};

enum Format {
    FORMAT_NCHW = 0,
    FORMAT_NHWC = 1,
    FORMAT_ND = 2,
    FORMAT_NC1HWC0 = 3,
    FORMAT_FRACTAL_Z = 4,
    FORMAT_NC1C0HWPAD = 5,
    FORMAT_NHWC1C0 = 6,
    FORMAT_FSR_NCHW = 7,
    FORMAT_FRACTAL_DECONV = 8,
    FORMAT_C1HWNC0 = 9,
    FORMAT_FRACTAL_DECONV_TRANSPOSE = 10,
    FORMAT_FRACTAL_DECONV_SP_STRIDE_TRANS = 11,
    FORMAT_NC1HWC0_C04 = 12,
    FORMAT_FRACTAL_Z_C04 = 13,
    FORMAT_CHWN = 14,
    FORMAT_FRACTAL_DECONV_SP_STRIDE8_TRANS = 15,
    FORMAT_HWCN = 16,
    FORMAT_NC1KHKWHWC0 = 17,
    FORMAT_BN_WEIGHT = 18,
    FORMAT_FILTER_HWCK = 19,
    FORMAT_HASHTABLE_LOOKUP_LOOKUPS = 20,
    FORMAT_HASHTABLE_LOOKUP_KEYS = 21,
    FORMAT_HASHTABLE_LOOKUP_VALUE = 22,
    FORMAT_HASHTABLE_LOOKUP_OUTPUT = 23,
    FORMAT_HASHTABLE_LOOKUP_HITS = 24,
    FORMAT_C1HWNCoC0 = 25,
    FORMAT_MD = 26,
    FORMAT_NDHWC = 27,
    FORMAT_FRACTAL_ZZ = 28,
    FORMAT_FRACTAL_NZ = 29,
    FORMAT_NCDHW = 30,
    FORMAT_DHWCN = 31,
    FORMAT_NDC1HWC0 = 32,
    FORMAT_FRACTAL_Z_3D = 33,
    FORMAT_CN = 34,
    FORMAT_NC = 35,
    FORMAT_DHWNC = 36,
    FORMAT_FRACTAL_Z_3D_TRANSPOSE = 37,
    FORMAT_FRACTAL_ZN_LSTM = 38,
    FORMAT_FRACTAL_Z_G = 39,
    FORMAT_RESERVED = 40,
    FORMAT_ALL = 41,
    FORMAT_NULL = 42,
    FORMAT_ND_RNN_BIAS = 43,
    FORMAT_FRACTAL_ZN_RNN = 44,
    FORMAT_NYUV = 45,
    FORMAT_NYUV_A = 46,
    FORMAT_NCL = 47,
    FORMAT_FRACTAL_Z_WINO = 48,
    FORMAT_C1HWC0 = 49,
    FORMAT_FRACTAL_NZ_C0_16 = 50,
    FORMAT_FRACTAL_NZ_C0_32 = 51,
    FORMAT_FRACTAL_NZ_C0_2 = 52,
    FORMAT_FRACTAL_NZ_C0_4 = 53,
    FORMAT_FRACTAL_NZ_C0_8 = 54,
    FORMAT_END = 55,
    FORMAT_MAX = 0xff
};

/* Bytes of one element (0 for the sub-byte and string types). */
inline int GetSizeByDataType(DataType t)
{
    switch (t) {
    case DT_FLOAT: case DT_INT32: case DT_UINT32: case DT_QINT32: case DT_COMPLEX32: return 4;
    case DT_FLOAT16: case DT_INT16: case DT_UINT16: case DT_BF16: case DT_QINT16: case DT_QUINT16: return 2;
    case DT_INT8: case DT_UINT8: case DT_BOOL: case DT_QINT8: case DT_QUINT8: case DT_HIFLOAT8:
    case DT_FLOAT8_E5M2: case DT_FLOAT8_E4M3FN: case DT_FLOAT8_E8M0: case DT_DUAL_SUB_INT8:
    case DT_DUAL_SUB_UINT8: return 1;
    case DT_INT64: case DT_UINT64: case DT_DOUBLE: case DT_COMPLEX64: return 8;
    case DT_COMPLEX128: return 16;
    default: return 0;
    }
}

/* The name GE prints for a data type ("DT_FLOAT16"). */
inline const char *npuemu_dtype_name(int t)
{
    static const char *const names[] = {
        "DT_FLOAT", "DT_FLOAT16", "DT_INT8", "DT_INT32", "DT_UINT8", "DT_5", "DT_INT16", "DT_UINT16",
        "DT_UINT32", "DT_INT64", "DT_UINT64", "DT_DOUBLE", "DT_BOOL", "DT_STRING", "DT_DUAL_SUB_INT8",
        "DT_DUAL_SUB_UINT8", "DT_COMPLEX64", "DT_COMPLEX128", "DT_QINT8", "DT_QINT16", "DT_QINT32",
        "DT_QUINT8", "DT_QUINT16", "DT_RESOURCE", "DT_STRING_REF", "DT_DUAL", "DT_VARIANT", "DT_BF16",
        "DT_UNDEFINED", "DT_INT4", "DT_UINT1", "DT_INT2", "DT_UINT2", "DT_COMPLEX32", "DT_HIFLOAT8",
        "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E8M0", "DT_FLOAT6_E3M2", "DT_FLOAT6_E2M3",
        "DT_FLOAT4_E2M1", "DT_FLOAT4_E1M2"};
    return (t >= 0 && t < static_cast<int>(sizeof(names) / sizeof(names[0]))) ? names[t] : "DT_UNKNOWN";
}

/* The name of a format's primary part ("ND", "NCHW", "FRACTAL_NZ"). */
inline std::string npuemu_format_name(int f)
{
    switch (f & 0xff) {
    case FORMAT_NCHW: return "NCHW";
    case FORMAT_NHWC: return "NHWC";
    case FORMAT_ND: return "ND";
    case FORMAT_NC1HWC0: return "NC1HWC0";
    case FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case FORMAT_HWCN: return "HWCN";
    case FORMAT_NDHWC: return "NDHWC";
    case FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    case FORMAT_NCDHW: return "NCDHW";
    case FORMAT_NDC1HWC0: return "NDC1HWC0";
    case FORMAT_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
    case FORMAT_NC: return "NC";
    case FORMAT_NCL: return "NCL";
    default: return "FORMAT_" + std::to_string(f & 0xff);
    }
}

} // namespace ge

#endif /* NPUEMU_GRAPH_TYPES_H */
