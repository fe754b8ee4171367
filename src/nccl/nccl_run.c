/* Running an NCCL/RCCL build plan: cache check, per-target lock, fetch, build
 * with progress, verification, atomic install. */
#include "nccl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/atomic_file.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "cclforge/clock.h"

static void emit(const struct cf_nccl_build_opts *opts, int kind, const char *text, long done, long total)
{
    if (!opts->on_event)
        return;
    struct cf_nccl_event ev = { .kind = kind, .text = text, .done = done, .total = total };
    opts->on_event(opts->event_ctx, &ev);
}

/* Test-only fault injection (documented in docs/nccl-build.md): the process
 * dies by SIGKILL at the named point (CCLFORGE_TEST_FAULT), as a crash or
 * `kill -9` would, or stops there (CCLFORGE_TEST_STOP, SIGSTOP) so a test can
 * run another build in between and then continue this one. */
static void fault_point(const char *name)
{
    const char *kill_at = getenv("CCLFORGE_TEST_FAULT"), *stop_at = getenv("CCLFORGE_TEST_STOP");
    if (kill_at && !strcmp(kill_at, name))
        raise(SIGKILL);
    if (stop_at && !strcmp(stop_at, name))
        raise(SIGSTOP);
}

/* ---- cache ---- */

enum cache_state { CACHE_MISS, CACHE_HIT, CACHE_DAMAGED };

/* A hit needs equal inputs and an installed tree that is what its manifest
 * records (cheap: sizes and stamps, hashes of what changed; full: every hash). */
static enum cache_state cache_check(const struct cf_nccl_plan *plan, int full, char **damage)
{
    int fd = open(plan->target_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        struct stat st;
        if (lstat(plan->target_dir, &st) == 0) {
            *damage = cf_strdup("it is not a directory (a link or a file is there)");
            return CACHE_DAMAGED;
        }
        return CACHE_MISS;
    }
    struct nccl_manifest manifest;
    enum cache_state state = CACHE_MISS;
    if (cf_nccl_manifest_read_at(fd, &manifest) == 0) {
        cJSON *want = cf_nccl_plan_inputs(plan);
        if (manifest.inputs && cJSON_Compare(manifest.inputs, want, 1)) {
            struct strbuf why = STRBUF_INIT;
            state = cf_nccl_tree_check(fd, &manifest, full, &why) ? CACHE_DAMAGED : CACHE_HIT;
            if (state == CACHE_DAMAGED)
                *damage = cf_sb_detach(&why);
            cf_sb_release(&why);
        }
        cJSON_Delete(want);
    }
    cf_nccl_manifest_release(&manifest);
    close(fd);
    return state;
}

/* ---- the lock: flock on <root>/nccl/locks/<target>.lock ---- */

static int take_lock(const struct cf_nccl_plan *plan, const struct cf_nccl_build_opts *opts, int *fd_out,
                     cf_error *err)
{
    /* Not O_CLOEXEC on purpose: make, git and the compilers inherit the locked
     * file description, so if cclforge itself is killed the target stays
     * locked until its orphaned build processes are gone too. */
    int fd = cf_nccl_lock_open(plan->root, plan->target_name, 0, err);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno != EWOULDBLOCK) {
            close(fd);
            return cf_error_set(err, CF_ERR_IO, "%s: cannot lock: %s", plan->lock_path, strerror(errno));
        }
        char holder[64] = "";
        ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = 0;
        holder[strcspn(holder, "\n")] = 0;
        if (opts->no_wait) {
            close(fd);
            return cf_error_set(err, CF_ERR_FAILED,
                                "another build of %s is running (pid %s, lock %s); wait for it or drop --no-wait",
                                plan->target_name, holder[0] ? holder : "?", plan->lock_path);
        }
        char *why = cf_asprintf("another build of %s is running (pid %s); waiting for it to finish",
                                plan->target_name, holder[0] ? holder : "?");
        emit(opts, CF_NCCL_EV_WAIT, why, 0, 0);
        free(why);
        while (flock(fd, LOCK_EX) < 0) {
            if (errno != EINTR) {
                close(fd);
                return cf_error_set(err, CF_ERR_IO, "%s: cannot lock: %s", plan->lock_path, strerror(errno));
            }
        }
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)len, 0) < 0) {
        /* the pid is only a hint for the waiting message */
    }
    *fd_out = fd;
    return 0;
}

/* ---- progress: "Compiling" lines out of an estimated total ---- */

