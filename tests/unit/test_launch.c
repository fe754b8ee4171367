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

#include "cclforge/clock.h"
#include "cclforge/launch.h"
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

/* A forked peer: joins, sends "rank-R" in the gather, expects the broadcast, and exits
 * 0 on success, 10 + a step number on failure, writing the error to fd 2. */
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
    char mine[32];
    snprintf(mine, sizeof mine, "rank-%d", rank);
    struct cf_rdv_blob *all;
    if (cf_rdv_gather(r, mine, strlen(mine), &all, &err) < 0)
        _exit(12);
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

static void test_rendezvous_gathers_and_broadcasts(void **state)
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
    struct cf_rdv_blob *all;
    assert_int_equal(cf_rdv_gather(r, "rank-0", 6, &all, &err), 0);
    for (int i = 0; i < 4; i++) {
        char want[32];
        snprintf(want, sizeof want, "rank-%d", i);
        assert_int_equal(all[i].len, strlen(want));
        assert_memory_equal(all[i].data, want, strlen(want));
    }
    cf_rdv_blobs_free(all, 4);
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
    assert_int_equal(cf_launch_connect("127.0.0.2", port, &s, "test", 1, 2, 0.3, &peer, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "Connection refused"));
    cf_error_clear(&err);
    close(only);
}

static void expect_fast_failure(double t0, const cf_error *err, const char *words)
{
    double took = cf_now_seconds() - t0;
    if (took > 5)
        fail_msg("took %.1f s: %s", took, cf_error_message(err));
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
    double t0 = cf_now_seconds();
    assert_int_equal(cf_rdv_open(&o, &r, &err), -1);
    expect_fast_failure(t0, &err, "world size mismatch: rank 0 runs 2 ranks, but rank 1");
    assert_int_equal(exit_code(wrong_world), 11);
    assert_true(cf_now_seconds() - t0 < 5);
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
    double t0 = cf_now_seconds();
    assert_int_equal(cf_launch_connect("127.0.0.1", port, &bad, "test", 1, 2, 20, &peer, &err), -1);
    expect_fast_failure(t0, &err, "authentication failed");
    cf_error_clear(&err);
    struct cf_launch_secret good = test_secret(1);
    t0 = cf_now_seconds();
    assert_int_equal(cf_launch_connect("127.0.0.1", port, &good, "other", 1, 2, 20, &peer, &err), -1);
    expect_fast_failure(t0, &err, "serves cclforge 'test', not 'other'");
    cf_error_clear(&err);
    assert_int_equal(cf_launch_connect("127.0.0.1", port, &good, "test", 1, 2, 20, &peer, &err), 0);
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
    double t0 = cf_now_seconds();
    if (cf_rdv_open(&o, &r, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    assert_true(cf_now_seconds() - t0 < 5);
    struct cf_rdv_blob *all;
    assert_int_equal(cf_rdv_gather(r, "0", 1, &all, &err), 0);
    cf_rdv_blobs_free(all, 2);
    unsigned char *x = (unsigned char *)"x";
    size_t len = 1;
    assert_int_equal(cf_rdv_bcast(r, &x, &len, &err), 0);
    cf_rdv_close(r);
    assert_int_equal(exit_code(kid), 0);
    close(silent);
    close(noisy);
}

static void test_waits_are_bounded(void **state)
{
    int port, lfd = any_port(&port);
    close(lfd); /* nobody listens there now */
    struct cf_launch_secret s = test_secret(4);
    struct cf_rdv_opts o = { "127.0.0.1", port, -1, 1, 2, &s, "test", 0.5, 0 };
    struct cf_rdv *r;
    cf_error err = CF_ERROR_INIT;
    double t0 = cf_now_seconds();
    assert_int_equal(cf_rdv_open(&o, &r, &err), -1);
    expect_fast_failure(t0, &err, "rank 1 could not reach rank 0 at 127.0.0.1:");
    cf_error_clear(&err);
    /* rank 0 with ranks 2 and 3 missing names them */
    lfd = any_port(&port);
    pid_t kid = spawn_peer(port, 1, 4, 4, 5, "");
    struct cf_rdv_opts o0 = { "127.0.0.1", port, lfd, 0, 4, &s, "test", 1.0, 0 };
    t0 = cf_now_seconds();
    assert_int_equal(cf_rdv_open(&o0, &r, &err), -1);
    expect_fast_failure(t0, &err, "2 of 3 ranks did not join within 1 s (missing ranks 2, 3)");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launcher_detection_table),
        cmocka_unit_test(test_hmac_sha256_rfc4231),
        cmocka_unit_test(test_secret_from_env_or_derived),
        cmocka_unit_test(test_rendezvous_gathers_and_broadcasts),
        cmocka_unit_test(test_rendezvous_listens_on_every_address),
        cmocka_unit_test(test_rendezvous_refuses_another_world_size),
        cmocka_unit_test(test_peer_reports_refusals_in_the_servers_words),
        cmocka_unit_test(test_strays_do_not_take_a_place),
        cmocka_unit_test(test_waits_are_bounded),
        cmocka_unit_test(test_wire_headers_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
