/* cclforge inspect: flags in, one cf_inspect_run call, a tree (or JSON) out. */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/cpufacts.h"
#include "cclforge/inspect.h"
#include "cclforge/strbuf.h"
#include "cli/term.h"
#include "cli/builtin.h"
#include "cli/cli.h"

static const char usage[] =
    "usage: cclforge inspect [options] [FILE...]\n"
    "\n"
    "Static, glibc-exact view of how the loader would link each ELF FILE: the\n"
    "dependency tree with where and why every library was found, NCCL/RCCL\n"
    "banners and versions, GPU code archs (CUDA SASS/PTX, AMD targets), RPATH\n"
    "lint and, with --undefined, the symbol check of `ldd -r`. Nothing inspected\n"
    "is executed or loaded.\n"
    "\n"
    "With no FILE: find libnccl.so.2 and librccl.so.1 as a program on this\n"
    "machine would (LD_LIBRARY_PATH, ld.so.cache, default directories) and\n"
    "inspect what is found.\n"
    "\n"
    "options:\n"
    "  --root DIR               resolve inside a sysroot or unpacked package (its own glibc's rules)\n"
    "  --glibc X.Y              follow glibc X.Y's loader rules (plan for another host)\n"
    "  --cpu SPEC               plan for another CPU: intel|amd|hygon|zhaoxin|other|host[,x86-64-vN|,xeon-phi]\n"
    "                           [,+FEATURE|,-FEATURE][,family=N,model=N] (default: this CPU, from cpuid)\n"
    "  --ld-library-path PATH   use PATH instead of the environment's LD_LIBRARY_PATH\n"
    "  --ignore-ld-library-path behave as if LD_LIBRARY_PATH were unset\n"
    "  -u, --undefined          check symbols and versions like `ldd -r`\n"
    "  --within DIR             lint: RPATH/RUNPATH entries must stay inside DIR\n"
    "  -e, --explain            list every path considered, for every library, and each long\n"
    "                           search list's directories (printed once, not once per library)\n"
    "  -a, --all                also show libraries already loaded by another object\n"
    "  --depth N                show the tree down to depth N (roots are depth 0)\n"
    "  --flat                   one line per library in load order instead of a tree\n"
    "  --no-gpu                 skip the GPU code scan\n"
    "  --no-banner              skip the NCCL/RCCL banner scan (and the two-copies check)\n"
    "  --no-cache               scan every file again; use and keep no scan results on disk\n"
    "  --json                   print a cclforge.inspect/1 JSON document\n"
    "  -h, --help               this help\n"
    CLI_HELP_COLOR("           ")
    "\n"
    "examples:\n"
    "  cclforge inspect                                  # the NCCL/RCCL a program here would load\n"
    "  cclforge inspect -u --explain libtorch_cuda.so    # missing libraries and symbols, every path tried\n"
    "  cclforge inspect --within wheel/ --json wheel/pkg/_ext.so\n"
    "\n"
    "Exit status: 0 fine (warnings allowed); 1 a library is missing, a symbol or\n"
    "version is undefined (with --undefined), an error-severity lint finding, or\n"
    "a FILE that cannot be inspected (missing, not ELF, truncated, a directory);\n"
    "2 usage error.\n"
    "Documentation: docs/inspect.md, JSON schema: docs/schemas/inspect.md.\n";

struct view {
    FILE *f;
    int explain, all, flat;
    int max_depth;
    int facts; /* print the glibc and CPU facts first (--explain, --glibc, --cpu) */
};

static const char *col(const struct view *v, enum cf_color c) { return cf_term_color(v->f, c); }

/* --- text -------------------------------------------------------------- */

static void add_arch_list(struct strbuf *sb, const char *label, const struct cf_arch *archs, size_t n)
{
    if (n == 0)
        return;
    if (sb->len)
        cf_sb_adds(sb, " · ");
    cf_sb_adds(sb, label);
    for (size_t i = 0; i < n; i++)
        cf_sb_addf(sb, " %s", archs[i].name);
}