struct progress_ctx {
    const struct cf_nccl_build_opts *opts;
    const struct cf_nccl_plan *plan;
    long done, total_sources, generated;
    int gen_seen, sym_seen;
};

static int is_unit_source(const char *name)
{
    return cf_ends_with(name, ".cc") || cf_ends_with(name, ".cpp") || cf_ends_with(name, ".cu");
}

/* Parts of a source tree that the library build does not compile: other
 * platforms' files and stubs, tests, examples, docs. */
static const char *const unbuilt_fragments[] = { "windows", "stub", "test", "example", "docs" };

static int looks_unbuilt(const char *name)
{
    for (size_t i = 0; i < sizeof unbuilt_fragments / sizeof unbuilt_fragments[0]; i++)
        if (strcasestr(name, unbuilt_fragments[i]))
            return 1;
    return 0;
}

/* Sources under dir, recursively (bounded depth): the first estimate of units. */
static long count_sources(const char *dir, int depth)
{
    if (depth > 8)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || looks_unbuilt(e->d_name))
            continue;
        char *p = cf_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                n += count_sources(p, depth + 1);
            else if (S_ISREG(st.st_mode) && is_unit_source(e->d_name))
                n++;
        }
        free(p);
    }
    closedir(d);
    return n;
}

/* NCCL builds only what is under src/ for src.build; elsewhere the whole tree. */
static long estimate_units(const char *src_dir)
{
    char *src = cf_path_join(src_dir, "src");
    long n = cf_is_dir(src) ? count_sources(src, 0) : count_sources(src_dir, 0);
    free(src);
    return n;
}

/* NCCL's generator lists the kernels it wrote in rules.mk, on the
 * "LIB_OBJS_GEN = $(patsubst ...,a.cu b.cc)" line (LIB_OBJS_SYM_GEN for the
 * symmetric kernels); the per-file rules below it name them again. */
static long count_generated(const char *rules_mk)
{
    struct strbuf text = STRBUF_INIT;
    long n = 0;
    if (cf_read_file(rules_mk, 1 << 22, &text, NULL) == 0) {
        struct strvec lines = STRVEC_INIT;
        cf_strvec_split(&lines, cf_sb_str(&text), "\n", 0);
        for (size_t l = 0; l < lines.n; l++) {
            if (!cf_starts_with(lines.v[l], "LIB_OBJS"))
                continue;
            struct strvec words = STRVEC_INIT;
            cf_strvec_split(&words, lines.v[l], " \t,()", 0);
            for (size_t i = 0; i < words.n; i++)
                if (cf_ends_with(words.v[i], ".cu") || cf_ends_with(words.v[i], ".cc"))
                    n++;
            cf_strvec_clear(&words);
        }
        cf_strvec_clear(&lines);
    }
    cf_sb_release(&text);
    return n;
}

static void check_generated(struct progress_ctx *p)
{
    static const char *const rules[] = { "obj/device/gensrc/rules.mk", "obj/device/gensrc/symmetric/rules.mk" };
    int *seen[] = { &p->gen_seen, &p->sym_seen };
    for (int i = 0; i < 2; i++) {
        if (*seen[i])
            continue;
        char *path = cf_path_join(p->plan->build_dir, rules[i]);
        if (cf_is_file(path)) {
            *seen[i] = 1;
            p->generated += count_generated(path);
        }
        free(path);
    }
}

static void on_build_line(void *ctx, const char *line)
{
    struct progress_ctx *p = ctx;
    /* NCCL prints "Compiling  x.cc > obj" (host) and "Compiling      y.cu" (device);
     * CMake prints "[ 42%] Building CXX object ...". */
    int unit = cf_starts_with(line, "Compiling") ||
               (line[0] == '[' && (strstr(line, "Building CXX object") || strstr(line, "Building HIP object") ||
                                   strstr(line, "Building C object")));
    if (!unit)
        return;
    if (p->plan->vendor->comm->lib == CF_COMMLIB_NCCL) /* NCCL generates kernel sources as it builds */
        check_generated(p);
    p->done++;
    long total = p->total_sources + p->generated;
    if (total < p->done)
        total = p->done;
    const char *label = strstr(line, " object ");
    if (label) {
        label += strlen(" object ");
    } else {
        label = line + strcspn(line, " ");
        while (*label == ' ')
            label++;
    }
    emit(p->opts, CF_NCCL_EV_UNITS, label, p->done, total);
}

/* ---- running one step ---- */

