/*
 * A rank for the launcher tests (tests/tests/launcher.rs). It needs no NPU library: it shows
 * what `npu-emu run` gives each rank and how the launcher treats failures and signals.
 *
 *   cli_rank env              print RANK_ID, RANK_SIZE, ASCEND_DEVICE_ID, NPU_EMU_JOB_ID and
 *                             the rank table (path and content on one line)
 *   cli_rank lines            print lines to stdout and stderr, the last one without a newline
 *   cli_rank fail R CODE      rank R exits with CODE; the others wait for a signal
 *   cli_rank segv R           rank R dies of SIGSEGV; the others wait for a signal
 *   cli_rank stubborn R       rank R exits 1; the others ignore SIGTERM
 *   cli_rank wait             every rank prints "ready" and waits for a signal
 *
 * A waiting rank prints "rank X got SIG..." when a signal arrives and exits 0. Once its
 * handlers are in place it creates `ready.<rank>` in the current directory; a failing rank
 * waits for every other rank's file first, so the tests never depend on timing.
 */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank = -1;
static char g_msg_term[64];
static char g_msg_int[64];

static void on_signal(int sig)
{
    const char *m = sig == SIGINT ? g_msg_int : g_msg_term;
    ssize_t n = write(1, m, strlen(m));
    (void)n;
    _exit(0);
}

static void wait_for_signal(int ignore_term)
{
    snprintf(g_msg_term, sizeof g_msg_term, "rank %d got SIGTERM\n", g_rank);
    snprintf(g_msg_int, sizeof g_msg_int, "rank %d got SIGINT\n", g_rank);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    if (ignore_term) {
        signal(SIGTERM, SIG_IGN);
        printf("rank %d ignores SIGTERM\n", g_rank);
    } else {
        sigaction(SIGTERM, &sa, NULL);
    }
    char path[64];
    snprintf(path, sizeof path, "ready.%d", g_rank);
    FILE *f = fopen(path, "w");
    if (f) {
        fclose(f);
    }
    printf("rank %d ready\n", g_rank);
    fflush(stdout);
    for (;;) {
        pause();
    }
}

/* Wait until every other rank has created its ready file. */
static void wait_for_others(void)
{
    int size = atoi(getenv("RANK_SIZE") ? getenv("RANK_SIZE") : "1");
    for (int r = 0; r < size; ++r) {
        char path[64];
        snprintf(path, sizeof path, "ready.%d", r);
        while (r != g_rank && access(path, F_OK) != 0) {
            usleep(1000);
        }
    }
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v ? v : dflt;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_rank = atoi(env_or("RANK_ID", "-1"));
    const char *mode = argc > 1 ? argv[1] : "env";
    int who = argc > 2 ? atoi(argv[2]) : 0;

    if (strcmp(mode, "env") == 0) {
        const char *table = env_or("RANK_TABLE_FILE", "");
        printf("RANK_ID=%s RANK_SIZE=%s ASCEND_DEVICE_ID=%s NPU_EMU_JOB_ID=%s RANK_TABLE_FILE=%s\n",
               env_or("RANK_ID", "unset"), env_or("RANK_SIZE", "unset"),
               env_or("ASCEND_DEVICE_ID", "unset"), env_or("NPU_EMU_JOB_ID", "unset"), table);
        FILE *f = fopen(table, "r");
        if (!f) {
            printf("cannot open the rank table\n");
            return 3;
        }
        printf("TABLE ");
        int c;
        while ((c = fgetc(f)) != EOF) {
            if (c != '\n') {
                putchar(c);
            }
        }
        putchar('\n');
        fclose(f);
        return 0;
    }
    if (strcmp(mode, "lines") == 0) {
        printf("out one\nout two\n");
        fprintf(stderr, "err one\n");
        printf("partial");
        return 0;
    }
    if (strcmp(mode, "fail") == 0) {
        if (g_rank == who) {
            wait_for_others();
            printf("rank %d failing\n", g_rank);
            return argc > 3 ? atoi(argv[3]) : 1;
        }
        wait_for_signal(0);
    }
    if (strcmp(mode, "segv") == 0) {
        if (g_rank == who) {
            wait_for_others();
            signal(SIGSEGV, SIG_DFL);
            raise(SIGSEGV);
        }
        wait_for_signal(0);
    }
    if (strcmp(mode, "stubborn") == 0) {
        if (g_rank == who) {
            wait_for_others();
            return 1;
        }
        wait_for_signal(1);
    }
    if (strcmp(mode, "wait") == 0) {
        wait_for_signal(0);
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