/* "NCCL 2.28.9+cuda13.0 (code 22809) · SASS sm_75 ... · PTX compute_120"; "" when nothing. */
static char *object_facts(const struct cf_inspect_object *io)
{
    struct strbuf sb = STRBUF_INIT;
    if (io->commlib_scanned && io->commlib.found) {
        char *b = cf_inspect_describe_banner(&io->commlib.banner);
        cf_sb_adds(&sb, b);
        free(b);
        if (io->commlib.embeds_copy)
            cf_sb_addf(&sb, ", embedded copy");
        for (size_t i = 1; i < io->commlib.n_banners; i++) {
            char *o = cf_inspect_describe_banner(&io->commlib.banners[i]);
            cf_sb_addf(&sb, "; also %s", o);
            free(o);
        }
    }
    if (io->gpu_scanned) {
        const struct cf_gpucode_inventory *g = &io->gpu;
        add_arch_list(&sb, "SASS", g->sass, g->n_sass);
        add_arch_list(&sb, "PTX", g->ptx, g->n_ptx);
        add_arch_list(&sb, "LTO-IR", g->ltoir, g->n_ltoir);
        if (g->amd_targets.n) {
            if (sb.len)
                cf_sb_adds(&sb, " · ");
            cf_sb_adds(&sb, "AMD");
            for (size_t i = 0; i < g->amd_targets.n; i++)
                cf_sb_addf(&sb, " %s", g->amd_targets.v[i]);
        }
        /* Where code outside the fatbin sections was, so "no .nv_fatbin" is not read as "no GPU code". */
        const char *sep = " (fatbins also in ";
        for (size_t i = 0; i < g->n_sections; i++)
            if (g->sections[i].embedded) {
                cf_sb_addf(&sb, "%s%s: %zu", sep, g->sections[i].name, g->sections[i].containers);
                sep = ", ";
            }
        if (*sep == ',')
            cf_sb_addc(&sb, ')');
    }
    return cf_sb_detach(&sb);
}

static void print_considered(const struct view *v, const char *prefix, const struct cf_ldso_node *n)
{
    for (size_t i = 0; i < n->n_considered; i++) {
        const struct cf_ldso_candidate *k = &n->considered[i];
        /* a run of a long search list: its first path, then "…"; the list is printed once, below */
        fprintf(v->f, "%s%s%s%s  [%s] %s%s%s%s\n", prefix, col(v, CF_DIM), cli_safe(k->path), k->list >= 0 ? " …" : "",
                cf_ldso_reason_name(k->source), cf_ldso_reject_name(k->reject), k->detail ? ": " : "", cli_safe(k->detail),
                col(v, CF_RESET));
    }
}

/* Each long search list once, however many names were searched in it; its
 * directories with --explain. */
static void print_search_lists(const struct view *v, const struct cf_ldso_result *c)
{
    for (size_t i = 0; i < c->n_lists; i++) {
        const struct cf_ldso_search_list *l = &c->lists[i];
        fprintf(v->f, "%ssearch list %zu: %s%s%s, %zu directories (%zu do not exist)%s%s\n", col(v, CF_DIM), i + 1,
                cf_ldso_reason_name(l->source), l->via >= 0 ? " of " : "",
                l->via >= 0 ? cli_safe(c->objects[l->via].path) : "", l->dirs.n, l->n_missing,
                v->explain ? ":" : "; --explain lists them", col(v, CF_RESET));
        for (size_t d = 0; v->explain && d < l->dirs.n; d++)
            fprintf(v->f, "    %s%s%s%s\n", col(v, CF_DIM), *l->dirs.v[d] ? cli_safe(l->dirs.v[d]) : "(the current directory)",
                    l->missing[d] ? "  does not exist" : "", col(v, CF_RESET));
    }
}

/* An "already loaded" entry that is where the object joined the load order
 * (the dynamic loader, mapped from the start) is shown like a found one. */
static int owns_object(const struct cf_ldso_result *c, long node)
{
    const struct cf_ldso_node *n = &c->nodes[node];
    return n->object >= 0 && c->objects[n->object].node == node;
}

