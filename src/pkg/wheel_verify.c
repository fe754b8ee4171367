/* `wheel verify`: the checks, run from a table in order, each adding its
 * verdict to the result; a check whose input an earlier one could not
 * provide is there as skipped, saying why. Any wheel with native code, not
 * only cclforge's. The static checks read the archive once, streaming
 * (memory does not grow with the wheel), into a private installed layout;
 * --install and --smoke then work from a real pip install (wheel_install.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/pymodule.h"
#include "cclforge/wheel.h"
#include "pkg/wheel_verify_internal.h"
#include "pkg/zip_loader.h"

/* What a check needs an earlier one to have established. */
enum need { NEED_NOTHING, NEED_FILE, NEED_SCAN, NEED_CONTENT };

static const struct step {
    const char *check;
    enum need need;
    void (*run)(struct verify_ctx *c);
} steps[] = {
    { "file", NEED_NOTHING, cf_wheel_check_file },
    { "name", NEED_NOTHING, cf_wheel_check_name },
    { "zip", NEED_FILE, cf_wheel_check_zip },
    { "record", NEED_CONTENT, cf_wheel_check_record },
    { "wheel-metadata", NEED_CONTENT, cf_wheel_check_metadata },
    { "pth", NEED_CONTENT, cf_wheel_check_pth },
    { "extension", NEED_CONTENT, cf_wheel_check_extension },
    { "rpath", NEED_CONTENT, cf_wheel_check_rpath },
    { "needed", NEED_CONTENT, cf_wheel_check_needed },
    { "glibc", NEED_CONTENT, cf_wheel_check_glibc },
    { "policy", NEED_CONTENT, cf_wheel_check_policy },
    { "host", NEED_CONTENT, cf_wheel_check_host },
};

/* NULL when the step can run, else why not. */
static const char *unmet(const struct verify_ctx *c, enum need need)
{
    if (need >= NEED_FILE && c->fd < 0)
        return "the wheel file could not be opened";
    if (need >= NEED_FILE && !c->have_name)
        return "the file name is not a wheel's";
    if (need >= NEED_SCAN && !c->have_scan)
        return "the archive's central directory could not be read";
    if (need >= NEED_CONTENT && !c->readable)
        return "the archive's structure is unsafe or over --max-size (see zip): nothing was decompressed";
    if (need >= NEED_CONTENT && !c->content_read)
        return "the members could not be read (see zip)";
    return NULL;
}

static void release_ctx(struct verify_ctx *c)
{
    if (c->za)
        cf_zip_discard(c->za);
    if (c->fd >= 0)
        close(c->fd);
    for (size_t i = 0; i < c->n; i++) {
        struct vmember *m = &c->m[i];
        if (m->shown != m->z->name)
            free((char *)m->shown);
        free(m->link_target);
        free(m->bad_digest);
        free(m->placed);
        free(m->elf_error);
        if (m->elf)
            cf_elf_facts_release(m->elf);
        free(m->elf);
    }
    free(c->m);
    cf_name_index_release(&c->by_name);
    cf_name_index_release(&c->dirs);
    cf_member_set_release(&c->paths);
    cf_strvec_clear(&c->dir_names);
    free(c->stem);
    cf_name_index_release(&c->placed);
    cf_name_index_release(&c->syslib_ix);
    cf_strvec_clear(&c->syslibs);
    cf_strvec_clear(&c->syslib_users);
    cf_sb_release(&c->dist_info_problems);
    cf_sb_release(&c->metadata_text);
    cf_zip_scan_release(&c->scan);
    cf_wheel_name_release(&c->wn);
    cf_record_release(&c->rec);
    cf_sb_release(&c->record_error);
    cf_sb_release(&c->wheel_text);
    cf_sb_release(&c->marker_text);
    if (c->tmp) {
        cf_error e = CF_ERROR_INIT;
        cf_rm_rf(c->tmp, &e);
        cf_error_clear(&e);
    }
    free(c->tmp);
    free(c->prefix);
    free(c->sysroot);
    free(c->dist_info);
    free(c->arch);
    cf_strvec_clear(&c->externals);
    free(c->wf.bridge_module);
    cf_strvec_clear(&c->wf.modules);
    cf_strvec_clear(&c->wf.toolkit_libs);
    cf_strvec_clear(&c->wf.factory_modules);
    cf_strvec_clear(&c->wf.requires_dist);
    free(c->wf.toolkit_vendor);
    free(c->wf.toolkit_version);
}

