/* The pth check: the .pth files a wheel installs into site-packages itself.
 * site.py reads every one of them at every start of every interpreter of the
 * environment, whatever is imported, and runs each line that starts with
 * "import" (others add a directory to sys.path). pip installs them like any
 * file, so they are listed, with the lines that run code: a finding for the
 * user, not a fault of the wheel (setuptools' distutils-precedence.pth is
 * one). */
#include <stdlib.h>
#include <string.h>

#include "pkg/zip_scan.h"
#include "pkg/wheel_verify_internal.h"

#define MAX_PTH ((size_t)1 << 20) /* what is read of one */

/* 1 when the installed path is <site-packages>/<name>.pth. */
static int is_site_pth(const char *installed)
{
    static const char site[] = CF_WHEEL_SITE_REL "/";
    const char *rest = installed + sizeof site - 1;
    return cf_starts_with(installed, site) && !strchr(rest, '/') && cf_ends_with(rest, ".pth") &&
           strlen(rest) > strlen(".pth");
}

/* The first line site.py would exec (as site.py does: "import" then a space or a tab), shown. */
static void first_code_line(const char *text, size_t len, size_t *n_code, struct strbuf *shown)
{
    for (size_t pos = 0, line = 1; pos < len; line++) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (end - pos > 6 && !memcmp(text + pos, "import", 6) && (text[pos + 6] == ' ' || text[pos + 6] == '\t')) {
            if (!(*n_code)++) {
                cf_sb_addf(shown, "line %zu: '", line);
                cf_zip_name_display(shown, text + pos, end - pos > 120 ? 120 : end - pos);
                cf_sb_adds(shown, "'");
            }
        }
        pos = end + 1;
    }
}

void cf_wheel_check_pth(struct verify_ctx *c)
{
    struct strbuf found = STRBUF_INIT;
    size_t n = 0, n_running = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (!m->installable || m->z->is_dir || !cf_ends_with(m->z->name, ".pth"))
            continue; /* the cheap test first: most wheels have none */
        char *installed = cf_wheel_installed_path(c->stem, m->z->name);
        int pth = installed && is_site_pth(installed);
        free(installed);
        if (!pth)
            continue;
        struct strbuf text = STRBUF_INIT, line = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        size_t n_code = 0;
        if (cf_wheel_member_read_all(c, i, MAX_PTH, &text, &err) == 0)
            first_code_line(cf_sb_str(&text), text.len, &n_code, &line);
        if (n++ < CF_WHEEL_SHOWN) {
            if (err.kind)
                cf_sb_addf(&found, "%s'%s' (unread: %s)", found.len ? "; " : "", m->shown, cf_error_message(&err));
            else if (n_code)
                cf_sb_addf(&found, "%s'%s' runs code at every interpreter start (%zu line(s) site.py executes; %s)",
                           found.len ? "; " : "", m->shown, n_code, line.buf);
            else
                cf_sb_addf(&found, "%s'%s' adds directories to sys.path at every interpreter start",
                           found.len ? "; " : "", m->shown);
        }
        n_running += n_code > 0;
        cf_error_clear(&err);
        cf_sb_release(&text);
        cf_sb_release(&line);
    }
    if (!n)
        cf_wheel_add_check(c->res, "pth", 1, "no .pth file in site-packages: nothing of the wheel runs at interpreter start");
    else
        cf_wheel_add_check(c->res, "pth", 1, "%zu .pth file(s), %zu running code (a finding, not a failure: the wheel's "
                                             "code runs in every Python of the environment it is installed in): %s%s",
                           n, n_running, found.buf, n > CF_WHEEL_SHOWN ? "; ..." : "");
    cf_sb_release(&found);
}
