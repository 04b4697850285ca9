/* Shared check macros for the C/C++ test programs (tests/c). Each check prints one line and
 * exits with status 1 on failure, naming the call, the code and aclGetRecentErrMsg(). */
#ifndef NPU_EMU_TEST_COMMON_H
#define NPU_EMU_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"

static inline const char *test_msg(void) {
    const char *m = aclGetRecentErrMsg();
    return m ? m : "(no message)";
}

/* The call must succeed. */
#define CHECK(call)                                                                       \
    do {                                                                                  \
        aclError e_ = (call);                                                             \
        if (e_ != ACL_SUCCESS) {                                                          \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, \
                    (int)e_, test_msg());                                                 \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

/* The call must return `code`, and (if `sub` is not NULL) its recent error message must
 * contain `sub`. Prints the message so the test log shows what users see. */
#define EXPECT_CODE(call, code, sub)                                                          \
    do {                                                                                      \
        aclError e_ = (call);                                                                 \
        const char *m_ = aclGetRecentErrMsg();                                                \
        const char *s_ = (sub);                                                               \
        if (e_ != (code)) {                                                                   \
            fprintf(stderr, "FAIL %s:%d: %s returned %d, expected %d: %s\n", __FILE__,        \
                    __LINE__, #call, (int)e_, (int)(code), m_ ? m_ : "(no message)");         \
            exit(1);                                                                          \
        }                                                                                     \
        if (s_ != NULL && (m_ == NULL || strstr(m_, s_) == NULL)) {                           \
            fprintf(stderr, "FAIL %s:%d: %s message %s does not contain \"%s\"\n", __FILE__,  \
                    __LINE__, #call, m_ ? m_ : "(no message)", s_);                            \
            exit(1);                                                                          \
        }                                                                                     \
        printf("ok %s -> %d: %s\n", #call, (int)e_, m_ ? m_ : "(no message)");                \
    } while (0)

/* A plain condition. */
#define EXPECT(cond)                                                                      \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#endif
