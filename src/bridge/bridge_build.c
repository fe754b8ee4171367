/* `bridge build`: compile and link the bridge with argv spawns (natively or in
 * a container), lay it out as it will be installed (<a/b/c>/<module><EXT_SUFFIX>,
 * bundled libraries in <a/b/c>/lib; with --into also at its place in the
 * package's own tree), then check the result there without loading it
 * (bridge_inspect.c). Every object file is cached under the cclforge home by
 * a key over the compiler, the compile command and every file the
 * preprocessor reads (bridge_objcache.c), so the same inputs compile once. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge/bridge_internal.h"
#include "cclforge/atomic_file.h"
#include "cclforge/clock.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/spawn.h"

void cf_bridge_compile_argv(const struct cf_bridge_plan *p, const char *source, const char *object,
                            struct strvec *argv)
{
    cf_strvec_push(argv, p->docker ? "g++" : p->cxx.value ? p->cxx.value : "g++");
    cf_bridge_preprocessor_flags(p, argv);
    if (p->guard.value && !strcmp(source, p->guard.value))
        cf_bridge_guard_flags(p, argv);
    cf_strvec_push(argv, "-O2");
    cf_strvec_push(argv, "-fPIC");
    /* only PyInit_<name> needs to be visible */
    cf_strvec_push(argv, "-fvisibility=hidden");
    cf_strvec_push(argv, "-c");
    cf_strvec_push(argv, source);
    cf_strvec_push(argv, "-o");
    cf_strvec_push(argv, object);
}

void cf_bridge_link_argv(const struct cf_bridge_plan *p, const char *object, const struct strvec *more_objects,
                         const char *guard_object, const char *output, struct strvec *argv)
{
    cf_strvec_push(argv, p->docker ? "g++" : p->cxx.value ? p->cxx.value : "g++");
    cf_strvec_push(argv, "-shared");
    cf_strvec_push(argv, "-o");
    cf_strvec_push(argv, output);
    cf_strvec_push(argv, object);
    for (size_t i = 0; more_objects && i < more_objects->n; i++)
        cf_strvec_push(argv, more_objects->v[i]);
    cf_strvec_push(argv, guard_object);
    /* exactly the planned libraries become NEEDED, by their file names */
    cf_strvec_push(argv, "-Wl,--no-as-needed");
    for (size_t i = 0; i < p->n_libs; i++) {
        if (!p->libs[i].path)
            continue;
        char *dir = cf_dirname(p->libs[i].path);
        cf_strvec_pushf(argv, "-L%s", dir);
        cf_strvec_pushf(argv, "-l:%s", cf_basename(p->libs[i].path));
        free(dir);
    }
    cf_strvec_push(argv, "-Wl,--as-needed");
    /* DT_RPATH, as torch's own libraries have: searched before LD_LIBRARY_PATH
     * and for the vendor libraries' own NEEDED too (their siblings in lib_dcu) */
    cf_strvec_push(argv, "-Wl,--disable-new-dtags");
    for (size_t i = 0; i < p->n_rpath; i++)
        cf_strvec_pushf(argv, "-Wl,-rpath,%s", p->rpath[i].value);
}

struct strvec *cf_bridge_plan_commands(const struct cf_bridge_plan *p, size_t *n)
{
    size_t more = p->more_sources.n;
    struct strvec *v = cf_xcalloc(more + 3, sizeof *v);
    cf_bridge_compile_argv(p, p->source.value, p->object, &v[0]);
    for (size_t i = 0; i < more; i++)
        cf_bridge_compile_argv(p, p->more_sources.v[i], p->more_objects.v[i], &v[1 + i]);
    cf_bridge_compile_argv(p, p->guard.value, p->guard_object, &v[more + 1]);
    cf_bridge_link_argv(p, p->object, &p->more_objects, p->guard_object, p->output, &v[more + 2]);
    *n = more + 3;
    return v;
}

