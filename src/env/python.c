/* Finding Python packages without importing them: importlib.util.find_spec
 * locates a package from sys.path without running its __init__ (importing
 * torch takes seconds and may fail on a broken install, which is what we are
 * diagnosing). For a dotted name it imports only the parent ("nvidia", a
 * namespace package with no code). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "env/env_internal.h"

static const char locate_code[] =
    "import importlib.util, sys\n"
    "print('python\\t' + sys.executable)\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        spec = importlib.util.find_spec(name)\n"
    "    except Exception:\n"
    "        spec = None\n"
    "    locs = list(spec.submodule_search_locations or []) if spec else []\n"
    "    if locs:\n"
    "        print(name + '\\t' + locs[0])\n";

const struct py_found *python_locate(struct probe_ctx *ctx)
{
    if (ctx->python_tried)
        return ctx->py.python ? &ctx->py : NULL;
    ctx->python_tried = 1;
    if (ctx->opts->skip & CF_SURVEY_SKIP_PYTHON)
        return NULL;
    const char *python = ctx->opts->python ? ctx->opts->python : "python3";
    char *exe = cf_which(python);
    if (!exe)
        return NULL;
    const char *argv[] = { exe, "-c", locate_code, "torch", "nvidia.nccl", NULL };
    struct cf_spawn_opts so = cf_spawn_probe_opts(30);
    so.env_set = ctx->opts->env; /* PYTHONPATH and friends as the caller sees them */
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    int ran = cf_spawn_run(argv, &so, &r, NULL) == 0 && cf_spawn_ok(&r);
    free(exe);
    char *out = ran ? sb_detach(&r.out) : NULL;
    cf_spawn_result_release(&r);
    if (!out)
        return NULL;
    struct strvec lines = STRVEC_INIT;
    strvec_split(&lines, out, "\n", 0);
    static const struct {
        const char *key;
        size_t field;
    } fields[] = {
        { "python", offsetof(struct py_found, python) },
        { "torch", offsetof(struct py_found, torch_dir) },
        { "nvidia.nccl", offsetof(struct py_found, nccl_dir) },
    };
    for (size_t i = 0; i < lines.n; i++) {
        char *tab = strchr(lines.v[i], '\t');
        if (!tab)
            continue;
        *tab = 0;
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
            char **slot = (char **)((char *)&ctx->py + fields[f].field);
            if (!strcmp(lines.v[i], fields[f].key) && !*slot && tab[1])
                *slot = cf_strdup(tab + 1);
        }
    }
    strvec_clear(&lines);
    free(out);
    return ctx->py.python ? &ctx->py : NULL;
}
