/* `wheel verify --install / --smoke`: a fresh venv, `pip install --no-index
 * --no-deps`, then the modules imported from the installed location (never the
 * source tree: isolated mode, cwd in the venv, __file__ checked). Every step is
 * an argv spawn; the Python it runs is share/cclforge/python/wheel_import.py
 * (its argv and result are said there) and venv_platlib.py, their inputs argv.
 *
 * The import runs the wheel's own code, with the user's rights: its verdict
 * must not be the wheel's to give, and nothing it starts may outlive it. So
 * every step is contained (spawn's keeper kills whatever is left when it
 * ends: a setsid() daemon neither survives nor holds verify on its output
 * pipe), and the import script's result travels on a private channel, not
 * stdout: an unlinked file inherited as a descriptor, the line starting with
 * a nonce the script read from a pipe before anything of the wheel was
 * imported, written only after the import returned. A module that prints a
 * result of its own and ends the process (os._exit(0)) is a failed import.
 * Code in the same interpreter can still read what the script knows: this
 * stops a module's lie, not a wheel written against this very protocol
 * (docs/security.md). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/pymodule.h"
#include "cclforge/share.h"
#include "cclforge/spawn.h"
#include "cclforge/syscompat.h"
#include "cclforge/wheel.h"
#include "pkg/wheel_verify_internal.h"

/* How a module is known for a bridge before its import. */
enum { MARK_NONE, MARK_MARKER, MARK_FACTORY };

/* The last `limit` bytes of a process's words, from a line's start: the end
 * of a traceback (the exception) is what matters, and a cut mid-word reads as
 * garbage ("ck (most recent call last)"). */
static const char *tail_lines(const char *text, size_t limit, int *cut)
{
    size_t len = strlen(text);
    *cut = len > limit;
    if (!*cut)
        return text;
    const char *start = text + len - limit;
    const char *nl = strchr(start, '\n');
    return nl && nl[1] ? nl + 1 : start;
}

#define NONCE_BYTES 16
#define MAX_RESULT ((size_t)4 << 20)

/* Every step contained: what it starts ends with it (spawn's keeper). */
static struct cf_spawn_opts step_opts(const char *cwd, double timeout_s)
{
    struct cf_spawn_opts so = cf_spawn_probe_opts(timeout_s);
    so.cwd = cwd;
    /* the source tree must not leak in: no PYTHONPATH, no user site */
    static const char *const env[] = { "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE=1", NULL };
    so.env_set = env;
    so.contain = 1;
    return so;
}

/* What it said last: stderr's tail, else stdout's, from a line's start. */
static const char *tail_of(const struct cf_spawn_result *r, int *cut)
{
    return tail_lines(r->err.len ? r->err.buf : cf_sb_str(&r->out), 1500, cut);
}

static void step_failed(struct cf_wheel_verify_result *res, const char *check, const char *const *argv,
                        const struct cf_spawn_result *r)
{
    char *how = cf_spawn_describe(r);
    int cut;
    const char *tail = tail_of(r, &cut);
    cf_wheel_add_check(res, check, 0, "%s %s failed (%s)%s: %s%s", argv[0], argv[1] ? argv[1] : "", how,
                       (!r->exited && r->term_signal) ? " - it crashed" : "", cut ? "[...]\n" : "", tail);
    free(how);
}

static int run_step(struct cf_wheel_verify_result *res, const char *check, const char *const *argv, const char *cwd,
                    double timeout_s, struct strbuf *out)
{
    struct cf_spawn_opts so = step_opts(cwd, timeout_s);
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_spawn_run(argv, &so, &r, &err) < 0) {
        cf_wheel_add_check(res, check, 0, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        cf_spawn_result_release(&r);
        return -1;
    }
    int ok = cf_spawn_ok(&r);
    if (!ok)
        step_failed(res, check, argv, &r);
    else if (out)
        cf_sb_add(out, r.out.buf ? r.out.buf : "", r.out.len);
    cf_spawn_result_release(&r);
    return ok ? 0 : -1;
}