void cf_bridge_mkdir_argv(const struct cf_bridge_plan *p, struct strvec *argv)
{
    cf_strvec_push(argv, "mkdir");
    cf_strvec_push(argv, "-p");
    cf_strvec_push(argv, "--");
    cf_strvec_pushf(argv, "%s/%s", p->out_dir, p->package_dir);
}

void cf_bridge_commands_free(struct strvec *cmds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cf_strvec_clear(&cmds[i]);
    free(cmds);
}

static void mount_ro(struct strvec *argv, struct strvec *seen, const char *dir)
{
    if (!dir || cf_strvec_contains(seen, dir))
        return;
    cf_strvec_push(seen, dir);
    cf_strvec_push(argv, "--volume");
    cf_strvec_pushf(argv, "%s:%s:ro", dir, dir);
}

void cf_bridge_docker_argv(const struct cf_bridge_plan *p, const char *work_dir, const struct strvec *inner,
                           struct strvec *argv)
{
    struct strvec seen = STRVEC_INIT;
    cf_strvec_push(argv, "docker");
    cf_strvec_push(argv, "run");
    cf_strvec_push(argv, "--rm");
    cf_strvec_push(argv, "--network=none");
    cf_strvec_pushf(argv, "--user=%u:%u", (unsigned)getuid(), (unsigned)getgid());
    /* every input at its own path, so the command line is the native one */
    for (size_t i = 0; i < p->n_includes; i++)
        mount_ro(argv, &seen, p->includes[i].value);
    for (size_t i = 0; i < p->n_libs; i++) {
        char *d = p->libs[i].path ? cf_dirname(p->libs[i].path) : NULL;
        mount_ro(argv, &seen, d);
        free(d);
    }
    char *src_dir = p->source.value ? cf_dirname(p->source.value) : NULL;
    mount_ro(argv, &seen, src_dir);
    free(src_dir);
    char *guard_dir = p->guard.value ? cf_dirname(p->guard.value) : NULL;
    mount_ro(argv, &seen, guard_dir);
    free(guard_dir);
    cf_strvec_push(argv, "--volume");
    cf_strvec_pushf(argv, "%s:%s", work_dir, work_dir);
    cf_strvec_push(argv, "--workdir");
    cf_strvec_push(argv, work_dir);
    cf_strvec_push(argv, p->docker);
    for (size_t i = 0; i < inner->n; i++)
        cf_strvec_push(argv, inner->v[i]);
    cf_strvec_clear(&seen);
}

static int copy_file(const char *from, const char *to, unsigned mode, cf_error *err)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = cf_read_file(from, (size_t)4 << 30, &sb, err);
    if (rc == 0)
        rc = cf_write_file_at(AT_FDCWD, to, sb.buf ? sb.buf : "", sb.len, mode, err);
    cf_sb_release(&sb);
    return rc;
}

/* A line appended to the build log (never through a link: cf_open_log). */
static void log_line(const char *log, const char *text)
{
    cf_error err = CF_ERROR_INIT;
    int fd = cf_open_log(log, 1, &err);
    if (fd >= 0) {
        size_t len = strlen(text);
        ssize_t w = write(fd, text, len);
        (void)w;
        close(fd);
    }
    cf_error_clear(&err);
}

/* "$ argv..." as a shell would show it: what was run, in the log. */
static void log_command(const char *log, const struct strvec *argv)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_adds(&sb, "$");
    for (size_t i = 0; i < argv->n; i++) {
        int plain = argv->v[i][0] && strcspn(argv->v[i], " \t\"'$\\") == strlen(argv->v[i]);
        cf_sb_addf(&sb, plain ? " %s" : " '%s'", argv->v[i]);
    }
    cf_sb_adds(&sb, "\n");
    log_line(log, sb.buf);
    cf_sb_release(&sb);
}