static int hidden(const struct view *v, const struct cf_ldso_result *c, long node)
{
    return !v->all && c->nodes[node].reason == CF_LDSO_ALREADY_LOADED && !owns_object(c, node);
}

static void print_node_line(const struct view *v, const struct cf_ldso_result *c, const struct cf_ldso_node *n)
{
    if (n->object < 0) {
        fprintf(v->f, "%s%s%s => %s%s\n", col(v, CF_RED), col(v, CF_BOLD), cli_safe(n->needed),
                n->error ? cli_safe(n->error) : "not found", col(v, CF_RESET));
        return;
    }
    int interp = c->objects[n->object].is_interp;
    char *why = interp && n->reason == CF_LDSO_ALREADY_LOADED ? cf_strdup("the dynamic loader")
                                                              : cf_ldso_describe_reason(n);
    const char *label = interp && n->reason != CF_LDSO_ALREADY_LOADED ? ", the dynamic loader" : "";
    if (n->reason == CF_LDSO_ROOT)
        fprintf(v->f, "%s%s%s\n", col(v, CF_BOLD), cli_safe(n->path), col(v, CF_RESET));
    else
        fprintf(v->f, "%s => %s %s[%s%s]%s\n", cli_safe(n->needed), cli_safe(n->path), col(v, CF_DIM), cli_safe(why),
                label, col(v, CF_RESET));
    free(why);
}

struct tree {
    const struct view *v;
    const struct cf_inspect_target *t;
    long **children; /* per object: child node indices, -1 terminated */
};

static void print_subtree(const struct tree *tr, long node, struct strbuf *prefix)
{
    const struct cf_ldso_result *c = &tr->t->closure;
    const struct cf_ldso_node *n = &c->nodes[node];
    int owns = owns_object(c, node);
    struct strbuf sub = STRBUF_INIT;
    cf_sb_addf(&sub, "%s    ", cf_sb_str(prefix));
    if (n->reason == CF_LDSO_ROOT && tr->t->is_static)
        fprintf(tr->v->f, "%s%sstatically linked: no dynamic section, the loader maps nothing else%s\n",
                cf_sb_str(&sub), col(tr->v, CF_DIM), col(tr->v, CF_RESET));
    if (owns) {
        char *facts = object_facts(&tr->t->objects[n->object]);
        if (*facts)
            fprintf(tr->v->f, "%s%s%s%s\n", cf_sb_str(&sub), col(tr->v, CF_CYAN), cli_safe(facts), col(tr->v, CF_RESET));
        free(facts);
    }
    if ((n->object < 0 || tr->v->explain) && n->reason != CF_LDSO_ROOT && n->reason != CF_LDSO_ALREADY_LOADED)
        print_considered(tr->v, cf_sb_str(&sub), n);
    cf_sb_release(&sub);
    if (!owns)
        return;
    const long *kids = tr->children[n->object];
    size_t nk = 0, shown = 0;
    for (const long *k = kids; *k >= 0; k++)
        if (!hidden(tr->v, c, *k))
            nk++;
    if (nk && tr->v->max_depth >= 0 && n->depth >= tr->v->max_depth) {
        fprintf(tr->v->f, "%s└── %s… %zu more below --depth %d%s\n", cf_sb_str(prefix), col(tr->v, CF_DIM), nk,
                tr->v->max_depth, col(tr->v, CF_RESET));
        return;
    }
    for (const long *k = kids; *k >= 0; k++) {
        const struct cf_ldso_node *kn = &c->nodes[*k];
        if (hidden(tr->v, c, *k))
            continue;
        int last = ++shown == nk;
        fprintf(tr->v->f, "%s%s", cf_sb_str(prefix), last ? "└── " : "├── ");
        print_node_line(tr->v, c, kn);
        size_t len = prefix->len;
        cf_sb_adds(prefix, last ? "    " : "│   ");
        print_subtree(tr, *k, prefix);
        cf_sb_setlen(prefix, len);
    }
}