/* The nonce, as hex, into a pipe the script reads first; -1 with the check failed. */
static int nonce_pipe(struct cf_wheel_verify_result *res, char hex[2 * NONCE_BYTES + 1])
{
    unsigned char raw[NONCE_BYTES];
    int fds[2];
    if (cf_getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw || pipe2(fds, O_CLOEXEC) < 0) {
        cf_wheel_add_check(res, "import", 0, "no nonce for the import's private channel: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    ssize_t w = write(fds[1], hex, 2 * NONCE_BYTES);
    close(fds[1]);
    if (w != 2 * NONCE_BYTES) {
        close(fds[0]);
        cf_wheel_add_check(res, "import", 0, "no nonce for the import's private channel: %s", strerror(errno));
        return -1;
    }
    return fds[0];
}

/* An unlinked file in dir, for the script's result: nobody reaches it by name. */
static int result_file(struct cf_wheel_verify_result *res, const char *dir)
{
    char *path = cf_asprintf("%s/.import-result-XXXXXX", dir);
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    else
        cf_wheel_add_check(res, "import", 0, "no file for the import's private channel in %s: %s", dir,
                           strerror(errno));
    free(path);
    return fd;
}

/* One module imported by wheel_import.py; its result document, or NULL with
 * the import check failed (saying how). */
static cJSON *import_one(struct cf_wheel_verify_result *res, const char *vpy, const char *mod, int mark,
                         const char *cwd, double timeout_s)
{
    cf_error err = CF_ERROR_INIT;
    char *script = cf_share_need("python/wheel_import.py", &err);
    if (!script) {
        cf_wheel_add_check(res, "import", 0, "import %s not tried: %s", mod, cf_error_message(&err));
        cf_error_clear(&err);
        return NULL;
    }
    char nonce[2 * NONCE_BYTES + 1];
    int nfd = nonce_pipe(res, nonce);
    int rfd = nfd < 0 ? -1 : result_file(res, cwd);
    if (rfd < 0) {
        if (nfd >= 0)
            close(nfd);
        free(script);
        return NULL;
    }
    char nfd_s[16], rfd_s[16];
    snprintf(nfd_s, sizeof nfd_s, "%d", nfd);
    snprintf(rfd_s, sizeof rfd_s, "%d", rfd);
    const char *const marks[] = { [MARK_NONE] = "0", [MARK_MARKER] = "1", [MARK_FACTORY] = "2" };
    const char *argv[] = { vpy, "-I", script, mod, marks[mark], nfd_s, rfd_s, NULL };
    struct cf_spawn_opts so = step_opts(cwd, timeout_s);
    const int keep[] = { nfd, rfd };
    so.keep_fds = keep;
    so.n_keep_fds = 2;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    int started = cf_spawn_run(argv, &so, &r, &err);
    close(nfd);
    struct strbuf got = STRBUF_INIT;
    char buf[65536];
    ssize_t n;
    for (off_t off = 0; started == 0 && got.len < MAX_RESULT && (n = pread(rfd, buf, sizeof buf, off)) > 0; off += n)
        cf_sb_add(&got, buf, (size_t)n);
    close(rfd);
    /* the one line: "<nonce> <JSON>\n" */
    const char *text = cf_sb_str(&got), *nl = memchr(text, '\n', got.len);
    int ours = got.len > sizeof nonce && !memcmp(text, nonce, sizeof nonce - 1) && text[sizeof nonce - 1] == ' ' &&
               nl == text + got.len - 1;
    cJSON *doc = ours ? cJSON_ParseWithLength(text + sizeof nonce, got.len - sizeof nonce) : NULL;
    char *left = r.left_behind ? cf_asprintf(" (it left %d process(es) running, killed)", r.left_behind) : NULL;
    int said_cut = 0;
    const char *said = tail_of(&r, &said_cut);
    if (started < 0)
        cf_wheel_add_check(res, "import", 0, "%s", cf_error_message(&err));
    else if (!cf_spawn_ok(&r))
        step_failed(res, "import", argv, &r);
    else if (!got.len)
        cf_wheel_add_check(res, "import", 0,
                           "import %s did not complete: the interpreter exited 0 but no result came on the private "
                           "channel (the wheel's code ended the process during the import, e.g. os._exit(0), or "
                           "closed the channel)%s; it printed: %s%s",
                           mod, left ? left : "", said_cut ? "[...]\n" : "", said);
    else if (!doc)
        cf_wheel_add_check(res, "import", 0,
                           "import %s: what came on the private channel is not the import script's result (%s): "
                           "the wheel's code wrote it%s",
                           mod, ours ? "not one JSON document" : "no nonce, or more than one line", left ? left : "");
    else if (left)
        cJSON_AddStringToObject(doc, "left_behind", left);
    cf_error_clear(&err);
    cf_spawn_result_release(&r);
    cf_sb_release(&got);
    free(left);
    free(script);
    return doc;
}

/* Each top-level entry of a --site dir is linked into the venv's
 * site-packages, so the installed layout is what a real install of those
 * packages (e.g. torch) gives: $ORIGIN/../torch/lib resolves for real. */
static int link_site_dirs(const struct cf_wheel_verify_opts *opts, struct cf_wheel_verify_result *res, const char *vpy,
                          const char *cwd, double tmo)
{
    cf_error err = CF_ERROR_INIT;
    char *script = cf_share_need("python/venv_platlib.py", &err);
    if (!script) {
        cf_wheel_add_check(res, "install", 0, "--site: %s", cf_error_message(&err));
        cf_error_clear(&err);
        return -1;
    }
    struct strbuf out = STRBUF_INIT;
    const char *sp_argv[] = { vpy, "-I", script, NULL };
    int rc = run_step(res, "install", sp_argv, cwd, tmo, &out);
    free(script);
    size_t linked = 0;
    cf_sb_rtrim(&out);
    for (size_t i = 0; rc == 0 && i < opts->n_site_dirs; i++) {
        char *abs = cf_realpath(opts->site_dirs[i]);
        DIR *d = abs ? opendir(abs) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (de->d_name[0] == '.' || cf_ends_with(de->d_name, ".dist-info") || !strcmp(de->d_name, "bin"))
                continue;
            char *from = cf_path_join(abs, de->d_name), *to = cf_path_join(out.buf, de->d_name);
            /* a name already there (the venv's own, an earlier --site dir's) is kept */
            if (!cf_path_exists(to) && symlink(from, to) == 0)
                linked++;
            free(from);
            free(to);
        }
        if (d) {
            closedir(d);
        } else {
            cf_wheel_add_check(res, "install", 0, "--site %s: not a readable directory", opts->site_dirs[i]);
            rc = -1;
        }
        free(abs);
    }
    (void)linked;
    cf_sb_release(&out);
    return rc;
}

/* The import check of one module that imported: it must come from the
 * installed copy in the venv. The bridge, else the first module, is the one
 * reported. */
static void judge_import(struct cf_wheel_verify_result *res, const cJSON *doc, const char *mod, const char *venv,
                         int is_bridge)
{
    const cJSON *left = cJSON_GetObjectItemCaseSensitive(doc, "left_behind");
    const char *left_s = cJSON_IsString(left) ? left->valuestring : "";
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(doc, "file");
    const char *f = cJSON_IsString(file) ? file->valuestring : "";
    char *prefix = cf_asprintf("%s/", venv);
    int inside = cf_starts_with(f, prefix);
    free(prefix);
    if (!inside) {
        cf_wheel_add_check(res, "import", 0, "%s was imported from %s, outside the venv %s: not the installed copy",
                           mod, f, venv);
        cf_strvec_push(&res->import_failed, mod);
    } else {
        cf_wheel_add_check(res, "import", 1, "import %s from %s%s", mod, f, left_s);
        cf_strvec_push(&res->imported, mod);
    }
    if (!res->module || is_bridge) {
        free(res->module);
        free(res->module_file);
        res->module = cf_strdup(mod);
        res->module_file = cf_strdup(f);
    }
}

/* The top-level package of a dotted name, into buf. */
static const char *top_of(const char *dotted, char *buf, size_t cap)
{
    size_t n = strcspn(dotted, ".");
    snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), dotted);
    return buf;
}

