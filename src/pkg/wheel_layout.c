/* The installed layout: where pip puts each member (site-packages for the
 * archive root and the .data purelib/platlib schemes, bin/ for scripts, the
 * prefix for data), built in a private directory so that the project's own
 * loader emulation (cclforge/ldso.h) resolves NEEDED exactly as glibc would
 * after `pip install`. Only what the loader reads is written: ELF members,
 * and the first bytes of anything else named like a library (a text file
 * called libx.so stops glibc's search as an invalid ELF header). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "pkg/member_name.h"
#include "pkg/wheel_verify_internal.h"

/* <stem>.data/<scheme>/... -> where pip's install scheme puts it, below the prefix. */
static const struct {
    const char *scheme;
    const char *dir;
} data_schemes[] = {
    { "purelib", CF_WHEEL_SITE_REL }, { "platlib", CF_WHEEL_SITE_REL }, { "scripts", "bin" },
    { "headers", "include" },          { "data", "" },
};

/* The path relative to the prefix, in normal form: pip joins the name to the
 * scheme's directory and the kernel drops "." and empty components, so
 * "./hw//x.py" lands where "hw/x.py" does. */
static char *normal(char *path)
{
    if (cf_member_name_is_normal(path, strlen(path)))
        return path;
    struct strbuf sb = STRBUF_INIT;
    cf_member_name_normalize(path, strlen(path), &sb);
    free(path);
    return cf_sb_detach(&sb);
}

char *cf_wheel_installed_path(const char *stem, const char *name)
{
    size_t sl = stem ? strlen(stem) : 0;
    if (!stem || strncmp(name, stem, sl) || strncmp(name + sl, ".data/", 6))
        return normal(cf_asprintf("%s/%s", CF_WHEEL_SITE_REL, name));
    const char *scheme = name + sl + 6, *slash = strchr(scheme, '/');
    if (!slash || !slash[1])
        return NULL; /* the .data directory itself, or a scheme directory */
    for (size_t i = 0; i < sizeof data_schemes / sizeof data_schemes[0]; i++) {
        size_t n = strlen(data_schemes[i].scheme);
        if ((size_t)(slash - scheme) == n && !strncmp(scheme, data_schemes[i].scheme, n))
            return normal(*data_schemes[i].dir ? cf_asprintf("%s/%s", data_schemes[i].dir, slash + 1)
                                               : cf_strdup(slash + 1));
    }
    return NULL;
}

char *cf_wheel_layout_display(const char *rel)
{
    static const char site[] = CF_WHEEL_SITE_REL;
    size_t n = sizeof site - 1;
    if (!strncmp(rel, site, n) && (rel[n] == '/' || rel[n] == '\0'))
        return cf_asprintf("site-packages%s", rel + n);
    return cf_asprintf("<prefix>/%s", rel);
}

int cf_wheel_layout_create(struct verify_ctx *c, cf_error *err)
{
    c->prefix = cf_path_join(c->tmp, "prefix");
    c->sysroot = cf_path_join(c->tmp, "sysroot");
    char *site = cf_path_join(c->prefix, CF_WHEEL_SITE_REL);
    int rc = cf_mkdir_p(site, 0700, err) < 0 || cf_mkdir_p(c->sysroot, 0700, err) < 0 ? -1 : 0;
    free(site);
    return rc;
}

const char *cf_wheel_installed_of(const struct verify_ctx *c, const struct vmember *m)
{
    return m->placed ? m->placed + strlen(c->prefix) + 1 : NULL;
}

int cf_wheel_layout_open(struct verify_ctx *c, size_t i, const char *installed, cf_error *err)
{
    struct vmember *m = &c->m[i];
    char *path = cf_path_join(c->prefix, installed);
    char *dir = cf_dirname(path);
    int fd = -1;
    /* the installed paths are clean (no '..', no absolute, nothing through a
     * symlink) and the layout holds no links of the wheel's: nothing written
     * here can land outside it */
    if (cf_mkdir_p(dir, 0700, err) == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
        if (fd < 0)
            cf_error_set(err, CF_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    free(dir);
    if (fd >= 0)
        m->placed = path;
    else
        free(path);
    return fd;
}

void cf_wheel_layout_link_externals(struct verify_ctx *c, struct strvec *found)
{
    for (size_t e = 0; e < c->externals.n; e++) {
        const char *ext = c->externals.v[e];
        int escaped = 0;
        char *abs = cf_asprintf("/%s", ext);
        char *norm = cf_path_normalize(abs, &escaped);
        free(abs);
        if (escaped || !strcmp(norm, "/")) {
            free(norm);
            continue; /* not a directory inside site-packages */
        }
        char *at = cf_asprintf("%s/%s%s", c->prefix, CF_WHEEL_SITE_REL, norm);
        for (size_t s = 0; s < c->opts->n_site_dirs && !cf_path_exists(at); s++) {
            char *from = cf_asprintf("%s%s", c->opts->site_dirs[s], norm);
            char *real = cf_is_dir(from) ? cf_realpath(from) : NULL;
            char *parent = cf_dirname(at);
            cf_error err = CF_ERROR_INIT;
            if (real && cf_mkdir_p(parent, 0700, &err) == 0 && symlink(real, at) == 0)
                cf_strvec_pushf(found, "%s (from %s)", norm + 1, c->opts->site_dirs[s]);
            cf_error_clear(&err);
            free(parent);
            free(real);
            free(from);
        }
        free(at);
        free(norm);
    }
}
