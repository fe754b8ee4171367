/* RPATH / RUNPATH lint. Entries are split and expanded the way glibc's loader
 * does (elf/dl-load.c: an empty entry is "./", a DST with an unknown value drops
 * the entry, trailing slashes go); each problem kind is one row of a table. */
#include "cclforge/rpath_lint.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cclforge/dst.h"
#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

static const struct {
    enum cf_rpath_finding_kind kind;
    const char *name;
    enum cf_lint_severity severity;
    const char *explanation; /* follows "<TAG> entry '<entry>' " */
} kinds[CF_RPATH_KIND_COUNT] = {
    { CF_RPATH_ABSOLUTE, "absolute", CF_LINT_WARNING,
      "is absolute: the object finds its dependencies only on machines with that directory; relocatable packages use $ORIGIN-relative entries" },
    { CF_RPATH_RELATIVE, "relative", CF_LINT_ERROR,
      "is relative: the loader resolves it against the current directory of the process, not the object's; write it as $ORIGIN/..." },
    { CF_RPATH_EMPTY, "empty", CF_LINT_ERROR,
      "is empty (a stray ':'): the loader searches the current directory of the process; remove the extra ':'" },
    { CF_RPATH_MISSING_DIR, "missing-dir", CF_LINT_WARNING,
      "names a directory that does not exist" },
    { CF_RPATH_BOTH_TAGS, "rpath-and-runpath", CF_LINT_WARNING,
      "is ignored: the object also has DT_RUNPATH, and glibc then searches only RUNPATH (which applies to direct dependencies only); keep one of them" },
    { CF_RPATH_OUTSIDE_TREE, "outside-tree", CF_LINT_ERROR,
      "resolves outside the package tree" },
};

const char *cf_rpath_kind_name(enum cf_rpath_finding_kind kind)
{
    return (unsigned)kind < CF_RPATH_KIND_COUNT ? kinds[kind].name : "unknown";
}

enum cf_lint_severity cf_rpath_kind_severity(enum cf_rpath_finding_kind kind)
{
    return (unsigned)kind < CF_RPATH_KIND_COUNT ? kinds[kind].severity : CF_LINT_ERROR;
}

const char *cf_lint_severity_name(enum cf_lint_severity severity)
{
    static const char *const names[] = { "info", "warning", "error" };
    return (unsigned)severity < sizeof names / sizeof names[0] ? names[severity] : "error";
}

/* Findings of one kind in one tag listed before the rest are counted in one
 * more: a 40,000-entry RUNPATH is 80,000 findings otherwise. */
enum { LIST_PER_KIND = 8 };

struct lint_ctx {
    size_t seen[2][CF_RPATH_KIND_COUNT]; /* per tag (RPATH, RUNPATH) and kind */
    const char *origin;
    const char *lib;
    const char *platform;
    const char *root;
    char *within; /* canonical, or NULL */
    struct cf_rpath_lint *out;
};

static void add_finding(struct lint_ctx *ctx, enum cf_rpath_finding_kind kind, const char *tag, const char *entry,
                        const char *expanded, const char *detail)
{
    struct cf_rpath_lint *out = ctx->out;
    if (++ctx->seen[strcmp(tag, "RPATH") != 0][kind] > LIST_PER_KIND)
        return;
    out->findings = cf_xrealloc(out->findings, (out->n + 1) * sizeof *out->findings);
    struct cf_rpath_finding *f = &out->findings[out->n++];
    f->kind = kind;
    f->severity = kinds[kind].severity;
    f->tag = tag;
    f->entry = cf_strdup(entry);
    f->expanded = expanded ? cf_strdup(expanded) : NULL;
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addf(&sb, "%s entry '%s' %s", tag, entry, kinds[kind].explanation);
    if (detail)
        cf_sb_addf(&sb, " (%s)", detail);
    f->message = cf_sb_detach(&sb);
}

/* The canonical form of an absolute path that may not exist: the longest
 * existing ancestor through realpath (so symlinks and ".." follow the kernel),
 * the rest appended lexically. */
static char *canonical(const char *abs)
{
    char *norm = cf_path_normalize(abs, NULL);
    char *real = cf_realpath(abs);
    if (real) {
        free(norm);
        return real;
    }
    /* Walk up the lexical form until something exists. */
    size_t cut = strlen(norm);
    while (cut > 1) {
        while (cut > 1 && norm[cut - 1] != '/')
            cut--;
        if (cut > 1)
            cut--;
        char *head = cf_strndup(norm, cut ? cut : 1);
        char *head_real = cf_realpath(head);
        free(head);
        if (head_real) {
            char *joined = cf_path_join(head_real, norm + cut + (norm[cut] == '/'));
            free(head_real);
            free(norm);
            return joined;
        }
    }
    return norm;
}

static int path_is_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return path[0] == '/';
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void strip_trailing_slashes(char *s)
{
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/')
        s[--n] = '\0';
}