static void quote_argv(const struct strvec *argv, struct strbuf *out)
{
    for (size_t i = 0; i < argv->n; i++) {
        if (i)
            cf_sb_addc(out, ' ');
        cf_shell_quote(argv->v[i], out);
    }
}

static void log_append(const char *log, const char *text)
{
    int fd = cf_open_log(log, 1, NULL);
    if (fd < 0)
        return;
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) {
        /* the log is best effort; the build result does not depend on it */
    }
    close(fd);
}

static void log_tail(const char *log, int lines, struct strbuf *out)
{
    struct strbuf text = STRBUF_INIT;
    if (cf_read_file(log, (size_t)1 << 30, &text, NULL) == 0) {
        cf_sb_rtrim(&text);
        const char *start = text.buf + text.len;
        int seen = 0;
        while (start > text.buf && seen <= lines) {
            start--;
            if (*start == '\n')
                seen++;
        }
        if (*start == '\n')
            start++;
        cf_sb_adds(out, start);
    }
    cf_sb_release(&text);
}

static int run_step(const struct cf_nccl_plan *plan, const struct cf_nccl_build_opts *opts, const struct strvec *argv,
                    struct progress_ctx *progress, struct nccl_built *built, struct cf_nccl_build_result *result,
                    const char *what, cf_error *err)
{
    struct strbuf line = STRBUF_INIT;
    quote_argv(argv, &line);
    cf_strvec_push(&built->commands, cf_sb_str(&line));
    char *header = cf_asprintf("$ %s\n", cf_sb_str(&line));
    log_append(plan->log_path, header);
    free(header);
    emit(opts, CF_NCCL_EV_STEP, cf_sb_str(&line), 0, 0);
    cf_sb_release(&line);

    struct cf_spawn_opts so;
    memset(&so, 0, sizeof so);
    so.merge_stderr = 1;
    so.null_stdin = 1;
    so.log_path = plan->log_path;
    so.capture_limit = 1 << 16;
    so.on_line = progress ? on_build_line : NULL;
    so.line_ctx = progress;
    so.env_set = cf_nccl_git_env;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    if (cf_spawn_run((const char *const *)argv->v, &so, &r, err) < 0)
        return cf_error_prefix(err, "%s", what);
    int rc = 0;
    if (!cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        log_tail(plan->log_path, 25, &result->log_tail);
        rc = cf_error_set(err, CF_ERR_FAILED, "%s failed (%s); full log: %s", what, how, plan->log_path);
        free(how);
    }
    cf_spawn_result_release(&r);
    return rc;
}

static char *capture_git_head(const char *dir)
{
    const char *argv[] = { "git", "-C", dir, "rev-parse", "HEAD", NULL };
    char *c = cf_capture(argv, 10);
    if (c && strlen(c) != 40) {
        free(c);
        c = NULL;
    }
    return c;
}

static int fetch_source(const struct cf_nccl_plan *plan, const struct cf_nccl_build_opts *opts,
                        const struct cf_nccl_steps *steps, struct nccl_built *built, struct cf_nccl_build_result *result,
                        cf_error *err)
{
    if (plan->source_kind == CF_SRC_DIR) {
        built->source_commit = capture_git_head(plan->src_dir);
        return 0;
    }
    if (cf_rm_rf(plan->src_dir, err) < 0 || cf_mkdir_p(plan->src_dir, 0755, err) < 0)
        return -1;
    if (plan->source_kind == CF_SRC_TARBALL) {
        char hex[65];
        if (cf_sha256_file(plan->source, hex, err) < 0)
            return -1;
        built->source_sha256 = cf_strdup(hex);
        return run_step(plan, opts, &steps->fetch, NULL, built, result, "extracting the source tarball", err);
    }
    char *what = cf_asprintf("cloning %s at %s", plan->source, plan->tag_text);
    int rc = run_step(plan, opts, &steps->fetch, NULL, built, result, what, err);
    free(what);
    if (rc < 0) {
        const char *tail = cf_sb_str(&result->log_tail);
        if (strstr(tail, "Could not resolve host") || strstr(tail, "unable to access") ||
            strstr(tail, "Connection timed out") || strstr(tail, "Failed to connect"))
            cf_error_prefix(err, "cannot reach %s (no network or a proxy is needed); pass --source DIR|TARBALL "
                                 "with a copy of the source",
                            plan->source);
        else if (strstr(tail, "not found in upstream") || strstr(tail, "Remote branch"))
            cf_error_prefix(err, "tag %s does not exist in %s", plan->tag_text, plan->source);
        return -1;
    }
    built->source_commit = capture_git_head(plan->src_dir);
    return 0;
}