static int run_logged(const struct strvec *argv, const char *log, double *seconds, const char *what, cf_error *err)
{
    log_command(log, argv);
    struct cf_spawn_opts so = { 0 };
    so.merge_stderr = 1;
    so.capture_stdout = 1;
    so.capture_limit = 64 * 1024;
    so.log_path = log;
    so.null_stdin = 1;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    double t0 = cf_now_seconds();
    int rc = cf_spawn_run((const char *const *)argv->v, &so, &r, err);
    *seconds = cf_now_seconds() - t0;
    char *done = cf_asprintf("# %s: %s after %.1f s\n", what, rc == 0 && cf_spawn_ok(&r) ? "done" : "FAILED", *seconds);
    log_line(log, done);
    free(done);
    if (rc < 0 && !strcmp(argv->v[0], "docker"))
        cf_error_prefix(err, "--docker: the containerised build has not run");
    if (rc == 0 && !cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        const char *out = cf_sb_str(&r.out);
        size_t len = strlen(out);
        cf_error_set(err, CF_ERR_FAILED, "%s failed (%s); full log: %s\n%s", what, how, log,
                     len > 3000 ? out + len - 3000 : out);
        /* 125: docker run itself failed (no engine, no image), not the compiler */
        if (!strcmp(argv->v[0], "docker") && r.exited && r.exit_code == 125)
            cf_error_prefix(err, "--docker: docker could not start the container, the containerised build has not "
                                 "run (is the docker engine running and the image reachable?)");
        free(how);
        rc = -1;
    }
    cf_spawn_result_release(&r);
    return rc;
}

static int write_text(const char *path, const char *text, cf_error *err)
{
    return cf_write_file_atomic(path, text, strlen(text), err);
}

/* The object cache's key of one compile (argv) over the files it reads: for
 * the bridge's source, those the plan's proof read; for the guard, the same but
 * the bridge's source; for the other sources, those the compiler's dependency
 * rule names (scanned here, as the proof never read them). NULL when unproven,
 * unreadable or in a container (compiled every time rather than served stale);
 * *n_files is how many files it covers. */
static char *object_key(const struct cf_bridge_plan *p, const char *source, const struct strvec *argv,
                        const char *work, size_t *n_files)
{
    if (p->docker)
        return NULL;
    struct strvec files = STRVEC_INIT;
    if (cf_strvec_contains(&p->more_sources, source)) {
        cf_error err = CF_ERROR_INIT;
        if (cf_bridge_files_read(argv, source, work, &files, &err) < 0)
            cf_strvec_clear(&files);
        cf_error_clear(&err);
    } else if (p->proof_files.n) {
        cf_strvec_push(&files, source);
        for (size_t i = 0; i < p->proof_files.n; i++)
            if (strcmp(p->proof_files.v[i], p->source.value) != 0)
                cf_strvec_push(&files, p->proof_files.v[i]);
        /* the guard: the header it measures, whether or not the bridge includes it */
        if (strcmp(source, p->source.value) != 0)
            cf_strvec_pushf(&files, "%s/include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp", p->torch_dir.value);
    }
    char *compiler = cf_asprintf("%s %s", p->cxx.value, p->cxx_version ? p->cxx_version : "?");
    char *key = files.n ? cf_bridge_object_key(compiler, argv, source, &files) : NULL;
    *n_files = files.n;
    free(compiler);
    cf_strvec_clear(&files);
    return key;
}

/* A failed ABI guard, in words: the two sizes from the compiler's message
 * (its template arguments) and the header that decides each. NULL when the
 * log says nothing of the guard. */