static void lint_entry(struct lint_ctx *ctx, const char *tag, const char *entry)
{
    if (!*entry) {
        add_finding(ctx, CF_RPATH_EMPTY, tag, entry, NULL, NULL);
        return;
    }
    char *expanded = cf_dst_expand(entry, ctx->origin, ctx->lib, ctx->platform);
    if (!expanded)
        return; /* a token without a value: the loader drops the entry */
    strip_trailing_slashes(expanded);
    if (entry[0] == '/')
        add_finding(ctx, CF_RPATH_ABSOLUTE, tag, entry, expanded, NULL);
    if (expanded[0] != '/') {
        add_finding(ctx, CF_RPATH_RELATIVE, tag, entry, expanded, NULL);
        free(expanded);
        return;
    }
    /* With a sysroot, absolute entries live under it; $ORIGIN ones already do. */
    char *location = ctx->root && entry[0] == '/' ? cf_asprintf("%s%s", ctx->root, expanded) : cf_strdup(expanded);
    if (!cf_is_dir(location)) {
        char *detail = cf_asprintf("looked for %s", location);
        add_finding(ctx, CF_RPATH_MISSING_DIR, tag, entry, expanded, detail);
        free(detail);
    }
    if (ctx->within) {
        char *canon = canonical(location);
        if (!path_is_under(canon, ctx->within)) {
            char *detail = cf_asprintf("%s is not under %s", canon, ctx->within);
            add_finding(ctx, CF_RPATH_OUTSIDE_TREE, tag, entry, expanded, detail);
            free(detail);
        }
        free(canon);
    }
    free(location);
    free(expanded);
}

/* One finding for the findings of each kind past the first LIST_PER_KIND. */
static void add_counts(struct lint_ctx *ctx, const char *tag)
{
    struct cf_rpath_lint *out = ctx->out;
    for (int kind = 0; kind < CF_RPATH_KIND_COUNT; kind++) {
        size_t seen = ctx->seen[strcmp(tag, "RPATH") != 0][kind];
        if (seen <= LIST_PER_KIND)
            continue;
        out->findings = cf_xrealloc(out->findings, (out->n + 1) * sizeof *out->findings);
        struct cf_rpath_finding *f = &out->findings[out->n++];
        f->kind = (enum cf_rpath_finding_kind)kind;
        f->severity = kinds[kind].severity;
        f->tag = tag;
        f->entry = cf_strdup("");
        f->expanded = NULL;
        f->message = cf_asprintf("%zu more %s entries (%zu in all, the first %d listed) each %s", seen - LIST_PER_KIND,
                                 tag, seen, LIST_PER_KIND, kinds[kind].explanation);
    }
}

static void lint_list(struct lint_ctx *ctx, const char *tag, const char *value)
{
    /* glibc ignores an RPATH/RUNPATH that is empty as a whole. */
    if (!value || !*value)
        return;
    struct strvec entries = STRVEC_INIT;
    cf_strvec_split(&entries, value, ":", 1);
    for (size_t i = 0; i < entries.n; i++)
        lint_entry(ctx, tag, entries.v[i]);
    cf_strvec_clear(&entries);
    add_counts(ctx, tag);
}

/* $ORIGIN as glibc forms it: the directory of the path the object was opened
 * by, made absolute but with symlinks left in place. */
static char *origin_of(const char *path)
{
    char *abs = cf_path_absolute(path);
    char *dir = cf_dirname(abs);
    free(abs);
    return dir;
}

int cf_rpath_lint(const struct cf_elf *elf, const struct cf_rpath_lint_opts *opts,
                  struct cf_rpath_lint *out, cf_error *err)
{
    static const struct cf_rpath_lint_opts no_opts = { 0 };
    if (!opts)
        opts = &no_opts;
    out->findings = NULL;
    out->n = 0;
    if (opts->within && !cf_is_dir(opts->within))
        return cf_error_set(err, CF_ERR_USAGE, "--within %s: not a directory", opts->within);

    struct utsname uts;
    char *origin = opts->origin_dir ? cf_strdup(opts->origin_dir) : origin_of(cf_elf_path(elf));
    struct lint_ctx ctx = {
        .origin = origin,
        .lib = opts->lib ? opts->lib : (cf_elf_get_header(elf)->elf_class == 64 ? "lib64" : "lib"),
        .platform = opts->platform ? opts->platform : (uname(&uts) == 0 ? uts.machine : NULL),
        .root = opts->root && *opts->root ? opts->root : NULL,
        .within = NULL,
        .out = out,
    };
    if (opts->within) {
        char *abs = cf_path_absolute(opts->within);
        ctx.within = canonical(abs);
        free(abs);
    }

    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    if (d->rpath && *d->rpath && d->runpath && *d->runpath)
        add_finding(&ctx, CF_RPATH_BOTH_TAGS, "RPATH", d->rpath, NULL, NULL);
    lint_list(&ctx, "RPATH", d->rpath);
    lint_list(&ctx, "RUNPATH", d->runpath);
    free(ctx.within);
    free(origin);
    return 0;
}

void cf_rpath_lint_release(struct cf_rpath_lint *lint)
{
    for (size_t i = 0; i < lint->n; i++) {
        free(lint->findings[i].entry);
        free(lint->findings[i].expanded);
        free(lint->findings[i].message);
    }
    free(lint->findings);
    lint->findings = NULL;
    lint->n = 0;
}
