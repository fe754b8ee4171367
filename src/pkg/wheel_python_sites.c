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
 * --site directories are. Isolated mode (-I): no PYTHONPATH, no user site, no
 * working directory on the path. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/spawn.h"
#include "cclforge/wheel.h"
#include "pkg/wheel_verify_internal.h"

/* Prints one directory per line: sys.path's directories, less the standard
 * library and its extension modules (a zip or a missing entry is no directory). */
static const char sites_script[] =
    "import os, sys, sysconfig\n"
    "paths = sysconfig.get_paths()\n"
    "std = {os.path.realpath(paths[k]) for k in ('stdlib', 'platstdlib')}\n"
    "std |= {os.path.join(s, 'lib-dynload') for s in list(std)}\n"
    "seen = set()\n"
    "for p in sys.path:\n"
    "    r = os.path.realpath(p) if p else ''\n"
    "    if r and r not in std and r not in seen and os.path.isdir(r):\n"
    "        seen.add(r)\n"
    "        print(r)\n";

/* Bounds what an interpreter can make verify hold: a sys.path is short. */
#define SITES_OUTPUT_LIMIT (1u << 20)
#define SITES_MAX 256

int cf_wheel_python_sites(const char *python, double timeout_s, struct strvec *out, cf_error *err)
{
    const char *argv[] = { python, "-I", "-c", sites_script, NULL };
    struct cf_spawn_opts so = cf_spawn_probe_opts(timeout_s);
    so.capture_limit = SITES_OUTPUT_LIMIT;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    if (cf_spawn_run(argv, &so, &r, err) < 0) {
        cf_spawn_result_release(&r);
        return -1;
    }
    if (!cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        cf_error_set(err, CF_ERR_FAILED, "%s -I -c <sys.path> failed (%s)", python, how);
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
