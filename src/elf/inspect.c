/* The inspect entry point: loader emulation, then per-object facts (banners,
 * GPU archs, RPATH lint), the optional symbol check, and the problems they add
 * up to. Each object of a closure is opened once, one at a time. */
#include "cclforge/inspect.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/scancache.h"
#include "cclforge/strbuf.h"
#include "cclforge/symcheck.h"


static const char *const problem_kind_names[CF_INSPECT_KIND_COUNT] = {
    [CF_INSPECT_BAD_INPUT] = "bad-input",
    [CF_INSPECT_MISSING] = "missing",
    [CF_INSPECT_LOAD_ERROR] = "load-error",
    [CF_INSPECT_UNREADABLE] = "unreadable",
    [CF_INSPECT_UNDEFINED_SYMBOL] = "undefined-symbol",
    [CF_INSPECT_VERSION_NOT_FOUND] = "version-not-found",
    [CF_INSPECT_LINT] = "lint",
    [CF_INSPECT_NCCL_COPIES] = "nccl-copies",
    [CF_INSPECT_GPU_CODE] = "gpu-code",
};

const char *cf_inspect_problem_kind_name(enum cf_inspect_problem_kind kind)
{
    return (unsigned)kind < CF_INSPECT_KIND_COUNT ? problem_kind_names[kind] : "?";
}

size_t cf_inspect_count(const struct cf_inspect_target *t, enum cf_inspect_problem_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_problems; i++)
        n += t->problems[i].kind == kind;
    return n;
}

char *cf_inspect_describe_banner(const struct cf_commlib_banner *b)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addf(&sb, "%s %u.%u.%u%s", cf_commlib_name(b->lib), b->major, b->minor, b->patch, b->suffix);
    if (b->toolkit[0])
        cf_sb_addf(&sb, "+%s%u.%u", b->toolkit, b->toolkit_major, b->toolkit_minor);
    if (b->lib == CF_COMMLIB_NCCL || b->lib == CF_COMMLIB_RCCL)
        cf_sb_addf(&sb, " (code %u)", b->version_code);
    return cf_sb_detach(&sb);
}

static void add_problem(struct cf_inspect_target *t, enum cf_inspect_problem_kind kind,
                        enum cf_lint_severity severity, long object, const char *path, char *message)
{
    t->problems = cf_xrealloc(t->problems, (t->n_problems + 1) * sizeof *t->problems);
    struct cf_inspect_problem *p = &t->problems[t->n_problems++];
    p->kind = kind;
    p->severity = severity;
    p->object = object;
    p->path = cf_strdup(path);
    p->message = message;
    if (severity == CF_LINT_ERROR)
        t->n_errors++;
    else if (severity == CF_LINT_WARNING)
        t->n_warnings++;
}

/* 1 when path lies under dir (both canonicalised; a missing path is not under). */
static int path_is_under(const char *path, const char *dir_real)
{
    char *real = cf_realpath(path);
    if (!real)
        return 0;
    size_t n = strlen(dir_real);
    int under = strncmp(real, dir_real, n) == 0 && (real[n] == '/' || real[n] == '\0' || n == 1);
    free(real);
    return under;
}

/* Banners, GPU archs and lint of one object, from one open of its file. The
 * open file is handed back in *keep for the symbol check when keep is not
 * NULL (closed here otherwise). */
