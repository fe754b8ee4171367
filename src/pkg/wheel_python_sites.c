/* `wheel verify --system-site-packages`: the package directories the given
 * interpreter itself imports from, asked of it.
 *
 * `python -m venv --system-site-packages` shows the new venv the packages of
 * the *base* interpreter. When the interpreter given is itself a venv (torch
 * installed in ~/venv, a plugin's build venv), its own site-packages stay
 * invisible: the import of torch fails, and the static checks cannot find the
 * libraries of a declared external (torch/lib). So those directories are
 * asked of the interpreter (sys.path after site processing: its site-packages,
 * what its .pth files add, the base's when the venv includes them) and used as
 * --site directories are (share/cclforge/python/python_sites.py prints them).
 * Isolated mode (-I): no PYTHONPATH, no user site, no working directory on the
 * path. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/share.h"
#include "cclforge/spawn.h"
#include "cclforge/wheel.h"
#include "pkg/wheel_verify_internal.h"

/* Bounds what an interpreter can make verify hold: a sys.path is short. */
#define SITES_OUTPUT_LIMIT (1u << 20)
#define SITES_MAX 256

int cf_wheel_python_sites(const char *python, double timeout_s, struct strvec *out, cf_error *err)
{
    char *script = cf_share_need("python/python_sites.py", err);
    if (!script)
        return -1;
    const char *argv[] = { python, "-I", script, NULL };
    struct cf_spawn_opts so = cf_spawn_probe_opts(timeout_s);
    so.capture_limit = SITES_OUTPUT_LIMIT;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    int started = cf_spawn_run(argv, &so, &r, err);
    free(script);
    if (started < 0) {
        cf_spawn_result_release(&r);
        return -1;
    }
    if (!cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        cf_error_set(err, CF_ERR_FAILED, "%s -I python_sites.py (its sys.path) failed (%s)", python, how);
        free(how);
        cf_spawn_result_release(&r);
        return -1;
    }
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    for (size_t i = 0; i < lines.n && out->n < SITES_MAX; i++)
        if (lines.v[i][0] == '/')
            cf_strvec_push(out, lines.v[i]);
    cf_strvec_clear(&lines);
    cf_spawn_result_release(&r);
    return 0;
}