static void print_tree(const struct view *v, const struct cf_inspect_target *t)
{
    const struct cf_ldso_result *c = &t->closure;
    struct tree tr = { v, t, cf_xcalloc(c->n_objects ? c->n_objects : 1, sizeof(long *)) };
    size_t *count = cf_xcalloc(c->n_objects ? c->n_objects : 1, sizeof *count);
    for (size_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].parent >= 0)
            count[c->nodes[i].parent]++;
    for (size_t o = 0; o < c->n_objects; o++) {
        tr.children[o] = cf_xmalloc((count[o] + 1) * sizeof(long));
        count[o] = 0;
    }
    for (size_t i = 0; i < c->n_nodes; i++) {
        long p = c->nodes[i].parent;
        if (p >= 0)
            tr.children[p][count[p]++] = (long)i;
    }
    for (size_t o = 0; o < c->n_objects; o++)
        tr.children[o][count[o]] = -1;
    for (size_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].parent < 0) {
            struct strbuf prefix = STRBUF_INIT;
            print_node_line(v, c, &c->nodes[i]);
            print_subtree(&tr, (long)i, &prefix);
            cf_sb_release(&prefix);
        }
    for (size_t o = 0; o < c->n_objects; o++)
        free(tr.children[o]);
    free(tr.children);
    free(count);
}

static void print_flat(const struct view *v, const struct cf_inspect_target *t)
{
    const struct cf_ldso_result *c = &t->closure;
    for (size_t i = 0; i < c->n_nodes; i++) {
        const struct cf_ldso_node *n = &c->nodes[i];
        if (hidden(v, c, (long)i))
            continue;
        if (n->reason != CF_LDSO_ROOT)
            fputs("    ", v->f);
        print_node_line(v, c, n);
        if (n->object >= 0 && c->objects[n->object].node == (long)i) {
            char *facts = object_facts(&t->objects[n->object]);
            if (*facts)
                fprintf(v->f, "        %s%s%s\n", col(v, CF_CYAN), cli_safe(facts), col(v, CF_RESET));
            free(facts);
        }
        if ((n->object < 0 || v->explain) && n->reason != CF_LDSO_ROOT && n->reason != CF_LDSO_ALREADY_LOADED)
            print_considered(v, "        ", n);
    }
}

static void print_problems(const struct view *v, const struct cf_inspect_target *t)
{
    fputc('\n', v->f);
    for (size_t i = 0; i < t->n_problems; i++) {
        const struct cf_inspect_problem *p = &t->problems[i];
        enum cf_color c = p->severity == CF_LINT_ERROR ? CF_RED : p->severity == CF_LINT_WARNING ? CF_YELLOW : CF_DIM;
        int show_path = p->path && p->kind == CF_INSPECT_LINT;
        fprintf(v->f, "%s%s%s [%s] %s%s%s\n", col(v, c), cf_lint_severity_name(p->severity), col(v, CF_RESET),
                cf_inspect_problem_kind_name(p->kind), show_path ? cli_safe(p->path) : "", show_path ? ": " : "",
                cli_safe(p->message));
    }
}

static void print_target_summary(const struct view *v, const struct cf_inspect_target *t)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addf(&sb, "%zu object%s, %zu missing", t->closure.n_objects, t->closure.n_objects == 1 ? "" : "s",
            cf_inspect_count(t, CF_INSPECT_MISSING));
    if (t->symcheck_done)
        cf_sb_addf(&sb, ", %zu undefined symbol%s, %zu missing version%s", t->symcheck.n_undefined,
                t->symcheck.n_undefined == 1 ? "" : "s", t->symcheck.n_versions, t->symcheck.n_versions == 1 ? "" : "s");
    if (t->nccl_copies)
        cf_sb_addf(&sb, ", %zu NCCL/RCCL cop%s", t->nccl_copies, t->nccl_copies == 1 ? "y" : "ies");
    enum cf_color c = t->n_errors ? CF_RED : t->n_warnings ? CF_YELLOW : CF_GREEN;
    fprintf(v->f, "%s%s: %s; %zu error%s, %zu warning%s%s\n", col(v, c), cli_safe(t->file), cf_sb_str(&sb), t->n_errors,
            t->n_errors == 1 ? "" : "s", t->n_warnings, t->n_warnings == 1 ? "" : "s", col(v, CF_RESET));
    cf_sb_release(&sb);
}