/* ---- Docker mode: private dir with the Dockerfile and an empty context ---- */

static int docker_build(const struct cf_nccl_plan *plan, const struct cf_nccl_build_opts *opts,
                        struct nccl_built *built, struct cf_nccl_build_result *result, cf_error *err)
{
    char *dir = cf_mkdtemp(NULL, "cclforge-docker-", err);
    if (!dir)
        return -1;
    struct cf_nccl_steps steps;
    cf_nccl_plan_steps(plan, dir, &steps);
    char *dockerfile = cf_path_join(dir, "Dockerfile"), *context = cf_path_join(dir, "empty-context");
    int rc = cf_write_file_atomic(dockerfile, plan->dockerfile, strlen(plan->dockerfile), err);
    if (rc == 0)
        rc = cf_mkdir_p(context, 0700, err);
    if (rc == 0)
        rc = cf_mkdir_p(plan->build_dir, 0755, err);
    static const char *const whats[] = { "docker build", "docker create", "docker cp" };
    for (size_t i = 0; rc == 0 && i < steps.n_build; i++)
        rc = run_step(plan, opts, &steps.build[i], NULL, built, result, whats[i], err);
    /* Clean up on every path: the container and image are ours alone (unique names). */
    for (size_t i = 0; i < steps.n_cleanup; i++) {
        struct cf_spawn_opts so;
        memset(&so, 0, sizeof so);
        so.null_stdin = 1;
        so.capture_stdout = 1;
        so.capture_stderr = 1;
        so.timeout_s = 120;
        struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
        if (cf_spawn_run((const char *const *)steps.cleanup[i].v, &so, &r, NULL) == 0)
            cf_spawn_result_release(&r);
    }
    cf_rm_rf(dir, NULL);
    cf_nccl_steps_release(&steps);
    free(dockerfile);
    free(context);
    free(dir);
    return rc;
}

/* ---- locating the built library ---- */

/* NCCL's make puts lib/libnccl.so.X.Y.Z (and its soname link) in BUILDDIR;
 * RCCL's CMake build puts librccl.so.1 at the top of the build tree or in lib/. */
static char *find_library(const struct cf_nccl_plan *plan)
{
    const struct cf_comm_profile *comm = plan->vendor->comm;
    struct strvec places = STRVEC_INIT;
    if (comm->lib == CF_COMMLIB_NCCL) {
        cf_strvec_pushf(&places, "lib/%s.%d.%d.%d", comm->stem, plan->tag.major, plan->tag.minor, plan->tag.patch);
        cf_strvec_pushf(&places, "lib/%s", comm->soname);
    } else {
        cf_strvec_push(&places, comm->soname);
        cf_strvec_pushf(&places, "lib/%s", comm->soname);
        cf_strvec_push(&places, comm->stem);
        cf_strvec_pushf(&places, "lib/%s", comm->stem);
    }
    char *found = NULL;
    for (size_t i = 0; i < places.n && !found; i++) {
        char *p = cf_path_join(plan->build_dir, places.v[i]);
        if (cf_is_file(p))
            found = p;
        else
            free(p);
    }
    cf_strvec_clear(&places);
    return found;
}

/* ---- install ---- */

static void built_release(struct nccl_built *b)
{
    free(b->source_commit);
    free(b->source_sha256);
    free(b->library_rel);
    free(b->library_sha256);
    cJSON_Delete(b->files);
    cf_strvec_clear(&b->commands);
}

static void verify_failure(const struct cf_nccl_verify *v, const char *library, cf_error *err)
{
    struct strbuf msg = STRBUF_INIT;
    cf_sb_addf(&msg, "the built library %s failed verification, nothing was installed:", library);
    for (size_t i = 0; i < v->problems.n; i++)
        cf_sb_addf(&msg, "\n  - %s", v->problems.v[i]);
    cf_error_set(err, CF_ERR_FAILED, "%s", cf_sb_str(&msg));
    cf_sb_release(&msg);
}

static int build_locked(const struct cf_nccl_plan *plan, const struct cf_nccl_build_opts *opts,
                        struct cf_nccl_build_result *result, cf_error *err)
{
    struct nccl_built built;
    memset(&built, 0, sizeof built);
    built.verify = &result->verify;
    struct cf_nccl_steps steps;
    cf_nccl_plan_steps(plan, "", &steps);
    char *library = NULL;
    struct nccl_stage stage = { .parent_fd = -1, .fd = -1 };
    int rc = -1;