/* The Requires-Dist value whose distribution is named as the module `top`
 * (canonical forms compared: "PyYAML" is not "yaml", so a miss says only
 * that no requirement is named so), NULL when none. */
static const char *requirement_named(const struct strvec *reqs, const char *top)
{
    char *want = cf_dist_canonical(top);
    const char *found = NULL;
    for (size_t i = 0; i < reqs->n && !found; i++) {
        char *canon = cf_wheel_requirement_canon(reqs->v[i]);
        if (canon && !strcmp(canon, want))
            found = reqs->v[i];
        free(canon);
    }
    free(want);
    return found;
}

/* The import check of one module whose import raised: always a failure (the
 * import asked for did not happen), said as what it is: the bridge lost, no
 * init function of the module's name, or a module the wheel needs and does
 * not carry (declared in Requires-Dist or not; --no-deps installs none). */
static void import_failure(struct cf_wheel_verify_result *res, const cJSON *doc, const char *mod, int mark,
                           const struct wheel_facts *wf)
{
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(doc, "error");
    const cJSON *missing = cJSON_GetObjectItemCaseSensitive(doc, "missing");
    const char *text = cJSON_IsString(error) ? error->valuestring : "";
    int cut;
    const char *tail = tail_lines(text, 1500, &cut);
    struct strbuf why = STRBUF_INIT;
    char top_mod[256], top_missing[256];
    if (cJSON_IsString(missing) &&
        strcmp(top_of(missing->valuestring, top_missing, sizeof top_missing), top_of(mod, top_mod, sizeof top_mod))) {
        const char *req = requirement_named(&wf->requires_dist, top_missing);
        cf_sb_addf(&why, "it needs module %s, which the wheel does not carry and nothing in the venv provides (%s%s%s); "
                         "to import it, give --site DIR where %s is installed, or --system-site-packages",
                   missing->valuestring, req ? "the wheel declares it, Requires-Dist: " : "",
                   req ? req : "no Requires-Dist of the wheel is named so: an undeclared dependency?",
                   req ? "; --no-deps installs no dependency" : "", top_missing);
    }
    if (strstr(text, "does not define module export function")) {
        const char *leaf = strrchr(mod, '.') ? strrchr(mod, '.') + 1 : mod;
        cf_sb_addf(&why, "%sit defines no PyInit_%s, the function import calls for this file name (see extension)",
                   why.len ? "; " : "", leaf);
    }
    if (mark == MARK_MARKER)
        cf_sb_addf(&why, "%sit is the wheel's bridge (.dist-info/%s names it): the wheel installs, and the native "
                         "tier is lost",
                   why.len ? "; " : "", CF_WHEEL_MARKER);
    else if (mark == MARK_FACTORY)
        cf_sb_addf(&why, "%sit is the wheel's bridge (its data names %s): the wheel installs, and the native tier is "
                         "lost",
                   why.len ? "; " : "", CF_BRIDGE_FACTORY);
    cf_wheel_add_check(res, "import", 0, "import %s failed%s%s%s: %s%s", mod, why.len ? " (" : "",
                       why.len ? why.buf : "", why.len ? ")" : "", cut ? "[...]\n" : "", tail);
    cf_strvec_push(&res->import_failed, mod);
    cf_sb_release(&why);
}

