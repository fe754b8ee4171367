/* launch: the launcher table, the per-run secret and HMAC (RFC 4231 vectors), and the
 * rendezvous between real processes over real loopback sockets: joining, gather,
 * broadcast, listening on every address, and each refusal (wrong secret, another world
 * size, a duplicate rank, a silent stray) arriving fast and named. */
#include "testsupport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/launch.h"
#include "cclforge/launch_collect.h"
#include "launch/launch_internal.h"

struct launcher_case {
    const char *env[8];
    int found;
    const char *launcher;
    int rank, world, local_rank, port;
};

static void test_launcher_detection_table(void **state)
{
    static const struct launcher_case cases[] = {
        { { "PATH=/bin", NULL }, 0, NULL, 0, 0, 0, 0 },
        { { "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=1", NULL }, 1, "mpirun",
          3, 4, 1, 0 },
        /* mpirun inside a Slurm allocation: mpirun's variables win */
        { { "SLURM_PROCID=0", "SLURM_NTASKS=1", "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=8", NULL }, 1,
          "mpirun", 2, 8, 2, 0 },
        { { "RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500", NULL }, 1,
          "torchrun", 5, 8, 1, 29501 },
        { { "SLURM_PROCID=7", "SLURM_NTASKS=16", "SLURM_LOCALID=3", "MASTER_ADDR=n1", "MASTER_PORT=6000", NULL }, 1,
          "srun", 7, 16, 3, 6000 },
        { { "PMI_RANK=1", "PMI_SIZE=2", NULL }, 1, "pmi", 1, 2, 1, 0 },
        { { "RANK=0", "WORLD_SIZE=2", "MASTER_PORT=29500", "CCLFORGE_PORT=4242", NULL }, 1, "torchrun", 0, 2, 0,
          4242 },
        /* cclforge's own supervisor, even inside an mpirun or torchrun job */
        { { "RANK=1", "WORLD_SIZE=9", "CCLFORGE_RANK=2", "CCLFORGE_WORLD_SIZE=3", "CCLFORGE_PORT=5000", NULL }, 1,
          "cclforge", 2, 3, 2, 5000 },
        { { "RANK=abc", "WORLD_SIZE=2", NULL }, -1, NULL, 0, 0, 0, 0 },
        { { "RANK=2", "WORLD_SIZE=2", NULL }, -1, NULL, 0, 0, 0, 0 },
        { { "SLURM_PROCID=0", "SLURM_NTASKS=0", NULL }, -1, NULL, 0, 0, 0, 0 },
        { { "RANK=0", "WORLD_SIZE=2", "MASTER_PORT=65535", NULL }, -1, NULL, 0, 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct launcher_case *c = &cases[i];
        struct cf_launch_info le;
        cf_error err = CF_ERROR_INIT;
        int rc = cf_launch_detect((char *const *)c->env, &le, &err);
        if (rc != c->found)
            fail_msg("case %zu: got %d, wanted %d (%s)", i, rc, c->found, cf_error_message(&err));
        if (rc < 0)
            assert_non_null(strstr(cf_error_message(&err), c->env[0][0] == 'R' ? (i == 11 ? "MASTER_PORT" : "RANK")
                                                                                : "SLURM"));
        if (rc == 1) {
            assert_string_equal(le.launcher, c->launcher);
            assert_int_equal(le.rank, c->rank);
            assert_int_equal(le.world, c->world);
            assert_int_equal(le.local_rank, c->local_rank);
            assert_int_equal(le.master_port, c->port);
            assert_true(le.hostname[0] != 0);
        }
        cf_error_clear(&err);
    }
    /* the job id binds a derived secret */
    char *const slurm[] = { "SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=77", "SLURM_STEP_ID=3", NULL };
    struct cf_launch_info le;
    assert_int_equal(cf_launch_detect(slurm, &le, NULL), 1);
    assert_string_equal(le.run_id, "77.3");
}

static void hex_of(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

/* RFC 4231 test cases 1, 2 and 6 (a key longer than the block): the independent oracle */
static void test_hmac_sha256_rfc4231(void **state)
{
    unsigned char out[32];
    char hex[65];
    unsigned char key1[20];
    memset(key1, 0x0b, sizeof key1);
    cf_launch_hmac(key1, sizeof key1, "Hi There", 8, out);
    hex_of(out, 32, hex);
    assert_string_equal(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    cf_launch_hmac((const unsigned char *)"Jefe", 4, "what do ya want for nothing?", 28, out);
    hex_of(out, 32, hex);
    assert_string_equal(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    unsigned char key6[131];
    memset(key6, 0xaa, sizeof key6);
    const char *msg6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    cf_launch_hmac(key6, sizeof key6, msg6, strlen(msg6), out);
    hex_of(out, 32, hex);
    assert_string_equal(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void test_secret_from_env_or_derived(void **state)
{
    struct cf_launch_info info;
    memset(&info, 0, sizeof info);
    info.launcher = "torchrun";
    snprintf(info.run_id, sizeof info.run_id, "job-1");
    snprintf(info.master_addr, sizeof info.master_addr, "node1");
    info.master_port = 29501;
    struct cf_launch_secret a, b, c;
    char *const none[] = { NULL };
    assert_int_equal(cf_launch_secret_for(&info, none, &a, NULL), 0);
    assert_int_equal(cf_launch_secret_for(&info, none, &b, NULL), 0);
    assert_true(a.derived);
    assert_memory_equal(a.key, b.key, 32);
    snprintf(info.run_id, sizeof info.run_id, "job-2");
    assert_int_equal(cf_launch_secret_for(&info, none, &c, NULL), 0);
    assert_memory_not_equal(a.key, c.key, 32);

    char hex[65], var[100];
    assert_int_equal(cf_launch_secret_random(&a, hex, NULL), 0);
    snprintf(var, sizeof var, "CCLFORGE_SECRET=%s", hex);
    char *const env[] = { var, NULL };
    assert_int_equal(cf_launch_secret_for(&info, env, &b, NULL), 0);
    assert_false(b.derived);
    assert_memory_equal(a.key, b.key, 32);
    char *const bad[] = { "CCLFORGE_SECRET=xyz", NULL };
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_launch_secret_for(&info, bad, &b, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "64 hex digits"));
    cf_error_clear(&err);
}

static struct cf_launch_secret test_secret(unsigned char fill)
{
    struct cf_launch_secret s;
    memset(&s, 0, sizeof s);
    memset(s.key, fill, sizeof s.key);
    return s;
}

/* A forked peer: joins, expects the broadcast, and exits 0 on success, 10 + a
 * step number on failure, writing the error to fd 2. */
static pid_t spawn_peer(int port, int rank, int world, unsigned char fill, double timeout, const char *want_bcast)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    struct cf_launch_secret s = test_secret(fill);
    struct cf_rdv_opts o = { "127.0.0.1", port, -1, rank, world, &s, "test", timeout, 0 };
    struct cf_rdv *r;
    cf_error err = CF_ERROR_INIT;
    if (cf_rdv_open(&o, &r, &err) < 0) {
        fprintf(stderr, "peer %d: %s\n", rank, cf_error_message(&err));
        _exit(11);
    }
    unsigned char *got = NULL;
    size_t len = 0;
    if (cf_rdv_bcast(r, &got, &len, &err) < 0)
        _exit(13);
    int ok = len == strlen(want_bcast) && !memcmp(got, want_bcast, len);
    free(got);
    cf_rdv_close(r);
    _exit(ok ? 0 : 14);
}

static int exit_code(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* the listening socket rank 0 would get from a launcher: any free port, every address */
static int any_port(int *port)
{
    int fd = cf_launch_listen(0, 0, port, NULL, 0, NULL);
    assert_true(fd >= 0);
    return fd;
}

static void test_rendezvous_broadcasts(void **state)
{
    int port, lfd = any_port(&port);
    pid_t kids[3];
    for (int r = 1; r <= 3; r++)
        kids[r - 1] = spawn_peer(port, r, 4, 7, 10, "the unique id");
    struct cf_launch_secret s = test_secret(7);
    struct cf_rdv_opts o = { "127.0.0.1", port, lfd, 0, 4, &s, "test", 10, 0 };
    struct cf_rdv *r;
    cf_error err = CF_ERROR_INIT;
    if (cf_rdv_open(&o, &r, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    assert_non_null(strstr(cf_rdv_listen_desc(r), "given by the launcher"));
    assert_non_null(strstr(cf_rdv_advertised(r), "127.0.0.1"));
    assert_string_equal(cf_rdv_peer_addr(r, 2), "127.0.0.1");
    unsigned char *msg = (unsigned char *)"the unique id";
    size_t len = strlen((const char *)msg);
    assert_int_equal(cf_rdv_bcast(r, &msg, &len, &err), 0);
    cf_rdv_close(r);
    for (int i = 0; i < 3; i++)
        assert_int_equal(exit_code(kids[i]), 0);
}

/* Rank 0 listens on every address of its port: a peer that reaches it at another
 * local address (127.0.0.2, as a remote rank reaches 10.x while MASTER_ADDR means
 * 127.0.1.1 on rank 0's own host) still joins. */
static void test_rendezvous_listens_on_every_address(void **state)
{
    int port, lfd = any_port(&port);
    close(lfd); /* a free port: rank 0 opens it itself, as under torchrun */
    pid_t kid = fork();
    if (kid == 0) {
        struct cf_launch_secret s = test_secret(3);
        struct cf_rdv_opts o = { "127.0.0.2", port, -1, 1, 2, &s, "test", 10, 0 };
        struct cf_rdv *r;
        cf_error err = CF_ERROR_INIT;
        int rc = cf_rdv_open(&o, &r, &err);
        if (rc == 0) {
            rc = strcmp(cf_rdv_peer_addr(r, 0), "127.0.0.2") ? 2 : 0;
            cf_rdv_close(r);
        } else {
            fprintf(stderr, "%s\n", cf_error_message(&err));
        }
        _exit(rc == 0 ? 0 : 1);
    }
    struct cf_launch_secret s = test_secret(3);
    /* what rank 0 is told it is: the loopback name, like 127.0.1.1 for its hostname */
    struct cf_rdv_opts o = { "127.0.0.1", port, -1, 0, 2, &s, "test", 10, 0 };
    struct cf_rdv *r;
    cf_error err = CF_ERROR_INIT;
    if (cf_rdv_open(&o, &r, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    assert_non_null(strstr(cf_rdv_listen_desc(r), "all addresses"));
    cf_rdv_close(r);
    assert_int_equal(exit_code(kid), 0);
    /* the control: a socket on 127.0.0.1 alone is not reached at 127.0.0.2 */
    int only = cf_launch_listen(0, 1, &port, NULL, 0, NULL);
    assert_true(only >= 0);
    struct cf_launch_peer peer;
    assert_int_equal(cf_launch_connect("127.0.0.2", port, "rank 0", &s, "test", 1, 2, 0.3, &peer, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "Connection refused"));
    cf_error_clear(&err);
    close(only);
}

/* The failure named in its own words: not the timeout's, which a slow path would meet. */
static void expect_failure_words(const cf_error *err, const char *words)
{
    if (!strstr(cf_error_message(err), words))
        fail_msg("'%s' lacks '%s'", cf_error_message(err), words);
}

static void test_rendezvous_refuses_another_world_size(void **state)
{
    int port, lfd = any_port(&port);
    /* a peer started for another world size: rank 0 fails at once, naming it, and the
     * peer is told why */
    pid_t wrong_world = spawn_peer(port, 1, 3, 1, 20, "");
    struct cf_launch_secret s = test_secret(1);
    struct cf_rdv_opts o = { "127.0.0.1", port, lfd, 0, 2, &s, "test", 20, 0 };
    struct cf_rdv *r;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_rdv_open(&o, &r, &err), -1);
    expect_failure_words(&err, "world size mismatch: rank 0 runs 2 ranks, but rank 1");
    assert_int_equal(exit_code(wrong_world), 11);
    cf_error_clear(&err);
}

/* the peer side of the same refusals, with the server in a child */
static void test_peer_reports_refusals_in_the_servers_words(void **state)
{
    int port, lfd = any_port(&port);
    pid_t server = fork();
    if (server == 0) {
        struct cf_launch_secret s = test_secret(1);
        struct cf_rdv_opts o = { "127.0.0.1", port, lfd, 0, 2, &s, "test", 5, 0 };
        struct cf_rdv *r;
        int rc = cf_rdv_open(&o, &r, NULL);
        _exit(rc == 0 ? 0 : 1);
    }
    close(lfd);
    struct cf_launch_secret bad = test_secret(2);
    struct cf_launch_peer peer;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_launch_connect("127.0.0.1", port, "rank 0", &bad, "test", 1, 2, 20, &peer, &err), -1);
    expect_failure_words(&err, "authentication failed");
    cf_error_clear(&err);
    struct cf_launch_secret good = test_secret(1);
    assert_int_equal(cf_launch_connect("127.0.0.1", port, "rank 0", &good, "other", 1, 2, 20, &peer, &err), -1);
    /* a wrong tag is told so by a code: the server's own tag is not in the answer */
    expect_failure_words(&err, "refused by rank 0: its port serves another cclforge channel than 'other'");
    assert_null(strstr(cf_error_message(&err), "'test'"));
    cf_error_clear(&err);
    assert_int_equal(cf_launch_connect("127.0.0.1", port, "rank 0", &good, "test", 1, 2, 20, &peer, &err), 0);
    close(peer.fd);
    assert_int_equal(exit_code(server), 0);
}

/* A stray that connects and says nothing, another that sends garbage: the real
 * peer still joins, and rank 0 is not held past the handshake bound. */
static void test_strays_do_not_take_a_place(void **state)
{
    int port, lfd = any_port(&port);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int silent = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(silent, (struct sockaddr *)&sa, sizeof sa), 0);
    int noisy = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(noisy, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_true(write(noisy, "GET / HTTP/1.0\r\n\r\n", 18) == 18);
    pid_t kid = spawn_peer(port, 1, 2, 5, 10, "x");
    struct cf_launch_secret s = test_secret(5);
    struct cf_rdv_opts o = { "127.0.0.1", port, lfd, 0, 2, &s, "test", 10, 0 };
    struct cf_rdv *r;
    cf_error err = CF_ERROR_INIT;
    if (cf_rdv_open(&o, &r, &err) < 0) /* within its 10 s: the strays did not hold it */
        fail_msg("%s", cf_error_message(&err));
    unsigned char *x = (unsigned char *)"x";
    size_t len = 1;
    assert_int_equal(cf_rdv_bcast(r, &x, &len, &err), 0);
    cf_rdv_close(r);
    assert_int_equal(exit_code(kid), 0);
    close(silent);
    close(noisy);
}


static int tcp_to(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

static int read_all(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* A stranger without the secret: takes the server's hello, sends one of its own
 * with tag, rank and world, a zero nonce and a zero MAC, and returns the refusal
 * (LAUNCH_REFUSAL_LEN bytes into out). */
static void stranger_hello(int port, const char *tag, uint32_t rank, uint32_t world,
                           unsigned char out[LAUNCH_REFUSAL_LEN])
{
    int fd = tcp_to(port);
    unsigned char hello[LAUNCH_HEADER_LEN + LAUNCH_NONCE_LEN];
    assert_int_equal(read_all(fd, hello, sizeof hello), 0);
    struct launch_client_hello h;
    memset(&h, 0, sizeof h);
    cf_launch_tag_field(tag, h.tag);
    h.rank = rank;
    h.world = world;
    unsigned char msg[LAUNCH_HEADER_LEN + LAUNCH_CLIENT_HELLO_LEN];
    cf_launch_header_put(msg, MSG_CLIENT_HELLO, LAUNCH_CLIENT_HELLO_LEN);
    cf_launch_client_hello_put(msg + LAUNCH_HEADER_LEN, &h);
    assert_true(write(fd, msg, sizeof msg) == (ssize_t)sizeof msg);
    unsigned char hdr[LAUNCH_HEADER_LEN];
    assert_int_equal(read_all(fd, hdr, sizeof hdr), 0);
    int type;
    uint32_t len;
    assert_int_equal(cf_launch_header_parse(hdr, 0, &type, &len), 0);
    assert_int_equal(type, MSG_REFUSE);
    assert_int_equal(len, LAUNCH_REFUSAL_LEN);
    assert_int_equal(read_all(fd, out, LAUNCH_REFUSAL_LEN), 0);
    close(fd);
}

static int has_bytes(const unsigned char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(hay + i, needle, k))
            return 1;
    return 0;
}

/* Hellos without the secret whose tag is "joined twice", or whose world
 * size differs, and 300 connections that never speak: the rendezvous neither ends
 * nor waits for them; each is counted as a stray; the refusals are bare codes. */
static void test_strangers_cannot_end_or_delay_the_rendezvous(void **state)
{
    int port, lfd = any_port(&port);
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t server = fork();
    if (server == 0) {
        close(report[0]);
        struct cf_launch_secret s = test_secret(9);
        struct cf_rdv_opts o = { "127.0.0.1", port, lfd, 0, 2, &s, "test", 10, 0 };
        struct cf_rdv *r;
        cf_error err = CF_ERROR_INIT;
        if (cf_rdv_open(&o, &r, &err) < 0) {
            fprintf(stderr, "rank 0: %s\n", cf_error_message(&err));
            _exit(1);
        }
        struct cf_launch_strays st = *cf_rdv_strays(r);
        _exit(write(report[1], &st, sizeof st) == (ssize_t)sizeof st ? 0 : 2);
    }
    close(lfd);
    close(report[1]);
    enum { SILENT = 300 };
    int silent[SILENT];
    for (int i = 0; i < SILENT; i++)
        silent[i] = tcp_to(port);
    unsigned char refusal[LAUNCH_REFUSAL_LEN];
    struct launch_refusal r;
    static const unsigned char zero[LAUNCH_MAC_LEN];
    stranger_hello(port, "joined twice", 1, 2, refusal); /* the tag that ended it (text matched "joined twice") */
    assert_int_equal(cf_launch_refusal_parse(refusal, sizeof refusal, &r), 0);
    assert_int_equal(r.code, CF_REFUSAL_WRONG_TAG);
    assert_int_equal(r.value, 0);
    assert_memory_equal(r.mac, zero, sizeof zero);
    assert_false(has_bytes(refusal, sizeof refusal, "test") || has_bytes(refusal, sizeof refusal, "joined"));
    stranger_hello(port, "test", 1, 3, refusal); /* another world size, unproved: not fatal */
    assert_int_equal(cf_launch_refusal_parse(refusal, sizeof refusal, &r), 0);
    assert_int_equal(r.code, CF_REFUSAL_BAD_MAC);
    assert_int_equal(r.value, 0); /* not even our world size */
    stranger_hello(port, "test", 0, 2, refusal); /* "rank 0 twice", unproved */
    assert_int_equal(cf_launch_refusal_parse(refusal, sizeof refusal, &r), 0);
    assert_int_equal(r.code, CF_REFUSAL_BAD_MAC);
    struct cf_launch_secret good = test_secret(9);
    struct cf_launch_peer peer;
    cf_error err = CF_ERROR_INIT;
    if (cf_launch_connect("127.0.0.1", port, "rank 0", &good, "test", 1, 2, 10, &peer, &err) < 0)
        fail_msg("the real rank 1: %s", cf_error_message(&err));
    close(peer.fd);
    assert_int_equal(exit_code(server), 0); /* joined within rank 0's 10 s: the 300 did not delay it */
    struct cf_launch_strays st;
    assert_int_equal(read_all(report[0], (unsigned char *)&st, sizeof st), 0);
    close(report[0]);
    assert_int_equal(st.count, SILENT + 3);
    assert_int_equal(st.kind[CF_STRAY_SILENT] + st.kind[CF_STRAY_EVICTED], SILENT);
    assert_int_equal(st.kind[CF_STRAY_WRONG_TAG], 1);
    assert_int_equal(st.kind[CF_STRAY_BAD_MAC], 2);
    assert_int_equal(st.n_addrs, 1);
    assert_string_equal(st.addrs[0].addr, "127.0.0.1");
    struct strbuf text = STRBUF_INIT;
    cf_launch_strays_describe(&st, &text);
    assert_non_null(strstr(cf_sb_str(&text), "303 connections never completed a handshake ("));
    assert_non_null(strstr(cf_sb_str(&text), "from 127.0.0.1 (303)"));
    cf_sb_release(&text);
    for (int i = 0; i < SILENT; i++)
        close(silent[i]);
}

/* A server that answers every hello with the refusal it is given (a forked child). */
static pid_t refusing_server(int lfd, unsigned code, uint32_t value, const struct cf_launch_secret *sign)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int c = accept(lfd, NULL, NULL);
    unsigned char nonce_s[LAUNCH_NONCE_LEN] = { 1, 2, 3 };
    unsigned char hdr[LAUNCH_HEADER_LEN], body[LAUNCH_CLIENT_HELLO_LEN];
    cf_launch_header_put(hdr, MSG_SERVER_HELLO, LAUNCH_NONCE_LEN);
    if (write(c, hdr, sizeof hdr) != (ssize_t)sizeof hdr || write(c, nonce_s, sizeof nonce_s) != sizeof nonce_s ||
        read_all(c, hdr, sizeof hdr) < 0 || read_all(c, body, sizeof body) < 0)
        _exit(1);
    struct launch_client_hello h;
    cf_launch_client_hello_parse(body, sizeof body, &h);
    struct launch_refusal r;
    memset(&r, 0, sizeof r);
    r.code = (unsigned char)code;
    r.value = value;
    if (sign)
        cf_launch_refusal_mac(sign, &h, nonce_s, &r);
    unsigned char out[LAUNCH_REFUSAL_LEN];
    cf_launch_refusal_put(out, &r);
    cf_launch_header_put(hdr, MSG_REFUSE, LAUNCH_REFUSAL_LEN);
    if (write(c, hdr, sizeof hdr) != (ssize_t)sizeof hdr || write(c, out, sizeof out) != (ssize_t)sizeof out)
        _exit(1);
    _exit(0);
}

/* The client believes a refusal's number only when the refusal proves the secret,
 * and words every refusal itself: a code it does not know is said to be one. */
static void test_client_trusts_only_authenticated_refusals(void **state)
{
    struct cf_launch_secret s = test_secret(6);
    static const struct {
        unsigned code;
        uint32_t value;
        int sign;
        const char *want, *never;
    } cases[] = {
        { CF_REFUSAL_WORLD, 7, 1, "world size mismatch: rank 0 runs 7 ranks, but rank 1 was started for 2", NULL },
        { CF_REFUSAL_WORLD, 7, 0, "refusal (code 4) that does not prove this run's secret", "7 ranks" },
        { CF_REFUSAL_TWICE, 0, 0, "does not prove this run's secret", "joined" },
        { CF_REFUSAL_BAD_MAC, 0, 0, "authentication failed", NULL },
        { 200, 0, 0, "for a reason this cclforge does not know (code 200)", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int port, lfd = any_port(&port);
        pid_t server = refusing_server(lfd, cases[i].code, cases[i].value, cases[i].sign ? &s : NULL);
        close(lfd);
        struct cf_launch_peer peer;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_launch_connect("127.0.0.1", port, "rank 0", &s, "test", 1, 2, 5, &peer, &err), -1);
        if (!strstr(cf_error_message(&err), cases[i].want) ||
            (cases[i].never && strstr(cf_error_message(&err), cases[i].never)))
            fail_msg("case %zu: %s", i, cf_error_message(&err));
        cf_error_clear(&err);
        assert_int_equal(exit_code(server), 0);
    }
}

static void test_waits_are_bounded(void **state)
{
    int port, lfd = any_port(&port);
    close(lfd); /* nobody listens there now */
    struct cf_launch_secret s = test_secret(4);
    struct cf_rdv_opts o = { "127.0.0.1", port, -1, 1, 2, &s, "test", 0.5, 0 };
    struct cf_rdv *r;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_rdv_open(&o, &r, &err), -1);
    expect_failure_words(&err, "rank 1 could not reach rank 0 at 127.0.0.1:");
    cf_error_clear(&err);
    /* rank 0 with ranks 2 and 3 missing names them */
    lfd = any_port(&port);
    pid_t kid = spawn_peer(port, 1, 4, 4, 5, "");
    struct cf_rdv_opts o0 = { "127.0.0.1", port, lfd, 0, 4, &s, "test", 1.0, 0 };
    assert_int_equal(cf_rdv_open(&o0, &r, &err), -1);
    expect_failure_words(&err, "2 of 3 ranks did not join within 1 s (missing ranks 2, 3)");
    cf_error_clear(&err);
    assert_true(exit_code(kid) != 0);
    /* a second rank 1 is a broken launch */
    lfd = any_port(&port);
    pid_t one = spawn_peer(port, 1, 3, 4, 5, "");
    sleep(1); /* the first is in before the second */
    pid_t two = spawn_peer(port, 1, 3, 4, 5, "");
    struct cf_rdv_opts o3 = { "127.0.0.1", port, lfd, 0, 3, &s, "test", 5, 0 };
    assert_int_equal(cf_rdv_open(&o3, &r, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "rank 1 joined twice"));
    cf_error_clear(&err);
    exit_code(one);
    exit_code(two);
}

static void test_wire_headers_are_bounded(void **state)
{
    unsigned char hdr[LAUNCH_HEADER_LEN];
    int type;
    uint32_t len;
    cf_launch_header_put(hdr, MSG_DATA, 100);
    assert_int_equal(cf_launch_header_parse(hdr, 100, &type, &len), 0);
    assert_int_equal(cf_launch_header_parse(hdr, 99, &type, &len), -1);
    cf_launch_header_put(hdr, MSG_SERVER_HELLO, LAUNCH_NONCE_LEN + 1);
    assert_int_equal(cf_launch_header_parse(hdr, 1 << 20, &type, &len), -1);
    cf_launch_header_put(hdr, 'Z', 1);
    assert_int_equal(cf_launch_header_parse(hdr, 1 << 20, &type, &len), -1);
    memcpy(hdr, "HTTP", 4);
    assert_int_equal(cf_launch_header_parse(hdr, 1 << 20, &type, &len), -1);
}

/* A port derived from the job id: the same for every rank of a job, and always
 * below Linux's ephemeral range (32768-60999), where an outgoing connection may
 * hold it; MASTER_PORT, when the launcher gave one, wins. */
static void test_derived_port_is_stable_and_below_ephemeral_range(void **state)
{
    (void)state;
    char *envp[] = { "OMPI_MCA_orte_num_nodes=1", NULL };
    struct cf_launch_info info;
    memset(&info, 0, sizeof info);
    info.launcher = "mpirun";
    char addr[64], how[256];
    int lo = 65536, hi = 0;
    for (int i = 0; i < 4000; i++) {
        snprintf(info.run_id, sizeof info.run_id, "%d", 1000 + i * 7919);
        int port = 0, again = 0;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_launch_rank0_where(&info, envp, addr, sizeof addr, &port, how, sizeof how, &err), 0);
        assert_int_equal(cf_launch_rank0_where(&info, envp, addr, sizeof addr, &again, how, sizeof how, &err), 0);
        assert_int_equal(port, again);
        assert_string_equal(addr, "127.0.0.1");
        lo = port < lo ? port : lo;
        hi = port > hi ? port : hi;
    }
    assert_true(lo >= 20000);
    assert_true(hi <= 32767);
    assert_true(hi - lo > 10000); /* spread over the range, not a few ports */
    info.master_port = 29500;
    info.port_from = "MASTER_PORT";
    int port = 0;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_launch_rank0_where(&info, envp, addr, sizeof addr, &port, how, sizeof how, &err), 0);
    assert_int_equal(port, 29500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launcher_detection_table),
        cmocka_unit_test(test_hmac_sha256_rfc4231),
        cmocka_unit_test(test_secret_from_env_or_derived),
        cmocka_unit_test(test_rendezvous_broadcasts),
        cmocka_unit_test(test_rendezvous_listens_on_every_address),
        cmocka_unit_test(test_rendezvous_refuses_another_world_size),
        cmocka_unit_test(test_peer_reports_refusals_in_the_servers_words),
        cmocka_unit_test(test_strays_do_not_take_a_place),
        cmocka_unit_test(test_strangers_cannot_end_or_delay_the_rendezvous),
        cmocka_unit_test(test_client_trusts_only_authenticated_refusals),
        cmocka_unit_test(test_waits_are_bounded),
        cmocka_unit_test(test_wire_headers_are_bounded),
        cmocka_unit_test(test_derived_port_is_stable_and_below_ephemeral_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