    cf_nccl_clean_stale(plan->root, plan->target_name);
    if (cf_mkdir_p(plan->work_dir, 0755, err) < 0 || cf_rm_rf(plan->build_dir, err) < 0)
        goto out;
    unlink(plan->log_path);
    result->log_path = cf_strdup(plan->log_path);

    double t0 = cf_now_seconds();
    if (!plan->docker) {
        emit(opts, CF_NCCL_EV_STEP, "fetching the source", 0, 0);
        if (fetch_source(plan, opts, &steps, &built, result, err) < 0)
            goto out;
        struct progress_ctx progress;
        memset(&progress, 0, sizeof progress);
        progress.opts = opts;
        progress.plan = plan;
        progress.total_sources = estimate_units(plan->src_dir);
        for (size_t i = 0; i < steps.n_build; i++) {
            const char *what = plan->vendor->comm->lib == CF_COMMLIB_NCCL ? "make" : i == 0 ? "cmake configure" : "cmake build";
            if (run_step(plan, opts, &steps.build[i], &progress, &built, result, what, err) < 0)
                goto out;
        }
    } else if (docker_build(plan, opts, &built, result, err) < 0) {
        goto out;
    }
    built.build_seconds = cf_now_seconds() - t0;
    result->build_seconds = built.build_seconds;
    fault_point("after-build");

    library = find_library(plan);
    if (!library) {
        log_tail(plan->log_path, 25, &result->log_tail);
        cf_error_set(err, CF_ERR_FAILED, "the build finished but produced no %s under %s; full log: %s",
                     plan->vendor->comm->soname, plan->build_dir, plan->log_path);
        goto out;
    }
    emit(opts, CF_NCCL_EV_STEP, "verifying the library", 0, 0);
    if (cf_nccl_verify_library(plan, library, &result->verify, err) < 0)
        goto out;
    if (result->verify.problems.n) {
        verify_failure(&result->verify, library, err);
        goto out;
    }

    emit(opts, CF_NCCL_EV_STEP, "installing", 0, 0);
    if (cf_nccl_stage_begin(plan, &stage, err) < 0 || cf_nccl_stage_layout(plan, &stage, library, &built, err) < 0)
        goto out;
    fault_point("staged");
    if (cf_nccl_stage_check(&stage, err) < 0)
        goto out;
    fault_point("before-rename");
    if (cf_nccl_stage_install(plan, &stage, err) < 0)
        goto out;
    result->target_dir = cf_strdup(plan->target_dir);
    rc = 0;
out:
    cf_nccl_stage_end(&stage, 1);
    free(library);
    cf_nccl_steps_release(&steps);
    built_release(&built);
    return rc;
}

int cf_nccl_build_run(const struct cf_nccl_plan *plan, const struct cf_nccl_build_opts *opts,
                      struct cf_nccl_build_result *result, cf_error *err)
{
    memset(result, 0, sizeof *result);
    double t0 = cf_now_seconds();
    if (cf_nccl_root_prepare(plan->root, err) < 0)
        return -1;
    cf_nccl_clean_stale(plan->root, NULL);
    if (!opts->force && cache_check(plan, opts->verify, &result->damage) == CACHE_HIT) {
        result->cache_hit = 1;
        result->target_dir = cf_strdup(plan->target_dir);
        result->total_seconds = cf_now_seconds() - t0;
        return 0;
    }
    int lock_fd = -1;
    if (take_lock(plan, opts, &lock_fd, err) < 0)
        return -1;
    int rc;
    /* Whoever held the lock may just have installed (or repaired) the same build. */
    char *damage_now = NULL;
    if (!opts->force && cache_check(plan, opts->verify, &damage_now) == CACHE_HIT) {
        result->cache_hit = 1;
        result->target_dir = cf_strdup(plan->target_dir);
        free(result->damage);
        result->damage = NULL;
        rc = 0;
    } else {
        if (damage_now) {
            free(result->damage);
            result->damage = damage_now;
            damage_now = NULL;
        }
        rc = build_locked(plan, opts, result, err);
    }
    free(damage_now);
    close(lock_fd);
    result->total_seconds = cf_now_seconds() - t0;
    return rc;
}

void cf_nccl_build_result_release(struct cf_nccl_build_result *r)
{
    free(r->target_dir);
    free(r->damage);
    free(r->log_path);
    cf_nccl_verify_release(&r->verify);
    cf_sb_release(&r->log_tail);
    memset(r, 0, sizeof *r);
}
