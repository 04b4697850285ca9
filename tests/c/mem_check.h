/* Checking macros shared by the memory/helper test programs (mem_*.c, helpers_*.c). */
#ifndef NPU_EMU_TEST_MEM_CHECK_H
#define NPU_EMU_TEST_MEM_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"

static inline const char *mc_msg(void)
{
    const char *m = aclGetRecentErrMsg();
    return m ? m : "(no message)";
}

/* The call must succeed. */
#define CHECK_OK(call)                                                                   \
    do {                                                                                 \
        aclError e_ = (call);                                                            \
        if (e_ != ACL_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d: %s failed with %d: %s\n", __FILE__, __LINE__, #call, \
                    (int)e_, mc_msg());                                                  \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

/* The call must fail with `code`, and aclGetRecentErrMsg must contain every substring. */
#define CHECK_ERR(call, code, ...)                                                           \
    do {                                                                                     \
        aclError e_ = (call);                                                                \
        const char *m_ = aclGetRecentErrMsg();                                               \
        const char *subs_[] = {__VA_ARGS__, NULL};                                           \
        if (e_ != (code)) {                                                                  \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n", __FILE__, __LINE__, \
                    #call, (int)e_, (int)(code), m_ ? m_ : "(no message)");                  \
            exit(1);                                                                         \
        }                                                                                    \
        for (int i_ = 0; subs_[i_]; i_++) {                                                  \
            if (!m_ || !strstr(m_, subs_[i_])) {                                             \
                fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n", __FILE__,        \
                        __LINE__, #call, m_ ? m_ : "(null)", subs_[i_]);                     \
                exit(1);                                                                     \
            }                                                                                \
        }                                                                                    \
        printf("expected error %d from %s: %s\n", (int)e_, #call, m_);                       \
    } while (0)

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* Deterministic test pattern: byte i of stream `seed`. */
static inline unsigned char mc_pat(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + seed * 17u + (i >> 8)) & 0xFF);
}

static inline void mc_fill(void *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) ((unsigned char *)p)[i] = mc_pat(i, seed);
}

/* Index of the first byte of p[0..n) that differs from the pattern, or -1. */
static inline long mc_verify(const void *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i] != mc_pat(i, seed)) return (long)i;
    return -1;
}

#endif