static void scan_object(const struct cf_inspect_opts *opts, struct cf_scan_cache *cache,
                        struct cf_inspect_target *t, long i, const char *within_real, struct cf_elf **keep)
{
    const struct cf_ldso_object *o = &t->closure.objects[i];
    struct cf_inspect_object *io = &t->objects[i];
    cf_error err = CF_ERROR_INIT;
    /* Opened by the resolution already (lo.keep_open): taken over. */
    struct cf_elf *elf = t->closure.elves ? t->closure.elves[i] : NULL;
    if (elf)
        t->closure.elves[i] = NULL;
    else if (cf_elf_open(o->file, &elf, &err) != 0) {
        io->error = cf_strdup(cf_error_message(&err));
        cf_error_clear(&err);
        return;
    }
    io->scanned = 1;
    if (i == 0)
        t->is_static = !cf_elf_get_dynamic(elf)->has_dynamic;
    /* One scan of the read-only data finds banners and the GPU code kept
     * there (remembered per file); --no-banner only hides the banners. */
    unsigned what = (opts->no_banner ? 0u : CF_SCAN_BANNER) | (opts->no_gpu ? 0u : CF_SCAN_GPU);
    struct cf_scan_facts facts;
    memset(&facts, 0, sizeof facts);
    if (what && cf_scan_file(cache, elf, what, &facts, &io->from_cache, &err) != 0) {
        add_problem(t, CF_INSPECT_UNREADABLE, CF_LINT_WARNING, i, o->path,
                    cf_asprintf("%s: %s", opts->no_banner ? "GPU code" : "banner scan", cf_error_message(&err)));
        cf_error_clear(&err);
    } else if (what) {
        io->commlib = facts.id;
        io->commlib_scanned = !opts->no_banner;
        if (!opts->no_gpu) {
            io->gpu = facts.gpu; /* taken over */
            memset(&facts.gpu, 0, sizeof facts.gpu);
            io->gpu_scanned = 1;
            if (io->gpu.problem)
                add_problem(t, CF_INSPECT_GPU_CODE, CF_LINT_WARNING, i, o->path,
                            cf_asprintf("GPU code: %s", io->gpu.problem));
        }
    }
    cf_scan_facts_release(&facts);
    struct cf_rpath_lint_opts lo = {
        .lib = t->closure.dst_lib,
        .platform = t->closure.dst_platform,
        .root = opts->root,
    };
    /* Roots are what the user asked about; other objects only when they are part of the tree. */
    if (within_real && (i == 0 || path_is_under(o->path, within_real))) {
        lo.within = within_real;
        io->lint_within = 1;
    }
    if (cf_rpath_lint(elf, &lo, &io->lint, &err) != 0) {
        add_problem(t, CF_INSPECT_UNREADABLE, CF_LINT_WARNING, i, o->path,
                    cf_asprintf("RPATH lint: %s", cf_error_message(&err)));
        cf_error_clear(&err);
    }
    for (size_t k = 0; k < io->lint.n; k++) {
        const struct cf_rpath_finding *f = &io->lint.findings[k];
        if (f->severity == CF_LINT_INFO)
            continue;
        add_problem(t, CF_INSPECT_LINT, f->severity, i, o->path,
                    cf_asprintf("%s: %s", cf_rpath_kind_name(f->kind), f->message));
    }
    if (cf_elf_check_intact(elf, &err) != 0) {
        io->error = cf_strdup(cf_error_message(&err));
        add_problem(t, CF_INSPECT_UNREADABLE, CF_LINT_ERROR, i, o->path, cf_strdup(io->error));
        cf_error_clear(&err);
    }
    if (keep)
        *keep = elf;
    else
        cf_elf_close(elf);
}

static void closure_problems(struct cf_inspect_target *t)
{
    const struct cf_ldso_result *c = &t->closure;
    struct strvec missing = STRVEC_INIT;
    for (size_t i = 0; i < c->n_nodes; i++) {
        const struct cf_ldso_node *n = &c->nodes[i];
        const char *needer = n->parent >= 0 ? c->objects[n->parent].path : NULL;
        if (n->object < 0 && n->error) {
            add_problem(t, CF_INSPECT_LOAD_ERROR, CF_LINT_ERROR, n->parent, needer,
                        cf_asprintf("%s (needed by %s)", n->error, needer ? needer : "?"));
        } else if (n->object < 0) {
            if (cf_strvec_contains(&missing, n->needed))
                continue;
            cf_strvec_push(&missing, n->needed);
            add_problem(t, CF_INSPECT_MISSING, CF_LINT_ERROR, n->parent, needer,
                        cf_asprintf("%s => not found (needed by %s)", n->needed, needer ? needer : "?"));
        } else if (n->error) {
            add_problem(t, CF_INSPECT_UNREADABLE, CF_LINT_ERROR, n->object, n->path,
                        cf_asprintf("%s", n->error));
        }
    }
    cf_strvec_clear(&missing);
}

static void copies_problem(struct cf_inspect_target *t)
{
    const struct cf_ldso_result *c = &t->closure;
    const struct cf_commlib_identity **ids = cf_xcalloc(c->n_objects ? c->n_objects : 1, sizeof *ids);
    size_t n = 0;
    for (size_t i = 0; i < c->n_objects; i++)
        if (t->objects[i].commlib_scanned)
            ids[n++] = &t->objects[i].commlib;
    t->nccl_copies = cf_commlib_copies(ids, n);
    free(ids);
    if (t->nccl_copies < 2)
        return;
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addf(&sb, "%zu NCCL/RCCL copies in one process:", t->nccl_copies);
    unsigned first_code = 0;
    int differ = 0;
    const char *sep = " ";
    for (size_t i = 0; i < c->n_objects; i++) {
        const struct cf_inspect_object *io = &t->objects[i];
        if (!io->commlib_scanned || !io->commlib.found)
            continue;
        char *v = cf_inspect_describe_banner(&io->commlib.banner);
        cf_sb_addf(&sb, "%s%s %s %s", sep, c->objects[i].path, io->commlib.embeds_copy ? "embeds" : "is", v);
        free(v);
        sep = "; ";
        if (!first_code)
            first_code = io->commlib.banner.version_code;
        differ |= io->commlib.banner.version_code != first_code;
    }
    cf_sb_adds(&sb, differ ? ". They differ in version and share no state"
                        : ". They share no state (communicators, initialisation)");
    cf_sb_addf(&sb, "; keep one copy: build the embedding object against the shared library, or preload one"
                    " matching %s", cf_comm_profile(CF_COMMLIB_NCCL)->soname);
    add_problem(t, CF_INSPECT_NCCL_COPIES, CF_LINT_WARNING, -1, NULL, cf_sb_detach(&sb));
}