/* What --install needs beyond the static checks: which extension modules
 * are bridges (their data names the factory: so a bridge that fails to
 * import is still known as one), and what METADATA requires. */
static void install_facts(struct verify_ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (!m->is_extension || !m->factory) /* the factory: found by the bridge-module check */
            continue;
        char *mod = cf_wheel_module_of(cf_wheel_installed_of(c, m));
        if (mod && !cf_strvec_contains(&c->wf.factory_modules, mod))
            cf_strvec_push(&c->wf.factory_modules, mod);
        free(mod);
    }
    struct cf_kv meta = { 0 };
    cf_error err = CF_ERROR_INIT;
    if (c->metadata_text.len && cf_kv_parse(c->metadata_text.buf, c->metadata_text.len, &meta, &err) == 0)
        for (size_t i = 0; i < meta.n; i++)
            if (!strcasecmp(meta.keys[i], "Requires-Dist"))
                cf_strvec_push(&c->wf.requires_dist, meta.values[i]);
    cf_error_clear(&err);
    cf_kv_release(&meta);
}

/* --system-site-packages: the interpreter's own package directories join the
 * --site ones (wheel_python_sites.c says why); an interpreter that cannot be
 * asked is a failed check. */
static void with_python_sites(const struct cf_wheel_verify_opts *opts, struct cf_wheel_verify_opts *eff,
                              struct strvec *sites, struct cf_wheel_verify_result *res)
{
    *eff = *opts;
    if (!opts->system_site_packages)
        return;
    for (size_t i = 0; i < opts->n_site_dirs; i++)
        cf_strvec_push(sites, opts->site_dirs[i]);
    const char *python = opts->python ? opts->python : "python3";
    cf_error e = CF_ERROR_INIT;
    if (cf_wheel_python_sites(python, opts->timeout_s > 0 ? opts->timeout_s : 600, sites, &e) < 0) {
        cf_wheel_add_check(res, "python", 0,
                           "--system-site-packages: cannot ask %s for the directories it imports from: %s; "
                           "give --python an interpreter that runs, or name its site-packages with --site DIR",
                           python, cf_error_message(&e));
        cf_error_clear(&e);
        return;
    }
    eff->site_dirs = (const char *const *)sites->v;
    eff->n_site_dirs = sites->n;
}

int cf_wheel_verify(const struct cf_wheel_verify_opts *opts_in, struct cf_wheel_verify_result *res, cf_error *err)
{
    memset(res, 0, sizeof *res);
    res->wheel = cf_strdup(opts_in->wheel);
    struct cf_wheel_verify_opts eff;
    struct strvec sites = STRVEC_INIT;
    with_python_sites(opts_in, &eff, &sites, res);
    const struct cf_wheel_verify_opts *opts = &eff;
    struct verify_ctx c;
    memset(&c, 0, sizeof c);
    c.opts = opts;
    c.res = res;
    c.fd = -1;
    c.record = c.wheel = c.metadata = c.marker = -1;
    c.max_size = opts->max_size ? opts->max_size : CF_WHEEL_MAX_SIZE;
    for (size_t i = 0; i < opts->n_externals; i++)
        cf_strvec_push(&c.externals, opts->externals[i]);
    int rc = -1;
    if (cf_wheel_jobs(&c.jobs, err) < 0 || cf_inflate_pick(&c.engine, err) < 0)
        goto out;
    res->inflate_engine = c.engine.ops->name;
    c.tmp = cf_mkdtemp(NULL, "cclforge-wheel-verify-", err);
    if (!c.tmp)
        goto out;

    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        const char *why = unmet(&c, steps[i].need);
        if (why)
            cf_wheel_add_check(res, steps[i].check, -1, "not run: %s", why);
        else
            steps[i].run(&c);
    }

    if (opts->install || opts->smoke_ranks > 0) {
        /* asked for and not run: a failure of its own, saying why */
        if (res->failed) {
            int n_static = res->failed;
            cf_wheel_add_check(res, "install", 0, "not attempted: %d static check(s) above failed", n_static);
            if (opts->smoke_ranks > 0)
                cf_wheel_add_check(res, "smoke", 0, "asked for a %d-rank smoke; nothing was installed; nothing ran",
                                   opts->smoke_ranks);
        } else {
            install_facts(&c);
            cf_wheel_install_checks(opts, &c.wf, res);
        }
    }
    rc = 0;
out:
    release_ctx(&c);
    cf_strvec_clear(&sites);
    return rc;
}