static char *guard_failure(const struct cf_bridge_plan *p, const char *log_text)
{
    static const struct {
        const char *tmpl, *what, *header;
    } facts[] = {
        { "cclforge_abi_options_size<", "ProcessGroupNCCL::Options", "nccl" },
        { "cclforge_abi_process_group_size<", "ProcessGroupNCCL", "torch" },
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        const char *at = strstr(log_text, facts[i].tmpl);
        long headers, libtorch;
        if (!at || sscanf(at + strlen(facts[i].tmpl), "%ld, %ld", &headers, &libtorch) != 2)
            continue;
        const struct cf_bridge_header *h = p->headers[0].path ? &p->headers[0] : &p->headers[1];
        const struct cf_bridge_lib *gpu = cf_bridge_lib_role(p, CF_BRIDGE_LINK_TORCH_GPU);
        char *hdr = !strcmp(facts[i].header, "nccl")
                        ? cf_asprintf("%s (NCCL %s, the nccl.h the preprocessor resolved)", h->path ? h->path : "nccl.h",
                                      h->version ? h->version : "?")
                        : cf_asprintf("%s/include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp (torch %s)",
                                      p->torch_dir.value, p->torch_version ? p->torch_version : "?");
        char *msg = cf_asprintf("the ABI guard failed: sizeof(c10d::%s) is %ld bytes with the header %s but %ld in "
                                "%s, which the bridge links; nothing was built. Compile against the headers that "
                                "libtorch was built from (--include DIR first, --nccl-home, --torch-headers) or "
                                "drop the --define that changes the layout",
                                facts[i].what, headers, hdr, libtorch, gpu && gpu->path ? gpu->path : "libtorch");
        free(hdr);
        return msg;
    }
    return NULL;
}

/* One object: from the cache when its key has a whole entry, else compiled
 * (and stored). *cached is the entry used or stored, else NULL. */
static int compile_cached(const struct cf_bridge_plan *p, const char *source, const char *object, const char *what,
                          struct cf_bridge_build_result *res, const char *work, int *hit, char **cached,
                          cf_error *err)
{
    struct strvec argv = STRVEC_INIT, outer = STRVEC_INIT;
    cf_bridge_compile_argv(p, source, object, &argv);
    size_t n_files = 0;
    char *key = object_key(p, source, &argv, work, &n_files);
    char *root = key ? cf_cache_root_usable(NULL) : NULL; /* no safe cache root: no cache */
    char *entry = root ? cf_asprintf("%s/bridge/objects-v2/%s.o", root, key) : NULL;
    int rc = entry ? cf_bridge_objcache_get(entry, object, err) : 0;
    *hit = rc == 1;
    *cached = NULL;
    if (*hit) {
        rc = 0;
        *cached = cf_strdup(entry);
        char *line = cf_asprintf("# %s: object cache hit %s (same compiler, command and %zu input files)\n", what,
                                 entry, n_files);
        log_line(res->log_path, line);
        free(line);
    } else if (rc == 0) {
        double seconds = 0;
        if (p->docker)
            cf_bridge_docker_argv(p, work, &argv, &outer);
        rc = run_logged(p->docker ? &outer : &argv, res->log_path, &seconds, what, err);
        res->compile_seconds += seconds;
        cf_error cerr = CF_ERROR_INIT;
        /* a cache that cannot be written costs the next build time, not this one */
        if (rc == 0 && entry && cf_bridge_objcache_put(entry, object, &cerr) == 0)
            *cached = cf_strdup(entry);
        cf_error_clear(&cerr);
    }
    cf_strvec_clear(&argv);
    cf_strvec_clear(&outer);
    free(key);
    free(root);
    free(entry);
    return rc;
}