static void symbol_problems(struct cf_inspect_target *t)
{
    for (size_t i = 0; i < t->symcheck.n_problems; i++) {
        const struct cf_symcheck_problem *p = &t->symcheck.problems[i];
        enum cf_inspect_problem_kind kind = p->kind == CF_SYMCHECK_UNDEFINED ? CF_INSPECT_UNDEFINED_SYMBOL
                                                                            : CF_INSPECT_VERSION_NOT_FOUND;
        long obj = -1;
        for (size_t k = 0; k < t->closure.n_objects && p->object; k++)
            if (strcmp(t->closure.objects[k].path, p->object) == 0) {
                obj = (long)k;
                break;
            }
        add_problem(t, kind, CF_LINT_ERROR, obj, p->object, cf_strdup(p->message));
    }
}

static void inspect_target(const struct cf_inspect_opts *opts, const struct cf_ldso_opts *lo,
                           struct cf_scan_cache *cache, const char *within_real, struct cf_inspect_target *t)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_is_dir(t->file)) {
        t->error = cf_asprintf("%s: is a directory, not an ELF file (name the libraries inside it)", t->file);
    } else if (cf_ldso_resolve(t->file, lo, &t->closure, &err) != 0) {
        t->error = cf_strdup(cf_error_message(&err));
        cf_error_clear(&err);
    }
    if (t->error) {
        add_problem(t, CF_INSPECT_BAD_INPUT, CF_LINT_ERROR, -1, t->file, cf_strdup(t->error));
        return;
    }
    t->objects = cf_xcalloc(t->closure.n_objects ? t->closure.n_objects : 1, sizeof *t->objects);
    closure_problems(t);
    /* With --undefined the objects stay open for the symbol check: one open each. */
    struct cf_elf **elves = opts->undefined ? cf_xcalloc(t->closure.n_objects + 1, sizeof *elves) : NULL;
    for (size_t i = 0; i < t->closure.n_objects; i++)
        scan_object(opts, cache, t, (long)i, within_real, elves ? &elves[i] : NULL);
    copies_problem(t);
    if (opts->undefined) {
        if (cf_symcheck_run_opened(&t->closure, elves, &t->symcheck, &err) != 0) {
            add_problem(t, CF_INSPECT_UNREADABLE, CF_LINT_ERROR, -1, t->file,
                        cf_asprintf("symbol check: %s", cf_error_message(&err)));
            cf_error_clear(&err);
        } else {
            t->symcheck_done = 1;
            symbol_problems(t);
        }
        for (size_t i = 0; i < t->closure.n_objects; i++) {
            if (elves[i] && !t->objects[i].error && cf_elf_check_intact(elves[i], &err) != 0) {
                add_problem(t, CF_INSPECT_UNREADABLE, CF_LINT_ERROR, (long)i, t->closure.objects[i].path,
                            cf_asprintf("symbol check: %s", cf_error_message(&err)));
                cf_error_clear(&err);
            }
            cf_elf_close(elves[i]);
        }
        free(elves);
    }
}

static struct cf_inspect_target *new_target(struct cf_inspect_result *r, const char *file)
{
    r->targets = cf_xrealloc(r->targets, (r->n_targets + 1) * sizeof *r->targets);
    struct cf_inspect_target *t = &r->targets[r->n_targets++];
    memset(t, 0, sizeof *t);
    t->file = cf_strdup(file);
    return t;
}

/* The machine and class of a default program here: those of this very binary. */
static void host_program_abi(unsigned *machine, int *elf_class, int *big_endian)
{
    *machine = EM_X86_64;
    *elf_class = (int)(sizeof(void *) * 8);
    *big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
    struct cf_elf *self;
    char *exe = cf_self_exe();
    int opened = cf_elf_open(exe ? exe : "/proc/self/exe", &self, NULL) == 0;
    free(exe);
    if (opened) {
        const struct cf_elf_header *h = cf_elf_get_header(self);
        *machine = h->machine;
        *elf_class = h->elf_class;
        *big_endian = h->big_endian;
        cf_elf_close(self);
    }
}

