/*
 * npu-emu: CANN's `securec.h` (include/securec.h of the toolkit, from libboundscheck), so the
 * operator pages' example programs that include it and call memcpy_s build as written.
 *
 * CANN implements these functions in lib64/libc_sec.so; npu-emu ships no libc_sec.so and
 * defines the memory and string functions the samples use here, as static inline functions
 * with libboundscheck's return codes (EOK; EINVAL/ERANGE, and the *_AND_RESET forms when the
 * destination was cleared). The formatted ones (sprintf_s, ...) are not provided.
 */
#ifndef NPU_EMU_SECUREC_H
#define NPU_EMU_SECUREC_H

#include "securectype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* strnlen without POSIX (the header compiles as strict C99) */
static inline size_t securec_strnlen_(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0') {
        n++;
    }
    return n;
}

static inline errno_t memset_s(void *dest, size_t destMax, int c, size_t count)
{
    if (dest == NULL || destMax == 0 || destMax > SECUREC_MEM_MAX_LEN) {
        return ERANGE;
    }
    if (count > destMax) {
        memset(dest, c, destMax);
        return ERANGE_AND_RESET;
    }
    memset(dest, c, count);
    return EOK;
}

static inline errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count)
{
    if (dest == NULL || destMax == 0 || destMax > SECUREC_MEM_MAX_LEN) {
        return ERANGE;
    }
    if (src == NULL) {
        memset(dest, 0, destMax);
        return EINVAL_AND_RESET;
    }
    if (count > destMax) {
        memset(dest, 0, destMax);
        return ERANGE_AND_RESET;
    }
    if (count == 0 || dest == src) {
        return EOK;
    }
    if ((const char *)dest < (const char *)src + count && (const char *)src < (const char *)dest + count) {
        memset(dest, 0, destMax);
        return EOVERLAP_AND_RESET;
    }
    memcpy(dest, src, count);
    return EOK;
}

static inline errno_t memmove_s(void *dest, size_t destMax, const void *src, size_t count)
{
    if (dest == NULL || destMax == 0 || destMax > SECUREC_MEM_MAX_LEN) {
        return ERANGE;
    }
    if (src == NULL) {
        memset(dest, 0, destMax);
        return EINVAL_AND_RESET;
    }
    if (count > destMax) {
        memset(dest, 0, destMax);
        return ERANGE_AND_RESET;
    }
    memmove(dest, src, count);
    return EOK;
}

static inline errno_t strncpy_s(char *strDest, size_t destMax, const char *strSrc, size_t count)
{
    size_t n;
    if (strDest == NULL || destMax == 0 || destMax > SECUREC_STRING_MAX_LEN) {
        return ERANGE;
    }
    if (strSrc == NULL) {
        strDest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    n = securec_strnlen_(strSrc, count);
    if (n >= destMax) {
        strDest[0] = '\0';
        return ERANGE_AND_RESET;
    }
    memmove(strDest, strSrc, n);
    strDest[n] = '\0';
    return EOK;
}

static inline errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc)
{
    return strncpy_s(strDest, destMax, strSrc, destMax);
}

static inline errno_t strcat_s(char *strDest, size_t destMax, const char *strSrc)
{
    size_t used;
    if (strDest == NULL || destMax == 0 || destMax > SECUREC_STRING_MAX_LEN) {
        return ERANGE;
    }
    used = securec_strnlen_(strDest, destMax);
    if (used == destMax) {
        strDest[0] = '\0';
        return EINVAL_AND_RESET;
    }
    return strncpy_s(strDest + used, destMax - used, strSrc, destMax - used) == EOK ? EOK : ERANGE_AND_RESET;
}

#ifdef __cplusplus
}
#endif

#endif /* NPU_EMU_SECUREC_H */