/* What `bridge wheel` needs to package this build without rebuilding it. */
static int write_manifest(const struct cf_bridge_plan *p, const char *abs_out, cf_error *err)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.bridge-build/2");
    cJSON_AddStringToObject(doc, "module", p->module_name);
    cJSON_AddStringToObject(doc, "package", p->package);
    cJSON_AddStringToObject(doc, "package_dir", p->package_dir);
    cJSON_AddStringToObject(doc, "vendor", cf_vendor_get(p->vendor)->word);
    cJSON_AddStringToObject(doc, "python_tag", p->python_tag ? p->python_tag : "");
    cJSON_AddStringToObject(doc, "extension", p->output_name);
    if (p->torch_version)
        cJSON_AddStringToObject(doc, "torch_version", p->torch_version);
    cJSON *ext = cJSON_AddArrayToObject(doc, "externals");
    for (size_t i = 0; i < p->n_rpath; i++) {
        const char *e = p->rpath[i].value;
        if (!strcmp(e, "$ORIGIN/lib"))
            continue;
        /* site-packages relative: strip $ORIGIN and one ".." per package level */
        char *abs = cf_asprintf("/%s%s", p->package_dir, e + strlen("$ORIGIN"));
        int escaped = 0;
        char *norm = cf_path_normalize(abs, &escaped);
        if (!escaped && norm[1])
            cJSON_AddItemToArray(ext, cJSON_CreateString(norm + 1));
        free(abs);
        free(norm);
    }
    cJSON *bundled = cJSON_AddArrayToObject(doc, "bundled");
    for (size_t i = 0; i < p->bundle_libs.n; i++)
        cJSON_AddItemToArray(bundled, cJSON_CreateString(cf_basename(p->bundle_libs.v[i])));
    /* what the host's toolkit must provide, and the toolkit seen here */
    cJSON *tk = cJSON_AddArrayToObject(doc, "toolkit_libs");
    for (size_t i = 0; i < p->n_toolkit_libs; i++)
        cJSON_AddItemToArray(tk, cJSON_CreateString(p->toolkit_libs[i].value));
    cJSON *tko = cJSON_AddObjectToObject(doc, "toolkit");
    cJSON_AddStringToObject(tko, "vendor", cf_vendor_get(p->vendor)->word);
    cf_json_put_str(tko, "version", p->toolkit_version);
    cf_json_put_str(tko, "root", p->toolkit_root.value);
    char *json = cJSON_Print(doc);
    cJSON_Delete(doc);
    char *json_path = cf_path_join(abs_out, "cclforge-build.json");
    int rc = write_text(json_path, json, err);
    free(json);
    free(json_path);
    return rc;
}

/* The package's __init__.py: the plugin's own when --into has one (kept, as
 * it is, for `bridge wheel`), else one importing what every bridge exports. */
static int write_init(const struct cf_bridge_plan *p, const char *pkg_dir, cf_error *err)
{
    char *init_path = cf_path_join(pkg_dir, "__init__.py");
    char *own = p->into ? cf_asprintf("%s/%s/__init__.py", p->into, p->package_dir) : NULL;
    int rc;
    if (own && cf_is_file(own)) {
        rc = copy_file(own, init_path, 0644, err);
    } else {
        char *init = cf_asprintf("\"\"\"cclforge bridge (%s): c10d::ProcessGroupNCCL of the vendor libtorch.\"\"\"\n"
                                 "import torch.distributed  # registers Store and Backend before the extension loads\n"
                                 "from .%s import make_nccl_backend  # noqa: F401\n",
                                 cf_vendor_get(p->vendor)->word, p->module_name);
        rc = write_text(init_path, init, err);
        free(init);
    }
    free(own);
    free(init_path);
    return rc;
}

/* --into, once the build passed its check: the extension and the bundled
 * libraries at their places in the package's own tree. */
static int place_into(const struct cf_bridge_plan *p, const char *output, struct cf_bridge_build_result *res,
                      cf_error *err)
{
    char *dir = cf_path_join(p->into, p->package_dir);
    char *libdir = cf_path_join(dir, "lib");
    char *at = cf_path_join(dir, p->output_name);
    int rc = cf_mkdir_p(dir, 0755, err);
    if (rc == 0 && p->bundle_libs.n)
        rc = cf_mkdir_p(libdir, 0755, err);
    for (size_t i = 0; rc == 0 && i < p->bundle_libs.n; i++) {
        char *to = cf_path_join(libdir, cf_basename(p->bundle_libs.v[i]));
        rc = copy_file(p->bundle_libs.v[i], to, 0755, err);
        free(to);
    }
    if (rc == 0)
        rc = copy_file(output, at, 0755, err);
    if (rc == 0)
        res->installed = cf_strdup(at);
    free(at);
    free(libdir);
    free(dir);
    return rc;
}

