/* Joins the node (aclInit + aclrtSetDevice 0), prints "held", and stays until stdin
 * closes: lets a test keep a node alive while another process joins it. */
#include "common.h"

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    printf("held\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
