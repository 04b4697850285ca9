// What one TCP connection between two servers carries when both ends send and receive at
// once: the bound of a 2-rank collective across them (each rank of an AllReduce of S bytes
// sends and receives S bytes; of an AllGather of S bytes, S/2). compare_hosts.sh runs it
// between its two emulated servers next to the two libraries, so the table shows how close
// each comes to the link.
//
//   tcp_link server ADDR PORT SIZE... | tcp_link client ADDR PORT SIZE...
//
// For each SIZE (bytes; K and M suffixes) both ends exchange SIZE bytes each way, WARMUP
// times and then ITERS times (environment, default 3 and 20), a sender thread and the main
// thread receiving, as one connection of a rank pair would. The client prints one line per
// size: "link SIZE us_per_exchange GB/s_per_direction". Plain sockets, no library: this is
// the floor every transport over this link stands on.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fd;
static const char *sbuf;
static size_t len;
static int rounds;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "tcp_link: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void *sender(void *arg) {
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        size_t off = 0;
        while (off < len) {
            ssize_t r = send(fd, sbuf + off, len - off, MSG_NOSIGNAL);
            if (r <= 0) die("send");
            off += (size_t)r;
        }
    }
    return NULL;
}

static void recv_all(char *buf, size_t n) {
    size_t off = 0;
    while (off < n) {
        ssize_t r = recv(fd, buf + off, n - off, 0);
        if (r == 0) {
            fprintf(stderr, "tcp_link: the peer closed the connection\n");
            exit(1);
        }
        if (r < 0) die("recv");
        off += (size_t)r;
    }
}

// Exchange `n` bytes each way `k` times; returns the seconds it took.
static double exchange(char *sb, char *rb, size_t n, int k) {
    sbuf = sb;
    len = n;
    rounds = k;
    pthread_t t;
    double t0 = now();
    if (pthread_create(&t, NULL, sender, NULL) != 0) die("pthread_create");
    for (int i = 0; i < k; i++) recv_all(rb, n);
    pthread_join(t, NULL);
    return now() - t0;
}

static size_t parse_size(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k') v <<= 10;
    if (*end == 'M' || *end == 'm') v <<= 20;
    if (*end == 'G' || *end == 'g') v <<= 30;
    if (v == 0) {
        fprintf(stderr, "tcp_link: bad size %s\n", s);
        exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv) {
    if (argc < 5 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
        fprintf(stderr, "usage: tcp_link server|client ADDR PORT SIZE...\n");
        return 2;
    }
    int server = !strcmp(argv[1], "server");
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)atoi(argv[3]));
    if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) {
        fprintf(stderr, "tcp_link: bad address %s\n", argv[2]);
        return 2;
    }
    int warmup = getenv("WARMUP") ? atoi(getenv("WARMUP")) : 3;
    int iters = getenv("ITERS") ? atoi(getenv("ITERS")) : 20;
    if (server) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1)) die("listen");
        fd = accept(l, NULL, NULL);
        if (fd < 0) die("accept");
        close(l);
    } else {
        double give_up = now() + 10;
        for (;;) {
            fd = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) break;
            close(fd);
            if (now() > give_up) die("connect");
            usleep(20000);
        }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (int i = 4; i < argc; i++) {
        size_t n = parse_size(argv[i]);
        char *sb = malloc(n), *rb = malloc(n);
        if (!sb || !rb) die("malloc");
        memset(sb, 1, n);
        memset(rb, 0, n);
        exchange(sb, rb, n, warmup);
        double t = exchange(sb, rb, n, iters);
        if (!server)
            printf("link %zu %.1f %.3f\n", n, t / iters * 1e6, (double)n * iters / t / 1e9);
        free(sb);
        free(rb);
    }
    close(fd);
    return 0;
}