static void print_lookups(const struct view *v, const struct cf_inspect_result *r)
{
    fprintf(v->f, "%sComm libraries a program on this machine would load%s (LD_LIBRARY_PATH, ld.so.cache, default dirs):\n",
            col(v, CF_BOLD), col(v, CF_RESET));
    for (size_t i = 0; i < r->n_lookups; i++) {
        const struct cf_ldso_node *n = &r->lookups[i].node;
        if (n->path) {
            char *why = cf_ldso_describe_reason(n);
            fprintf(v->f, "  %s => %s %s[%s]%s\n", cli_safe(r->lookups[i].name), cli_safe(n->path), col(v, CF_DIM),
                    cli_safe(why), col(v, CF_RESET));
            free(why);
        } else {
            fprintf(v->f, "  %s => %snot found%s (%zu paths considered%s)\n", cli_safe(r->lookups[i].name), col(v, CF_YELLOW),
                    col(v, CF_RESET), n->n_considered, v->explain ? "" : "; --explain lists them");
        }
        if (v->explain)
            print_considered(v, "      ", n);
    }
    if (r->n_targets == 0)
        fprintf(v->f, "No NCCL or RCCL library is visible to the loader here; name files to inspect them.\n");
}

/* "glibc 2.36 (/lib64/ld-linux-x86-64.so.2) · CPU intel x86-64-v4 (cpuid) · hwcaps x86-64-v4 x86-64-v3 ..." */
static void print_facts(const struct view *v, const struct cf_ldso_result *c)
{
    const struct cf_ldso_facts *f = &c->facts;
    fprintf(v->f, "%sglibc %u.%u (%s) · CPU %s x86-64-v%d (%s)", col(v, CF_DIM), f->glibc.major, f->glibc.minor,
            f->glibc_source, cf_cpu_vendor_name(f->cpu.vendor), cf_cpu_isa_level(&f->cpu), f->cpu.source);
    fprintf(v->f, " · $PLATFORM %s", c->dst_platform ? c->dst_platform : "(none)");
    if (c->hwcaps.n) {
        fputs(" · glibc-hwcaps", v->f);
        for (size_t i = 0; i < c->hwcaps.n; i++)
            fprintf(v->f, " %s", c->hwcaps.v[i]);
    }
    if (c->legacy_hwcaps.n) {
        fputs(" · legacy", v->f);
        for (size_t i = 0; i < c->legacy_hwcaps.n; i++)
            fprintf(v->f, " %s", c->legacy_hwcaps.v[i]);
    }
    fprintf(v->f, "%s\n", col(v, CF_RESET));
}

static void print_text(const struct view *v, const struct cf_inspect_result *r)
{
    for (size_t i = 0; v->facts && i < r->n_targets; i++)
        if (!r->targets[i].error) {
            print_facts(v, &r->targets[i].closure);
            break;
        }
    if (r->default_mode) {
        print_lookups(v, r);
        if (r->n_targets)
            fputc('\n', v->f);
    }
    for (size_t i = 0; i < r->n_targets; i++) {
        const struct cf_inspect_target *t = &r->targets[i];
        if (i)
            fputc('\n', v->f);
        if (t->error) {
            fprintf(v->f, "%snot inspected: %s%s\n", col(v, CF_RED), cli_safe(t->error), col(v, CF_RESET));
            continue;
        }
        if (v->flat) {
            print_flat(v, t);
        } else {
            print_tree(v, t);
        }
        print_search_lists(v, &t->closure);
        print_problems(v, t);
        print_target_summary(v, t);
    }
    if (r->n_targets > 1) {
        enum cf_color c = r->n_errors ? CF_RED : r->n_warnings ? CF_YELLOW : CF_GREEN;
        fprintf(v->f, "\n%s%zu files: %zu error%s, %zu warning%s%s\n", col(v, c), r->n_targets, r->n_errors,
                r->n_errors == 1 ? "" : "s", r->n_warnings, r->n_warnings == 1 ? "" : "s", col(v, CF_RESET));
    }
}