/* The bridge check of the module that is the bridge: its ABI and its
 * make_nccl_backend called with one rank. Returns the GPUs it saw. */
static int bridge_check(struct cf_wheel_verify_result *res, const cJSON *doc, const char *mod)
{
    const cJSON *has = cJSON_GetObjectItemCaseSensitive(doc, "has_make_nccl_backend");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
    const cJSON *call = cJSON_GetObjectItemCaseSensitive(doc, "call");
    const cJSON *exc = cJSON_GetObjectItemCaseSensitive(doc, "exception");
    int gpus = cJSON_IsNumber(g) ? g->valueint : 0;
    cf_wheel_bridge_abi_check(res, cJSON_GetObjectItemCaseSensitive(doc, "abi"));
    if (!cJSON_IsTrue(has)) {
        cf_wheel_add_check(res, "bridge", 0, "%s has no callable make_nccl_backend", mod);
    } else if (cJSON_IsString(call) && !strcmp(call->valuestring, "raised")) {
        /* without a GPU a Python exception is the right answer; with one it is a failure */
        cf_wheel_add_check(res, "bridge", gpus == 0 ? 1 : 0,
                           "make_nccl_backend present; called with 1 rank on a host with %d GPU(s) it raised %s%s",
                           gpus, cJSON_IsString(exc) ? exc->valuestring : "an exception",
                           gpus == 0 ? " (expected without a GPU; no collective ran)" : "");
    } else {
        cf_wheel_add_check(res, "bridge", 1, "make_nccl_backend present; with 1 rank it %s (%d GPU(s))",
                           cJSON_IsString(call) ? call->valuestring : "ran", gpus);
    }
    return gpus;
}