static int locate_defaults(const struct cf_ldso_opts *lo, struct cf_inspect_result *r, cf_error *err)
{
    unsigned machine;
    int elf_class, big_endian;
    host_program_abi(&machine, &elf_class, &big_endian);
    /* every comm library's soname: libnccl.so.2, librccl.so.1 */
    static const enum cf_commlib libs[] = { CF_COMMLIB_NCCL, CF_COMMLIB_RCCL };
    size_t n = sizeof libs / sizeof libs[0];
    r->lookups = cf_xcalloc(n, sizeof *r->lookups);
    for (size_t i = 0; i < n; i++) {
        struct cf_inspect_lookup *l = &r->lookups[r->n_lookups];
        l->name = cf_comm_profile(libs[i])->soname;
        if (cf_ldso_locate(l->name, machine, elf_class, big_endian, lo, &l->node, err) != 0)
            return -1;
        r->n_lookups++;
    }
    return 0;
}

int cf_inspect_run(const struct cf_inspect_opts *opts, struct cf_inspect_result *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    char *within_real = NULL;
    if (opts->within) {
        if (!cf_is_dir(opts->within))
            return cf_error_set(err, CF_ERR_USAGE, "--within %s: not a directory", opts->within);
        within_real = cf_realpath(opts->within);
    }
    if (opts->root && !cf_is_dir(opts->root)) {
        free(within_real);
        return cf_error_set(err, CF_ERR_USAGE, "--root %s: not a directory", opts->root);
    }
    struct cf_glibc g;
    struct cf_cpu_facts cpu;
    if ((opts->glibc && cf_glibc_parse(opts->glibc, &g, err) != 0) ||
        (opts->cpu && cf_cpu_parse(opts->cpu, NULL, &cpu, err) != 0)) {
        free(within_real);
        return -1;
    }
    struct cf_ldso_facts facts = { 0 };
    struct cf_scan_cache *cache = cf_scan_cache_new(opts->cache_dir, !opts->no_cache, 0);
    struct cf_ldso_opts lo = {
        .root = opts->root,
        .ld_library_path = opts->ld_library_path,
        .ignore_ld_library_path = opts->ignore_ld_library_path,
        .explain = opts->explain,
        .glibc = opts->glibc,
        .cpu = opts->cpu,
        .facts_cache = &facts, /* one glibc read and cpuid probe for all targets */
        .keep_open = 1,        /* each object is read again next: open once */
    };
    if (opts->n_files == 0) {
        out->default_mode = 1;
        if (locate_defaults(&lo, out, err) != 0) {
            cf_scan_cache_free(cache);
            free(within_real);
            cf_inspect_result_release(out);
            return -1;
        }
        for (size_t i = 0; i < out->n_lookups; i++)
            if (out->lookups[i].node.path)
                new_target(out, out->lookups[i].node.path)->located_as = out->lookups[i].name;
    } else {
        for (size_t i = 0; i < opts->n_files; i++)
            new_target(out, opts->files[i]);
    }
    for (size_t i = 0; i < out->n_targets; i++) {
        inspect_target(opts, &lo, cache, within_real, &out->targets[i]);
        out->n_errors += out->targets[i].n_errors;
        out->n_warnings += out->targets[i].n_warnings;
    }
    struct cf_scan_cache_stats st;
    cf_scan_cache_stats(cache, &st);
    out->cache_dir = cf_strdup(cf_scan_cache_dir(cache));
    out->cache_memory_hits = st.memory_hits;
    out->cache_disk_hits = st.disk_hits;
    out->cache_misses = st.misses;
    out->cache_stored = st.stored;
    out->cache_evicted = st.evicted;
    cf_scan_cache_free(cache);
    free(within_real);
    return 0;
}

static void release_target(struct cf_inspect_target *t)
{
    for (size_t i = 0; t->objects && i < t->closure.n_objects; i++) {
        struct cf_inspect_object *io = &t->objects[i];
        free(io->error);
        cf_gpucode_inventory_release(&io->gpu);
        cf_rpath_lint_release(&io->lint);
    }
    free(t->objects);
    cf_ldso_result_release(&t->closure);
    if (t->symcheck_done)
        cf_symcheck_result_release(&t->symcheck);
    for (size_t i = 0; i < t->n_problems; i++) {
        free(t->problems[i].path);
        free(t->problems[i].message);
    }
    free(t->problems);
    free(t->file);
    free(t->error);
}

void cf_inspect_result_release(struct cf_inspect_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->n_targets; i++)
        release_target(&res->targets[i]);
    free(res->targets);
    for (size_t i = 0; i < res->n_lookups; i++)
        cf_ldso_node_release(&res->lookups[i].node);
    free(res->lookups);
    free(res->cache_dir);
    memset(res, 0, sizeof *res);
}
