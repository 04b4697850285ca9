/* A child forked after aclInit cannot use the runtime (its stream threads do not exist):
 * calls fail with ACL_ERROR_UNINITIALIZE and a message saying so, instead of hanging. The
 * parent is unaffected. */
#define _DEFAULT_SOURCE
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

static int g_ran;
static void mark(void *arg) { *(int *)arg = 1; }

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    fflush(stdout);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        aclrtStream c = NULL;
        EXPECT_CODE(aclrtCreateStream(&c), ACL_ERROR_UNINITIALIZE, "forked");
        EXPECT_CODE(aclrtSynchronizeStream(s), ACL_ERROR_UNINITIALIZE, "forked");
        printf("child ok\n");
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(aclrtLaunchHostFunc(s, mark, &g_ran));
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(g_ran == 1);
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rt_fork passed\n");
    return 0;
}