void cf_wheel_install_checks(const struct cf_wheel_verify_opts *opts, const struct wheel_facts *wf,
                          struct cf_wheel_verify_result *res)
{
    cf_error err = CF_ERROR_INIT;
    double tmo = opts->timeout_s > 0 ? opts->timeout_s : 600;
    const char *python = opts->python ? opts->python : "python3";
    char *work = opts->work_dir ? cf_strdup(opts->work_dir) : cf_mkdtemp(NULL, "cclforge-wheel-", &err);
    if (!work || cf_mkdir_p(work, 0700, &err) < 0) {
        cf_wheel_add_check(res, "install", 0, "no work directory: %s", cf_error_message(&err));
        if (opts->smoke_ranks > 0)
            cf_wheel_add_check(res, "smoke", 0, "asked for a %d-rank smoke; nothing was installed; nothing ran",
                               opts->smoke_ranks);
        cf_error_clear(&err);
        free(work);
        return;
    }
    int smoke_said = 0;
    char *abs_work = cf_realpath(work);
    char *venv = cf_asprintf("%s/venv", abs_work);
    char *vpy = cf_asprintf("%s/bin/python", venv);
    char *wheel_abs = cf_realpath(opts->wheel);

    const char *venv_argv[] = { python, "-m", "venv", opts->system_site_packages ? "--system-site-packages" : venv,
                                opts->system_site_packages ? venv : NULL, NULL };
    if (run_step(res, "install", venv_argv, abs_work, tmo, NULL) < 0)
        goto out;
    if (opts->n_site_dirs && link_site_dirs(opts, res, vpy, abs_work, tmo) < 0)
        goto out;
    const char *pip_argv[] = { vpy,         "-m",        "pip", "install", "--no-index", "--no-deps", "--no-compile",
                               "--disable-pip-version-check", "--no-cache-dir", wheel_abs, NULL };
    if (run_step(res, "install", pip_argv, abs_work, tmo, NULL) < 0)
        goto out;
    cf_wheel_add_check(res, "install", 1, "pip install --no-index --no-deps into a fresh venv at %s%s", venv,
                    opts->system_site_packages ? " (--system-site-packages)" : "");

    if (!wf->modules.n)
        cf_wheel_add_check(res, "import", CF_WHEEL_NA, "nothing to import: the wheel carries no extension module");
    int gpus = 0;
    const char *bridge_module = NULL, *bridge_lost = NULL;
    for (size_t i = 0; i < wf->modules.n; i++) {
        const char *mod = wf->modules.v[i];
        int mark = wf->bridge_module && !strcmp(wf->bridge_module, mod)  ? MARK_MARKER
                   : cf_strvec_contains(&wf->factory_modules, mod) ? MARK_FACTORY
                                                                    : MARK_NONE;
        cJSON *doc = import_one(res, vpy, mod, mark, abs_work, tmo);
        int raised = doc && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, "error"));
        int is_bridge = doc && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "bridge"));
        if (raised)
            import_failure(res, doc, mod, mark, wf);
        else if (!doc)
            cf_strvec_push(&res->import_failed, mod);
        if (!doc || raised) {
            if (mark != MARK_NONE && !bridge_lost)
                bridge_lost = mod;
            cJSON_Delete(doc);
            continue;
        }
        if (is_bridge && !bridge_module)
            bridge_module = mod;
        judge_import(res, doc, mod, venv, is_bridge);
        if (is_bridge)
            gpus = bridge_check(res, doc, mod);
        cJSON_Delete(doc);
    }
    int n = opts->smoke_ranks;
    if (n > 0 && !bridge_module && bridge_lost)
        cf_wheel_add_check(res, "smoke", 0, "asked for a %d-rank smoke; the bridge module %s did not import (see "
                                            "import); nothing ran", n, bridge_lost);
    else if (n > 0 && !bridge_module)
        cf_wheel_add_check(res, "smoke", 0, "asked for a %d-rank smoke; no bridge module found; nothing ran (no "
                                            "extension module of the wheel defines %s, and no .dist-info/%s names one)",
                           n, CF_BRIDGE_FACTORY, CF_WHEEL_MARKER);
    else if (n > 0)
        cf_wheel_run_smoke(opts, vpy, abs_work, bridge_module, gpus, res);
    smoke_said = 1;
out:
    if (opts->smoke_ranks > 0 && !smoke_said)
        cf_wheel_add_check(res, "smoke", 0, "asked for a %d-rank smoke; the install failed (see install); nothing ran",
                           opts->smoke_ranks);
    if (opts->keep || opts->work_dir) {
        res->venv = venv;
        venv = NULL;
    } else {
        cf_rm_rf(abs_work, &err);
        cf_error_clear(&err);
    }
    free(venv);
    free(vpy);
    free(wheel_abs);
    free(abs_work);
    free(work);
}