static void print_result(struct view *view, int json, const struct cf_inspect_opts *opts,
                         const struct cf_inspect_result *res)
{
    if (json) {
        cli_print_json(cf_inspect_json(opts, res));
        return;
    }
    print_text(view, res);
    for (size_t i = 0; i < res->n_targets; i++)
        if (res->targets[i].error)
            cli_error("inspect", "%s", res->targets[i].error);
}

/* --- flags ------------------------------------------------------------- */

enum { OPT_ROOT = 256, OPT_GLIBC, OPT_CPU, OPT_NO_CACHE, OPT_LLP, OPT_IGNORE_LLP, OPT_WITHIN, OPT_DEPTH, OPT_FLAT, OPT_NO_GPU, OPT_NO_BANNER, OPT_JSON };

int cmd_inspect(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "root", required_argument, NULL, OPT_ROOT },
        { "glibc", required_argument, NULL, OPT_GLIBC },
        { "cpu", required_argument, NULL, OPT_CPU },
        { "ld-library-path", required_argument, NULL, OPT_LLP },
        { "ignore-ld-library-path", no_argument, NULL, OPT_IGNORE_LLP },
        { "undefined", no_argument, NULL, 'u' },
        { "within", required_argument, NULL, OPT_WITHIN },
        { "explain", no_argument, NULL, 'e' },
        { "all", no_argument, NULL, 'a' },
        { "depth", required_argument, NULL, OPT_DEPTH },
        { "flat", no_argument, NULL, OPT_FLAT },
        { "no-gpu", no_argument, NULL, OPT_NO_GPU },
        { "no-banner", no_argument, NULL, OPT_NO_BANNER },
        { "no-cache", no_argument, NULL, OPT_NO_CACHE },
        { "json", no_argument, NULL, OPT_JSON },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct cf_inspect_opts opts = { 0 };
    struct view view = { stdout, 0, 0, 0, -1, 0 };
    int json = 0;
    opterr = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "ueah", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_ROOT: opts.root = optarg; break;
        case OPT_GLIBC: opts.glibc = optarg; break;
        case OPT_CPU: opts.cpu = optarg; break;
        case OPT_LLP: opts.ld_library_path = optarg; break;
        case OPT_IGNORE_LLP: opts.ignore_ld_library_path = 1; break;
        case 'u': opts.undefined = 1; break;
        case OPT_WITHIN: opts.within = optarg; break;
        case 'e': opts.explain = 1; view.explain = 1; break;
        case 'a': view.all = 1; break;
        case OPT_DEPTH: {
            long long d;
            cf_error err = CF_ERROR_INIT;
            if (cli_whole("--depth", "a depth", optarg, 0, INT_MAX, &d, &err))
                return cli_usage_fail("inspect", &err);
            view.max_depth = (int)d;
            break;
        }
        case OPT_FLAT: view.flat = 1; break;
        case OPT_NO_GPU: opts.no_gpu = 1; break;
        case OPT_NO_BANNER: opts.no_banner = 1; break;
        case OPT_NO_CACHE: opts.no_cache = 1; break;
        case OPT_JSON: json = 1; break;
        case 'h': fputs(usage, stdout); return EXIT_FINE;
        default:
            if (optopt && optopt < 256)
                return cli_usage("inspect", "unknown option '-%c'", optopt);
            return cli_usage("inspect", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (opts.ld_library_path && opts.ignore_ld_library_path)
        return cli_usage("inspect", "--ld-library-path and --ignore-ld-library-path exclude each other");
    view.facts = view.explain || opts.glibc || opts.cpu;
    opts.files = (const char *const *)(argv + optind);
    opts.n_files = (size_t)(argc - optind);

    struct cf_inspect_result res;
    cf_error err = CF_ERROR_INIT;
    if (cf_inspect_run(&opts, &res, &err) != 0)
        return cli_fail("inspect", &err);
    int code = res.n_errors ? EXIT_PROBLEMS : EXIT_FINE;
    print_result(&view, json, &opts, &res);
    cf_inspect_result_release(&res);
    return code;
}