/* The guard's failure, read back from the log, replaces the compiler's words. */
static void explain_guard(const struct cf_bridge_plan *p, const char *log, cf_error *err)
{
    struct strbuf text = STRBUF_INIT;
    cf_error rerr = CF_ERROR_INIT;
    if (cf_read_file(log, 64u << 20, &text, &rerr) == 0) {
        char *msg = guard_failure(p, cf_sb_str(&text));
        if (msg) {
            cf_error_clear(err);
            cf_error_set(err, CF_ERR_FAILED, "%s (full log: %s)", msg, log);
            free(msg);
        }
    }
    cf_error_clear(&rerr);
    cf_sb_release(&text);
}

int cf_bridge_build(const struct cf_bridge_plan *p, const char *out_dir, struct cf_bridge_build_result *res,
                    cf_error *err)
{
    memset(res, 0, sizeof *res);
    if (p->problems.n)
        return cf_error_set(err, CF_ERR_FAILED, "the plan has %zu problem(s); the first: %s", p->problems.n,
                            p->problems.v[0]);
    if (cf_mkdir_p(out_dir, 0755, err) < 0)
        return -1;
    char *abs_out = cf_realpath(out_dir);
    char *pkg_dir = cf_path_join(abs_out, p->package_dir);
    char *lib_dir = cf_path_join(pkg_dir, "lib");
    char *object_name = cf_asprintf("%s/%s.o", abs_out, p->module_name);
    char *guard_name = cf_asprintf("%s/%s.abi_guard.o", abs_out, p->module_name);
    char *output = cf_path_join(pkg_dir, p->output_name);
    /* The compiler and the linker write to unpredictable temporaries (nothing
     * planted at a known name is written through); only the linked output is
     * renamed into place. */
    struct cf_atomic_file object = { .fd = -1, .dir_fd = -1 }, guard = { .fd = -1, .dir_fd = -1 },
                          linked = { .fd = -1, .dir_fd = -1 };
    char *stage = cf_path_join(abs_out, "installed-layout");
    res->log_path = cf_path_join(abs_out, "build.log");
    struct strvec largv = STRVEC_INIT, outer = STRVEC_INIT, more_tmp = STRVEC_INIT;
    struct cf_atomic_file *more = cf_xcalloc(p->more_sources.n + 1, sizeof *more);
    for (size_t i = 0; i < p->more_sources.n; i++)
        more[i] = (struct cf_atomic_file){ .fd = -1, .dir_fd = -1 };
    int rc = -1, hit = 0, guard_hit = 0;
    char *cached = NULL;
    unlink(res->log_path);
    if (cf_mkdir_p(pkg_dir, 0755, err) < 0 || cf_atomic_begin(&object, AT_FDCWD, object_name, 0644, err) < 0 ||
        cf_atomic_begin(&guard, AT_FDCWD, guard_name, 0644, err) < 0 ||
        cf_atomic_begin(&linked, AT_FDCWD, output, 0755, err) < 0)
        goto out;
    /* the guard first: a layout mismatch is said before the long compile */
    if (compile_cached(p, p->guard.value, guard.tmp_path, "compiling the ABI guard", res, abs_out, &guard_hit, &cached,
                       err) < 0) {
        explain_guard(p, res->log_path, err);
        goto out;
    }
    if (guard_hit) {
        free(res->object_cache);
        res->object_cache = cached;
    } else {
        free(cached);
    }
    if (compile_cached(p, p->source.value, object.tmp_path, "compiling the bridge", res, abs_out, &hit, &cached,
                       err) < 0)
        goto out;
    if (cached) {
        free(res->object_cache);
        res->object_cache = cached;
    }
    res->cache_hit = hit && guard_hit;
    res->more_objects = cf_xcalloc(p->more_sources.n + 1, sizeof *res->more_objects);
    for (size_t i = 0; i < p->more_sources.n; i++) {
        struct cf_atomic_file *f = &more[i];
        struct cf_bridge_object *o = &res->more_objects[res->n_more_objects++];
        o->source = cf_strdup(p->more_sources.v[i]);
        char *what = cf_asprintf("compiling the bridge's %s", cf_basename(p->more_sources.v[i]));
        int crc = cf_atomic_begin(f, AT_FDCWD, p->more_objects.v[i], 0644, err);
        if (crc == 0)
            crc = compile_cached(p, p->more_sources.v[i], f->tmp_path, what, res, abs_out, &o->hit, &o->cached, err);
        free(what);
        if (crc < 0)
            goto out;
        res->cache_hit = res->cache_hit && o->hit;
        cf_strvec_push(&more_tmp, f->tmp_path);
    }
    cf_bridge_link_argv(p, object.tmp_path, &more_tmp, guard.tmp_path, linked.tmp_path, &largv);
    if (p->docker)
        cf_bridge_docker_argv(p, abs_out, &largv, &outer);
    if (run_logged(p->docker ? &outer : &largv, res->log_path, &res->link_seconds, "linking the bridge", err) < 0)
        goto out;
    if (cf_atomic_commit(&linked, err) < 0)
        goto out;
    res->output = cf_strdup(output);
    if (write_init(p, pkg_dir, err) < 0)
        goto out;
    if (p->bundle_libs.n && cf_mkdir_p(lib_dir, 0755, err) < 0)
        goto out;
    for (size_t i = 0; i < p->bundle_libs.n; i++) {
        char *to = cf_path_join(lib_dir, cf_basename(p->bundle_libs.v[i]));
        int crc = copy_file(p->bundle_libs.v[i], to, 0755, err);
        free(to);
        if (crc < 0)
            goto out;
    }
    if (write_manifest(p, abs_out, err) < 0)
        goto out;
    if (cf_bridge_inspect_output(p, output, stage, res, err) < 0)
        goto out;
    if (res->problems.n) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < res->problems.n; i++)
            cf_sb_addf(&sb, "\n  - %s", res->problems.v[i]);
        cf_error_set(err, CF_ERR_FAILED, "%s was built but fails its check in the installed layout%s:%s", output,
                     p->into ? " (the --into tree was left as it was)" : "", sb.buf);
        cf_sb_release(&sb);
        goto out;
    }
    if (p->into && place_into(p, output, res, err) < 0)
        goto out;
    rc = 0;
out:
    cf_atomic_abort(&linked);
    cf_atomic_abort(&guard);
    cf_atomic_abort(&object);
    for (size_t i = 0; i < p->more_sources.n; i++)
        cf_atomic_abort(&more[i]);
    free(more);
    cf_strvec_clear(&more_tmp);
    cf_strvec_clear(&largv);
    cf_strvec_clear(&outer);
    free(abs_out);
    free(pkg_dir);
    free(lib_dir);
    free(object_name);
    free(guard_name);
    free(output);
    free(stage);
    return rc;
}

void cf_bridge_build_result_release(struct cf_bridge_build_result *res)
{
    free(res->output);
    free(res->installed);
    free(res->log_path);
    free(res->object_cache);
    for (size_t i = 0; i < res->n_more_objects; i++) {
        free(res->more_objects[i].source);
        free(res->more_objects[i].cached);
    }
    free(res->more_objects);
    cf_strvec_clear(&res->needed);
    cf_strvec_clear(&res->rpath);
    cf_strvec_clear(&res->glibc_symbols);
    cf_bridge_duplicates_free(res->duplicates, res->n_duplicates);
    cf_strvec_clear(&res->checks);
    cf_strvec_clear(&res->problems);
    memset(res, 0, sizeof *res);
}
