/*
 * npu-emu: the types of CANN's `securec.h` (the bounds-checked C library, libboundscheck).
 * See securec.h for what npu-emu provides.
 */
#ifndef NPU_EMU_SECURECTYPE_H
#define NPU_EMU_SECURECTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef EOK
#define EOK 0
#endif
#ifndef ERANGE
#define ERANGE 34
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef EINVAL_AND_RESET
#define EINVAL_AND_RESET (22 | 128)
#endif
#ifndef ERANGE_AND_RESET
#define ERANGE_AND_RESET (34 | 128)
#endif
#ifndef EOVERLAP_AND_RESET
#define EOVERLAP_AND_RESET (54 | 128)
#endif

#ifndef SECUREC_MEM_MAX_LEN
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL
#endif
#ifndef SECUREC_STRING_MAX_LEN
#define SECUREC_STRING_MAX_LEN 0x7fffffffUL
#endif

typedef int errno_t;

#endif /* NPU_EMU_SECURECTYPE_H */
