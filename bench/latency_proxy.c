/* bench/latency_proxy.c — a loopback HTTP/1.1 proxy that delays every request
 * by a fixed time, for bench/http_bench.sh (the slow network of an object
 * store). tests/net/faultproxy.py (Python, one thread per connection, bodies
 * buffered whole) tops out near 130 MB/s here, so it measured itself rather
 * than its clients; this one stays out of the way.
 *
 *   latency_proxy --upstream PORT [--latency-ms MS]     (default 20)
 *
 * Listens on 127.0.0.1, a free port printed on the first line of stdout.
 * Each client connection gets its own connection to 127.0.0.1:PORT and two
 * threads: one reads the client's requests (head, then a Content-Length body
 * streamed through), sleeping MS before forwarding each; the other copies
 * the answers back unparsed with splice(2) (no copy through user space), so
 * bodies stream as the server sends them. A request is delayed from the
 * moment its head arrived: a client pipelining or sending the next request
 * as the last answer ends pays the delay once per request, as it would on a
 * network with that round trip. Chunked request bodies are not supported
 * (the connection is closed); "Expect: 100-continue" passes through. Runs
 * until killed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 65536
#define PIPE_BYTES (1 << 20)

static int upstream_port;
static long latency_ns = 20L * 1000000;

typedef struct {
    int client, up;
    pthread_t back;
} conn;

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

static void sleep_until(const struct timespec *t)
{
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR) {
    }
}

/* The value of header `name` (lower case, with ':') in head[0..n), or NULL. */
static const char *find_header(const char *head, size_t n, const char *name)
{
    size_t k = strlen(name);
    for (const char *p = head; p && p + k < head + n; p = memchr(p, '\n', (size_t)(head + n - p))) {
        if (*p == '\n') p++;
        if (!strncasecmp(p, name, k)) return p + k;
    }
    return NULL;
}

/* Answers: upstream -> client, unparsed, through a pipe with splice. */
static void *answers(void *arg)
{
    conn *c = arg;
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) == 0) {
        fcntl(pfd[1], F_SETPIPE_SZ, PIPE_BYTES);
        for (;;) {
            ssize_t n = splice(c->up, NULL, pfd[1], NULL, PIPE_BYTES, SPLICE_F_MOVE);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            while (n > 0) {
                ssize_t k = splice(pfd[0], NULL, c->client, NULL, (size_t)n, SPLICE_F_MOVE);
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0) goto done;
                n -= k;
            }
        }
    done:
        close(pfd[0]);
        close(pfd[1]);
    }
    shutdown(c->client, SHUT_RDWR); /* the server closed: so does the client's side */
    shutdown(c->up, SHUT_RDWR);
    return NULL;
}

/* Requests: client -> upstream, each delayed. */
static void *requests(void *arg)
{
    conn *c = arg;
    char *buf = malloc(HEAD_MAX);
    size_t have = 0;
    while (buf) {
        char *end = NULL;
        while (!(end = have >= 4 ? memmem(buf, have, "\r\n\r\n", 4) : NULL)) {
            if (have == HEAD_MAX) goto out; /* a head this long: not HTTP we serve */
            ssize_t k = recv(c->client, buf + have, HEAD_MAX - have, 0);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) goto out;
            have += (size_t)k;
        }
        struct timespec due;
        clock_gettime(CLOCK_MONOTONIC, &due);
        due.tv_nsec += latency_ns;
        due.tv_sec += due.tv_nsec / 1000000000L;
        due.tv_nsec %= 1000000000L;
        size_t hlen = (size_t)(end + 4 - buf);
        const char *cl = find_header(buf, hlen, "content-length:");
        const char *te = find_header(buf, hlen, "transfer-encoding:");
        if (te) goto out;
        unsigned long long body = cl ? strtoull(cl, NULL, 10) : 0;
        sleep_until(&due);
        size_t first = hlen + (body < have - hlen ? (size_t)body : have - hlen);
        if (!write_all(c->up, buf, first)) goto out;
        body -= first - hlen;
        memmove(buf, buf + first, have - first);
        have -= first;
        while (body) { /* the rest of the body, as it comes */
            char tmp[65536];
            ssize_t k = recv(c->client, tmp, body < sizeof tmp ? (size_t)body : sizeof tmp, 0);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0 || !write_all(c->up, tmp, (size_t)k)) goto out;
            body -= (unsigned long long)k;
        }
    }
out:
    free(buf);
    shutdown(c->up, SHUT_RDWR);
    shutdown(c->client, SHUT_RDWR);
    pthread_join(c->back, NULL);
    close(c->client);
    close(c->up);
    free(c);
    return NULL;
}

static int connect_upstream(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)upstream_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
        if (s >= 0) close(s);
        return -1;
    }
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--upstream")) upstream_port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--latency-ms")) latency_ns = (long)(atof(argv[i + 1]) * 1e6);
        else upstream_port = 0;
    }
    if (upstream_port <= 0 || upstream_port > 65535 || latency_ns < 0 || latency_ns >= 1000000000L) {
        fprintf(stderr, "usage: latency_proxy --upstream PORT [--latency-ms MS (0-999)]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1024) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) < 0) {
        perror("latency_proxy: listening on 127.0.0.1");
        return 1;
    }
    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 << 10);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (;;) {
        int cs = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (cs < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            perror("latency_proxy: accept");
            sleep(1); /* out of descriptors: let some connections end */
            continue;
        }
        int one = 1;
        setsockopt(cs, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn *c = malloc(sizeof *c);
        int up = c ? connect_upstream() : -1;
        if (up < 0) {
            close(cs);
            free(c);
            continue;
        }
        *c = (conn){.client = cs, .up = up};
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_JOINABLE);
        if (pthread_create(&c->back, &at, answers, c)) {
            close(cs);
            close(up);
            free(c);
            continue;
        }
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        if (pthread_create(&t, &at, requests, c)) {
            shutdown(up, SHUT_RDWR);
            shutdown(cs, SHUT_RDWR);
            pthread_join(c->back, NULL);
            close(cs);
            close(up);
            free(c);
        }
    }
}
