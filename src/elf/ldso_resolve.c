/* Breadth-first dependency resolution as glibc 2.36's ld.so does it:
 * _dl_map_object_deps (elf/dl-deps.c) walks objects in load order and maps each
 * DT_NEEDED with _dl_map_object (elf/dl-load.c), whose search order is:
 *   1. a name with '/' is a path (after $ORIGIN/$LIB/$PLATFORM expansion);
 *   2. an already-loaded object whose name, path or SONAME matches;
 *   3. unless the needing object has DT_RUNPATH: DT_RPATH of the needing object,
 *      then of its loader, and up the chain, then of the main program;
 *   4. LD_LIBRARY_PATH;
 *   5. DT_RUNPATH of the needing object only;
 *   6. /etc/ld.so.cache (entries in system dirs skipped under DF_1_NODEFLIB);
 *   7. the system directories, unless the needing object has DF_1_NODEFLIB.
 * Every directory is tried with each glibc-hwcaps / legacy hwcaps subdirectory
 * first. Candidates of the wrong class or machine are skipped. A file already
 * loaded under another name (same device and inode) is the same object. */
#include "ldso_internal.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/dst.h"
#include "cclforge/fnv1a.h"
#include "cclforge/fs.h"
#include "cclforge/ldcache.h"
#include "cclforge/strbuf.h"

struct obj {
    struct strvec names;     /* what _dl_name_match_p compares: l_name, libnames */
    char *soname;
    char *origin;            /* absolute directory of the path it was found as */
    struct strvec needed;
    char *rpath, *runpath;   /* rpath NULL when runpath present (glibc drops it) */
    uint64_t flags_1;
    int have_id;
    dev_t dev;
    ino_t ino;
    long loader;
    struct strvec rpath_dirs, runpath_dirs;
    int rpath_done, runpath_done;
};

struct ctx {
    const struct cf_ldso_opts *opts;
    const char *root;            /* NULL when none */
    int elf_class, big_endian;
    unsigned machine;
    struct cf_ldso_platform plat;
    const char *dst_platform;
    struct strvec sysdirs;       /* unrooted, with trailing '/' (NODEFLIB comparison) */
    struct strvec sysdirs_rooted;
    struct strvec caps;          /* subdirectory prefixes tried in each dir, ending with "" */
    struct strvec hwcaps_names;  /* active glibc-hwcaps names, best first */
    struct cf_ldso_facts facts;  /* glibc release and CPU */
    struct cf_ldcache *cache;
    char *cache_path;
    int cache_tried, cache_usable;
    struct cf_ldcache_query query;
    struct strvec llp;
    int have_llp;
    char *interp_name;           /* PT_INTERP or the default, unrooted */
    char *interp_soname;
    long interp_obj;
    struct obj *objs;
    size_t objs_alloc;
    struct cf_ldso_result *res;
    size_t nodes_alloc;
    size_t elves_alloc;          /* entries of res->elves (opts.keep_open) */
    struct cf_ldso_candidate *cands;
    size_t n_cands, cands_alloc;
    struct strvec missing_names;
    int fold;                    /* long search lists become res->lists and runs (cf_ldso_resolve) */
    unsigned char **present;     /* per res->lists entry: dirs x caps, 1 where that directory exists */
    struct dir_memo {            /* search directories stat()ed so far */
        struct dir_seen { char *path; uint32_t hash; int exists; } *v;
        size_t n, cap;           /* cap: a power of two, or 0 */
    } dirs;
};

/* --- small helpers ----------------------------------------------------- */

static void add_candidate(struct ctx *c, const char *path, enum cf_ldso_reason src, enum cf_ldso_reject rej,
                          const char *detail)
{
    if (c->n_cands == c->cands_alloc) {
        c->cands_alloc = c->cands_alloc ? c->cands_alloc * 2 : 16;
        c->cands = cf_xrealloc(c->cands, c->cands_alloc * sizeof *c->cands);
    }
    struct cf_ldso_candidate *k = &c->cands[c->n_cands++];
    k->path = cf_strdup(path);
    k->source = src;
    k->reject = rej;
    k->detail = detail ? cf_strdup(detail) : NULL;
    k->list = -1;
    k->from = k->to = 0;
}

static void free_candidates(struct cf_ldso_candidate *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        free(v[i].detail);
    }
    free(v);
}

/* Drops the candidates recorded from index `from` on. */
static void free_candidates_range(struct ctx *c, size_t from)
{
    for (size_t i = from; i < c->n_cands; i++) {
        free(c->cands[i].path);
        free(c->cands[i].detail);
    }
    c->n_cands = from;
}

static struct cf_ldso_node *new_node(struct ctx *c)
{
    struct cf_ldso_result *r = c->res;
    if (r->n_nodes == c->nodes_alloc) {
        c->nodes_alloc = c->nodes_alloc ? c->nodes_alloc * 2 : 32;
        r->nodes = cf_xrealloc(r->nodes, c->nodes_alloc * sizeof *r->nodes);
    }
    struct cf_ldso_node *n = &r->nodes[r->n_nodes++];
    memset(n, 0, sizeof *n);
    n->parent = -1;
    n->object = -1;
    return n;
}

static long new_object(struct ctx *c)
{
    struct cf_ldso_result *r = c->res;
    if (r->n_objects == c->objs_alloc) {
        c->objs_alloc = c->objs_alloc ? c->objs_alloc * 2 : 32;
        r->objects = cf_xrealloc(r->objects, c->objs_alloc * sizeof *r->objects);
        c->objs = cf_xrealloc(c->objs, c->objs_alloc * sizeof *c->objs);
    }
    long i = (long)r->n_objects++;
    memset(&r->objects[i], 0, sizeof r->objects[i]);
    memset(&c->objs[i], 0, sizeof c->objs[i]);
    r->objects[i].node = -1;
    r->objects[i].loader = -1;
    c->objs[i].loader = -1;
    return i;
}

static char *absolute_dir_of(const char *path)
{
    char *dir = cf_dirname(path);
    if (dir[0] == '/')
        return dir;
    char cwd[4096];
    char *abs = getcwd(cwd, sizeof cwd) ? cf_path_join(cwd, dir) : cf_strdup(dir);
    free(dir);
    return abs;
}

/* fillin_rpath: split, expand tokens, drop entries that expand to nothing, strip
 * trailing '/' and add one, drop duplicates. An empty entry means the current
 * directory (""). Absolute entries not derived from $ORIGIN go under --root. */
/* Index of dir in out (whose indices set[] holds, open addressing, +1; 0
 * empty), adding it when new: a 40,000-entry RUNPATH is deduplicated in
 * linear time. */
static void push_unique(struct strvec *out, size_t *set, size_t cap, char *dir)
{
    for (size_t k = cf_fnv1a32_str(dir) & (cap - 1);; k = (k + 1) & (cap - 1)) {
        if (!set[k]) {
            cf_strvec_push_nodup(out, dir);
            set[k] = out->n;
            return;
        }
        if (strcmp(out->v[set[k] - 1], dir) == 0) {
            free(dir);
            return;
        }
    }
}

static void fill_dirs(struct ctx *c, struct strvec *out, const char *list, const char *seps, const char *origin)
{
    struct strvec parts = STRVEC_INIT;
    cf_strvec_split(&parts, list, seps, 1);
    size_t cap = 16;
    while (cap < 2 * (parts.n + out->n))
        cap *= 2;
    size_t *set = cf_xcalloc(cap, sizeof *set);
    for (size_t i = 0; i < out->n; i++) {
        size_t k = cf_fnv1a32_str(out->v[i]) & (cap - 1);
        while (set[k])
            k = (k + 1) & (cap - 1);
        set[k] = i + 1;
    }
    for (size_t i = 0; i < parts.n; i++) {
        const char *raw = parts.v[i];
        char *dir;
        if (*raw == '\0') {
            dir = cf_strdup("");
        } else {
            char *exp = cf_dst_expand(raw, origin, c->plat.lib, c->dst_platform);
            if (!exp || !*exp) {
                free(exp);
                continue;
            }
            size_t len = strlen(exp);
            while (len > 1 && exp[len - 1] == '/')
                len--;
            exp[len] = '\0';
            char *rooted = (strstr(raw, "$ORIGIN") || strstr(raw, "${ORIGIN}")) ? cf_strdup(exp)
                                                                                  : cf_ldso_rooted(c->root, exp);
            dir = strcmp(rooted, "/") == 0 ? cf_strdup("/") : cf_asprintf("%s/", rooted);
            free(rooted);
            free(exp);
        }
        push_unique(out, set, cap, dir);
    }
    free(set);
    cf_strvec_clear(&parts);
}

/* --- search ------------------------------------------------------------ */

enum search_outcome { SEARCH_MISS, SEARCH_FOUND, SEARCH_FATAL };

struct found {
    char *path;
    char *file;   /* the host file behind path (see cf_ldso_host_path) */
    enum cf_ldso_reason reason;
    long via;
    struct ldso_verdict verdict;
    char *error;
};

/* cf_ldso_verify on the file behind a path the loader names; *file gets
 * that file (NULL for a symlink loop, which fails as glibc's open would). */
static void verify_named(const struct ctx *c, const char *path, int keep_fd, struct ldso_verdict *v, char **file)
{
    *file = cf_ldso_host_path(c->root, path);
    if (!*file) {
        memset(v, 0, sizeof *v);
        v->fd = -1;
        v->reject = CF_LDSO_REJ_OTHER_ERROR;
        v->detail = cf_strdup(strerror(ELOOP));
        return;
    }
    cf_ldso_verify(*file, c->elf_class, c->big_endian, c->machine, keep_fd, v);
}

/* Tries one candidate path; records it. */
static enum search_outcome try_path(struct ctx *c, const char *path, enum cf_ldso_reason src, long via,
                                    struct found *f)
{
    struct ldso_verdict v;
    char *file;
    verify_named(c, path, 1, &v, &file); /* the found file stays open for read_object */
    add_candidate(c, path, src, v.reject, v.detail);
    if (v.reject == CF_LDSO_REJ_NONE) {
        free(f->file);
        f->file = file;
        f->path = cf_strdup(path);
        f->reason = src;
        f->via = via;
        f->verdict = v;
        return SEARCH_FOUND;
    }
    free(file);
    if (v.reject == CF_LDSO_REJ_FATAL) {
        f->error = cf_asprintf("%s: %s", path, v.detail ? v.detail : "cannot load");
        free(v.detail);
        return SEARCH_FATAL;
    }
    free(v.detail);
    return SEARCH_MISS;
}


/* glibc stats a search directory once per process and then remembers whether
 * it exists (r_search_path_elem.status): each directory times each hwcaps
 * subdirectory is asked about for every name searched, ~700 stat() calls for
 * a 12-object closure otherwise. An open-addressing set keyed by path. */
static int dir_exists(struct ctx *c, const char *dir)
{
    struct dir_memo *m = &c->dirs;
    uint32_t h = cf_fnv1a32_str(dir);
    if (m->cap) {
        for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
            if (!m->v[i].path)
                break;
            if (m->v[i].hash == h && strcmp(m->v[i].path, dir) == 0)
                return m->v[i].exists;
        }
    }
    char *host = cf_ldso_host_path(c->root, dir);
    int exists = host && cf_is_dir(host);
    free(host);
    if ((m->n + 1) * 2 > m->cap) { /* keep the load under a half: rehash into twice the room */
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct dir_seen *v = cf_xcalloc(cap, sizeof *v);
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->v[i].path)
                continue;
            size_t k = m->v[i].hash & (cap - 1);
            while (v[k].path)
                k = (k + 1) & (cap - 1);
            v[k] = m->v[i];
        }
        free(m->v);
        m->v = v;
        m->cap = cap;
    }
    size_t k = h & (m->cap - 1);
    while (m->v[k].path)
        k = (k + 1) & (m->cap - 1);
    m->v[k].path = cf_strdup(dir);
    m->v[k].hash = h;
    m->v[k].exists = exists;
    m->n++;
    return exists;
}

/* open_path: each directory, each capability subdirectory, in order. */
static enum search_outcome search_dirs(struct ctx *c, const char *name, const struct strvec *dirs,
                                       enum cf_ldso_reason src, long via, struct found *f)
{
    /* dir + cap, then + name, in one buffer (no formatting: this runs for
     * every directory, hwcaps subdirectory and name). */
    struct strbuf path = STRBUF_INIT;
    enum search_outcome outcome = SEARCH_MISS;
    int done = 0;
    for (size_t d = 0; d < dirs->n && !done; d++) {
        const char *dir = dirs->v[d];
        for (size_t k = 0; k < c->caps.n; k++) {
            const char *cap = c->caps.v[k];
            cf_sb_reset(&path);
            cf_sb_adds(&path, dir);
            cf_sb_adds(&path, cap);
            int exists = path.len == 0 || dir_exists(c, cf_sb_str(&path));
            cf_sb_adds(&path, name);
            if (!exists) {
                /* glibc marks the directory nonexisting and skips it; we list only the plain one. */
                if (*cap == '\0')
                    add_candidate(c, cf_sb_str(&path), src, CF_LDSO_REJ_DIR_MISSING, NULL);
                continue;
            }
            enum search_outcome o = try_path(c, cf_sb_str(&path), src, via, f);
            enum cf_ldso_reject last = c->cands[c->n_cands - 1].reject;
            if (o != SEARCH_MISS || last == CF_LDSO_REJ_OTHER_ERROR) {
                /* found, fatal, or glibc abandons this list on errors other than ENOENT/EACCES */
                outcome = o;
                done = 1;
                break;
            }
        }
    }
    cf_sb_release(&path);
    return outcome;
}

/* The long list (src, via) in res->lists, made on first use: its directories
 * copied, and which of them (and of their hwcaps subdirectories) exist, asked
 * once (the memo above) rather than once per name searched. */
static long long_list(struct ctx *c, const struct strvec *dirs, enum cf_ldso_reason src, long via)
{
    struct cf_ldso_result *r = c->res;
    for (size_t i = 0; i < r->n_lists; i++)
        if (r->lists[i].source == src && r->lists[i].via == via)
            return (long)i;
    r->lists = cf_xrealloc(r->lists, (r->n_lists + 1) * sizeof *r->lists);
    c->present = cf_xrealloc(c->present, (r->n_lists + 1) * sizeof *c->present);
    struct cf_ldso_search_list *l = &r->lists[r->n_lists];
    memset(l, 0, sizeof *l);
    l->source = src;
    l->via = via;
    for (size_t d = 0; d < dirs->n; d++)
        cf_strvec_push(&l->dirs, dirs->v[d]);
    l->missing = cf_xcalloc(dirs->n + 1, 1);
    size_t ncaps = c->caps.n;
    unsigned char *present = cf_xcalloc(dirs->n * ncaps + 1, 1);
    struct strbuf path = STRBUF_INIT;
    for (size_t d = 0; d < dirs->n; d++) {
        /* the directory itself (cap "", the last) first: under a missing one nothing exists */
        int exists = !*dirs->v[d] || dir_exists(c, dirs->v[d]);
        if (!exists) {
            l->missing[d] = 1;
            l->n_missing++;
            continue;
        }
        for (size_t k = 0; k < ncaps; k++) {
            cf_sb_reset(&path);
            cf_sb_adds(&path, dirs->v[d]);
            cf_sb_adds(&path, c->caps.v[k]);
            present[d * ncaps + k] = !*c->caps.v[k] || path.len == 0 || dir_exists(c, cf_sb_str(&path));
        }
    }
    cf_sb_release(&path);
    c->present[r->n_lists] = present;
    return (long)r->n_lists++;
}

/* Records directories [from, to) of list li as one run (none holds name) at
 * candidate position at, before the paths tried after them. */
static void add_run(struct ctx *c, size_t at, long li, size_t from, size_t to, const char *name)
{
    const struct cf_ldso_search_list *l = &c->res->lists[li];
    size_t missing = 0;
    for (size_t d = from; d < to; d++)
        missing += l->missing[d];
    char *path = cf_asprintf("%s%s", l->dirs.v[from], name);
    char *detail = cf_asprintf("in none of %zu directories of search list %ld (%zu do not exist)", to - from,
                               li + 1, missing);
    add_candidate(c, path, l->source, CF_LDSO_REJ_NOT_FOUND, detail);
    free(path);
    free(detail);
    struct cf_ldso_candidate run = c->cands[c->n_cands - 1];
    memmove(&c->cands[at + 1], &c->cands[at], (c->n_cands - 1 - at) * sizeof run);
    run.list = li;
    run.from = from;
    run.to = to;
    c->cands[at] = run;
}

/* search_dirs over a long list: the same paths tried in the same order, but
 * the directories where nothing is found are recorded as runs, and only the
 * paths that could be a hit (in directories that exist) are opened. */
static enum search_outcome search_long(struct ctx *c, const char *name, const struct strvec *dirs,
                                       enum cf_ldso_reason src, long via, struct found *f)
{
    long li = long_list(c, dirs, src, via);
    const struct cf_ldso_search_list *l = &c->res->lists[li];
    const unsigned char *present = c->present[li];
    size_t ncaps = c->caps.n, from = 0;
    struct strbuf path = STRBUF_INIT;
    enum search_outcome outcome = SEARCH_MISS;
    int done = 0; /* found, fatal, or the list abandoned: the directories after are not searched */
    for (size_t d = 0; d < l->dirs.n && !done; d++) {
        size_t mark = c->n_cands;
        int odd = 0;
        for (size_t k = 0; k < ncaps && !done; k++) {
            if (!present[d * ncaps + k])
                continue;
            cf_sb_reset(&path);
            cf_sb_adds(&path, l->dirs.v[d]);
            cf_sb_adds(&path, c->caps.v[k]);
            cf_sb_adds(&path, name);
            enum search_outcome o = try_path(c, cf_sb_str(&path), src, via, f);
            enum cf_ldso_reject last = c->cands[c->n_cands - 1].reject;
            odd |= last != CF_LDSO_REJ_NOT_FOUND;
            if (o != SEARCH_MISS || last == CF_LDSO_REJ_OTHER_ERROR) {
                outcome = o;
                done = 1;
            }
        }
        if (!odd) {
            free_candidates_range(c, mark);
            continue;
        }
        if (d > from)
            add_run(c, mark, li, from, d, name);
        from = d + 1;
    }
    if (!done && from < l->dirs.n)
        add_run(c, c->n_cands, li, from, l->dirs.n, name);
    cf_sb_release(&path);
    return outcome;
}

/* A search list as glibc walks it; a long one (cf_ldso_resolve) folded. */
static enum search_outcome search_list(struct ctx *c, const char *name, const struct strvec *dirs,
                                       enum cf_ldso_reason src, long via, struct found *f)
{
    if (c->fold && dirs->n > CF_LDSO_FOLD_DIRS)
        return search_long(c, name, dirs, src, via, f);
    return search_dirs(c, name, dirs, src, via, f);
}

static const struct strvec *rpath_dirs(struct ctx *c, long i)
{
    struct obj *o = &c->objs[i];
    if (!o->rpath_done) {
        o->rpath_done = 1;
        if (o->rpath && *o->rpath)
            fill_dirs(c, &o->rpath_dirs, o->rpath, ":", o->origin);
    }
    return &o->rpath_dirs;
}

static const struct strvec *runpath_dirs(struct ctx *c, long i)
{
    struct obj *o = &c->objs[i];
    if (!o->runpath_done) {
        o->runpath_done = 1;
        if (o->runpath && *o->runpath)
            fill_dirs(c, &o->runpath_dirs, o->runpath, ":", o->origin);
    }
    return &o->runpath_dirs;
}

static void load_cache(struct ctx *c)
{
    if (c->cache_tried)
        return;
    c->cache_tried = 1;
    if (c->opts->ignore_ldcache)
        return;
    c->cache_path = c->opts->ldcache_path ? cf_strdup(c->opts->ldcache_path) : cf_ldso_rooted(c->root, "/etc/ld.so.cache");
    /* A missing or corrupt cache is ignored, as glibc ignores it. */
    char *host = cf_ldso_host_path(c->root, c->cache_path);
    int opened = host && cf_ldcache_open_lookup(host, &c->cache, NULL) == 0;
    free(host);
    if (opened &&
        cf_ldcache_abi_for(c->machine, c->elf_class, &c->query.abi, NULL) == 0)
        c->cache_usable = 1;
}

static enum search_outcome search_cache(struct ctx *c, const char *name, long loader, struct found *f)
{
    load_cache(c);
    if (!c->cache_path)
        return SEARCH_MISS; /* ignored on request */
    if (!c->cache_usable) {
        add_candidate(c, c->cache_path, CF_LDSO_LDCACHE, CF_LDSO_REJ_NOT_FOUND, "no usable ld.so.cache");
        return SEARCH_MISS;
    }
    const char *hit = cf_ldcache_lookup(c->cache, name, &c->query);
    cf_error err = CF_ERROR_INIT;
    if (cf_ldcache_check_intact(c->cache, &err) != 0) {
        /* glibc, which maps the cache too, would die of SIGBUS here. */
        add_candidate(c, c->cache_path, CF_LDSO_LDCACHE, CF_LDSO_REJ_FATAL, cf_error_message(&err));
        f->error = cf_strdup(cf_error_message(&err));
        cf_error_clear(&err);
        return SEARCH_FATAL;
    }
    if (!hit) {
        add_candidate(c, c->cache_path, CF_LDSO_LDCACHE, CF_LDSO_REJ_NOT_FOUND, "no entry for this name and ABI");
        return SEARCH_MISS;
    }
    long l = loader >= 0 ? loader : 0;
    char *path = cf_ldso_rooted(c->root, hit);
    if (c->objs[l].flags_1 & DF_1_NODEFLIB) {
        for (size_t i = 0; i < c->sysdirs.n; i++)
            if (strncmp(hit, c->sysdirs.v[i], strlen(c->sysdirs.v[i])) == 0) {
                add_candidate(c, path, CF_LDSO_LDCACHE, CF_LDSO_REJ_NODEFLIB, "system directory, loader has DF_1_NODEFLIB");
                free(path);
                return SEARCH_MISS;
            }
    }
    enum search_outcome o = try_path(c, path, CF_LDSO_LDCACHE, -1, f);
    free(path);
    return o;
}

/* _dl_map_object's search for a name without '/'. */
static enum search_outcome search_name(struct ctx *c, const char *name, long loader, struct found *f)
{
    enum search_outcome o;
    long main_obj = 0;
    if (loader < 0 || !c->objs[loader].runpath) {
        int did_main = 0;
        for (long l = loader; l >= 0; l = c->objs[l].loader) {
            const struct strvec *dirs = rpath_dirs(c, l);
            if (dirs->n == 0)
                continue;
            if ((o = search_list(c, name, dirs, CF_LDSO_RPATH, l, f)) != SEARCH_MISS)
                return o;
            did_main |= l == main_obj;
        }
        if (!did_main) {
            const struct strvec *dirs = rpath_dirs(c, main_obj);
            if (dirs->n && (o = search_list(c, name, dirs, CF_LDSO_RPATH, main_obj, f)) != SEARCH_MISS)
                return o;
        }
    }
    if (c->have_llp && (o = search_list(c, name, &c->llp, CF_LDSO_LD_LIBRARY_PATH, -1, f)) != SEARCH_MISS)
        return o;
    if (loader >= 0) {
        const struct strvec *dirs = runpath_dirs(c, loader);
        if (dirs->n && (o = search_list(c, name, dirs, CF_LDSO_RUNPATH, loader, f)) != SEARCH_MISS)
            return o;
    }
    if ((o = search_cache(c, name, loader, f)) != SEARCH_MISS)
        return o;
    long l = loader >= 0 ? loader : main_obj;
    if (!(c->objs[l].flags_1 & DF_1_NODEFLIB))
        return search_dirs(c, name, &c->sysdirs_rooted, CF_LDSO_DEFAULT_DIRS, -1, f);
    return SEARCH_MISS;
}

/* --- objects ----------------------------------------------------------- */

/* Reads what the loader needs from a found file's dynamic section, then closes it
 * (one ELF file open at a time) unless opts.keep_open. The file is `elf` when
 * open already, else the descriptor fd verify left open, else opened here. */
static int read_object(struct ctx *c, long i, struct cf_elf *elf, int fd, cf_error *err)
{
    if (!elf && cf_elf_open_fd(fd, c->res->objects[i].file, &elf, err) != 0)
        return -1;
    const struct cf_elf_dynamic *dyn = cf_elf_get_dynamic(elf);
    struct obj *o = &c->objs[i];
    struct cf_ldso_object *pub = &c->res->objects[i];
    for (size_t k = 0; k < dyn->n_needed; k++)
        cf_strvec_push(&o->needed, dyn->needed[k]);
    o->soname = cf_strdup(dyn->soname);
    o->runpath = cf_strdup(dyn->runpath);
    /* get-dynamic-info.h: "Don't use RPATH if RUNPATH is present." */
    o->rpath = dyn->runpath ? NULL : cf_strdup(dyn->rpath);
    o->flags_1 = dyn->flags_1;
    pub->soname = cf_strdup(dyn->soname);
    pub->rpath = cf_strdup(dyn->rpath);
    pub->runpath = cf_strdup(dyn->runpath);
    pub->flags_1 = dyn->flags_1;
    int rc = cf_elf_check_intact(elf, err);
    if (rc == 0 && c->opts->keep_open) {
        if (c->elves_alloc < c->res->n_objects) {
            size_t n = c->objs_alloc;
            c->res->elves = cf_xrealloc(c->res->elves, n * sizeof *c->res->elves);
            memset(c->res->elves + c->elves_alloc, 0, (n - c->elves_alloc) * sizeof *c->res->elves);
            c->elves_alloc = n;
        }
        c->res->elves[i] = elf;
    } else {
        cf_elf_close(elf);
    }
    return rc;
}

/* opts.keep_open: one slot per object, NULL for those not opened. */
static void keep_all(struct ctx *c)
{
    if (!c->opts->keep_open || c->elves_alloc >= c->res->n_objects)
        return;
    size_t n = c->res->n_objects;
    c->res->elves = cf_xrealloc(c->res->elves, n * sizeof *c->res->elves);
    memset(c->res->elves + c->elves_alloc, 0, (n - c->elves_alloc) * sizeof *c->res->elves);
    c->elves_alloc = n;
}

static long add_object(struct ctx *c, const char *path, const char *file, const char *name, long loader, long node,
                       const struct ldso_verdict *v)
{
    long i = new_object(c);
    struct obj *o = &c->objs[i];
    struct cf_ldso_object *pub = &c->res->objects[i];
    pub->path = cf_strdup(path);
    pub->file = cf_strdup(file ? file : path);
    pub->node = node;
    pub->loader = loader;
    o->loader = loader;
    cf_strvec_push(&o->names, path);
    if (name && strcmp(name, path) != 0)
        cf_strvec_push(&o->names, name);
    o->origin = absolute_dir_of(path);
    if (v) {
        o->have_id = 1;
        o->dev = v->dev;
        o->ino = v->ino;
    }
    return i;
}

static long find_loaded_by_name(struct ctx *c, const char *name)
{
    for (size_t i = 0; i < c->res->n_objects; i++) {
        struct obj *o = &c->objs[i];
        if (cf_strvec_contains(&o->names, name) || (o->soname && strcmp(o->soname, name) == 0))
            return (long)i;
    }
    return -1;
}

static long find_loaded_by_id(struct ctx *c, const struct ldso_verdict *v)
{
    for (size_t i = 0; i < c->res->n_objects; i++)
        if (c->objs[i].have_id && c->objs[i].dev == v->dev && c->objs[i].ino == v->ino)
            return (long)i;
    return -1;
}

/* The dynamic loader is in every process from the start (rtld.c) and answers to
 * its SONAME and PT_INTERP path; it joins the load order where first needed. */
static long match_interp(struct ctx *c, const char *name, long loader, long node)
{
    if (c->interp_obj >= 0 || !c->interp_name)
        return -1;
    if (strcmp(name, c->interp_name) != 0 && !(c->interp_soname && strcmp(name, c->interp_soname) == 0))
        return -1;
    char *path = cf_ldso_rooted(c->root, c->interp_name);
    struct ldso_verdict v;
    char *file;
    verify_named(c, path, 0, &v, &file);
    long i = add_object(c, path, file, c->interp_name, loader, node, v.reject == CF_LDSO_REJ_NONE ? &v : NULL);
    free(file);
    free(v.detail);
    c->res->objects[i].is_interp = 1;
    if (c->interp_soname) {
        cf_strvec_push(&c->objs[i].names, c->interp_soname);
        c->objs[i].soname = cf_strdup(c->interp_soname);
        c->res->objects[i].soname = cf_strdup(c->interp_soname);
    }
    c->interp_obj = i;
    free(path);
    return i;
}

static void keep_candidates(struct ctx *c, struct cf_ldso_node *n)
{
    if (n->object < 0 || c->opts->explain) {
        n->considered = c->cands;
        n->n_considered = c->n_cands;
        c->cands = NULL;
        c->cands_alloc = 0;
    } else {
        /* not kept, but what a file held decided the answer: an input (list_inputs) */
        for (size_t k = 0; c->opts->list_inputs && k < c->n_cands; k++)
            if (cf_ldso_candidate_read(&c->cands[k]) && !cf_strvec_contains(&c->res->inputs, c->cands[k].path))
                cf_strvec_push(&c->res->inputs, c->cands[k].path);
        free_candidates(c->cands, c->n_cands);
        c->cands = NULL;
        c->cands_alloc = 0;
    }
    c->n_cands = 0;
}

/* Maps one DT_NEEDED of object `loader` (the body of _dl_map_object). */
static void map_needed(struct ctx *c, const char *needed, long loader)
{
    struct cf_ldso_node *n = new_node(c);
    long node_index = (long)c->res->n_nodes - 1;
    n->needed = cf_strdup(needed);
    n->parent = loader;
    n->depth = loader >= 0 ? c->res->nodes[c->res->objects[loader].node].depth + 1 : 0;

    char *name = NULL;
    if (cf_dst_has_token(needed)) {
        name = cf_dst_expand(needed, c->objs[loader].origin, c->plat.lib, c->dst_platform);
        if (!name || !*name) {
            n = &c->res->nodes[node_index];
            n->reason = CF_LDSO_NOT_FOUND;
            n->error = cf_asprintf("%s: empty dynamic string token substitution", needed);
            free(name);
            c->res->n_missing++;
            return;
        }
        c->res->nodes[node_index].expanded = cf_strdup(name);
    } else {
        name = cf_strdup(needed);
    }

    long hit = find_loaded_by_name(c, name);
    if (hit < 0)
        hit = match_interp(c, name, loader, node_index);
    n = &c->res->nodes[node_index];
    if (hit >= 0) {
        n->object = hit;
        n->path = cf_strdup(c->res->objects[hit].path);
        n->reason = CF_LDSO_ALREADY_LOADED;
        if (c->res->objects[hit].node < 0)
            c->res->objects[hit].node = node_index;
        free(name);
        return;
    }

    struct found f;
    memset(&f, 0, sizeof f);
    enum search_outcome o;
    if (strchr(name, '/')) {
        char *path = cf_ldso_rooted(c->root, name);
        o = try_path(c, path, CF_LDSO_DIRECT_PATH, -1, &f);
        free(path);
    } else {
        o = search_name(c, name, loader, &f);
    }
    n = &c->res->nodes[node_index];
    if (o == SEARCH_FOUND) {
        long same = find_loaded_by_id(c, &f.verdict);
        if (same >= 0) {
            if (f.verdict.fd >= 0)
                close(f.verdict.fd);
            /* _dl_map_object_from_fd: "The object is already loaded." */
            cf_strvec_push(&c->objs[same].names, name);
            n->object = same;
            n->path = cf_strdup(c->res->objects[same].path);
            n->reason = CF_LDSO_ALREADY_LOADED;
        } else {
            long i = add_object(c, f.path, f.file, name, loader, node_index, &f.verdict);
            n = &c->res->nodes[node_index];
            n->object = i;
            n->path = cf_strdup(f.path);
            n->reason = f.reason;
            if (f.reason == CF_LDSO_RPATH || f.reason == CF_LDSO_RUNPATH)
                n->via = cf_strdup(c->res->objects[f.via].path);
            cf_error e = CF_ERROR_INIT;
            if (read_object(c, i, NULL, f.verdict.fd, &e) != 0) {
                n->error = cf_strdup(cf_error_message(&e));
                cf_error_clear(&e);
            }
        }
    } else {
        n->reason = CF_LDSO_NOT_FOUND;
        n->error = f.error;
        f.error = NULL;
        /* ldd prints a "not found" line for every NEEDED that misses (faked maps never match). */
        if (!cf_strvec_contains(&c->missing_names, name))
            cf_strvec_push(&c->missing_names, name);
        c->res->n_missing = c->missing_names.n;
    }
    free(f.path);
    free(f.file);
    free(f.error);
    free(f.verdict.detail);
    free(name);
    keep_candidates(c, &c->res->nodes[node_index]);
}

/* --- set-up ------------------------------------------------------------ */

/* _dl_important_hwcaps: the glibc-hwcaps subdirectories (best first), then
 * the power set of the legacy names in glibc's order (all of them first,
 * the last name the outermost directory), ending with the directory itself.
 * Names may repeat (x86_64 as hwcap and as AMD's platform): glibc tries
 * those twice, and so do we. */
static void build_caps(struct ctx *c)
{
    const struct cf_ldso_opts *opts = c->opts;
    struct ldso_view v;
    cf_ldso_view_build(c->facts.glibc, &c->facts.cpu_probed, &c->facts.cpu, c->machine, c->elf_class, c->plat.platform,
                       &v);
    if (opts->hwcaps) {
        for (const char *const *h = opts->hwcaps; *h; h++)
            cf_strvec_push(&c->hwcaps_names, *h);
    } else {
        for (size_t i = 0; i < v.hwcaps.n; i++)
            cf_strvec_push(&c->hwcaps_names, v.hwcaps.v[i]);
    }
    for (size_t i = 0; i < c->hwcaps_names.n; i++)
        cf_strvec_pushf(&c->caps, "glibc-hwcaps/%s/", c->hwcaps_names.v[i]);
    const struct strvec *legacy = &v.legacy;
    struct strvec none = STRVEC_INIT;
    if (opts->no_legacy_hwcaps)
        legacy = &none;
    size_t cnt = legacy->n;
    for (size_t m = cnt ? (1u << cnt) - 1 : 0; m > 0; m--) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t k = cnt; k-- > 0;)
            if (m & (1u << k))
                cf_sb_addf(&sb, "%s/", legacy->v[k]);
        cf_strvec_push(&c->caps, cf_sb_str(&sb));
        cf_sb_release(&sb);
    }
    cf_strvec_push(&c->caps, "");
    for (size_t i = 0; i < c->hwcaps_names.n; i++)
        cf_strvec_push(&c->res->hwcaps, c->hwcaps_names.v[i]);
    for (size_t i = 0; i < legacy->n; i++)
        cf_strvec_push(&c->res->legacy_hwcaps, legacy->v[i]);

    c->dst_platform = v.platform;
    c->query.hwcaps = (const char *const *)c->hwcaps_names.v;
    c->query.n_hwcaps = c->hwcaps_names.n;
    c->query.isa_1 = opts->hwcaps ? 15 : v.isa_1;
    c->query.hwcap = v.hwcap;
    c->query.platform_mask = v.platform_mask;
    c->query.platform = v.platform_bit;
    c->query.glibc = c->facts.glibc;
    cf_ldso_view_release(&v);
}

static void release_ctx(struct ctx *c)
{
    for (size_t i = 0; c->res && i < c->res->n_objects; i++) {
        struct obj *o = &c->objs[i];
        cf_strvec_clear(&o->names);
        cf_strvec_clear(&o->needed);
        cf_strvec_clear(&o->rpath_dirs);
        cf_strvec_clear(&o->runpath_dirs);
        free(o->soname);
        free(o->origin);
        free(o->rpath);
        free(o->runpath);
    }
    free(c->objs);
    cf_ldso_platform_release(&c->plat);
    cf_strvec_clear(&c->sysdirs);
    cf_strvec_clear(&c->sysdirs_rooted);
    cf_strvec_clear(&c->caps);
    cf_strvec_clear(&c->hwcaps_names);
    cf_strvec_clear(&c->llp);
    cf_strvec_clear(&c->missing_names);
    cf_ldcache_free(c->cache);
    free(c->cache_path);
    free(c->interp_name);
    free(c->interp_soname);
    free_candidates(c->cands, c->n_cands);
    for (size_t i = 0; i < c->dirs.cap; i++)
        free(c->dirs.v[i].path);
    free(c->dirs.v);
    for (size_t i = 0; c->present && i < c->res->n_lists; i++)
        free(c->present[i]);
    free(c->present);
}

static char *read_soname(const char *path)
{
    struct cf_elf *elf;
    if (cf_elf_open(path, &elf, NULL) != 0)
        return NULL;
    char *s = cf_strdup(cf_elf_get_dynamic(elf)->soname);
    cf_elf_close(elf);
    return s;
}

/* The search state _dl_init_paths sets up once the main map exists. */
static void prepare_search(struct ctx *c)
{
    const struct cf_ldso_opts *opts = c->opts;
    build_caps(c);
    c->res->dst_lib = cf_strdup(c->plat.lib);
    c->res->dst_platform = cf_strdup(c->dst_platform);
    const char *const *sys = opts->system_dirs ? opts->system_dirs : (const char *const *)c->plat.system_dirs;
    for (const char *const *d = sys; *d; d++) {
        cf_strvec_pushf(&c->sysdirs, "%s/", strcmp(*d, "/") == 0 ? "" : *d);
        char *r = cf_ldso_rooted(c->root, *d);
        cf_strvec_pushf(&c->sysdirs_rooted, "%s/", strcmp(r, "/") == 0 ? "" : r);
        free(r);
    }
    if (!opts->ignore_ld_library_path) {
        const char *llp = opts->ld_library_path ? opts->ld_library_path : getenv("LD_LIBRARY_PATH");
        /* _dl_init_paths: an empty LD_LIBRARY_PATH is no path at all; tokens expand
         * with the main program's origin. */
        if (llp && *llp) {
            fill_dirs(c, &c->llp, llp, ":;", c->objs[0].origin);
            c->have_llp = c->llp.n > 0;
        }
    }
    char *interp_path = cf_ldso_rooted(c->root, c->interp_name);
    char *interp_file = cf_ldso_host_path(c->root, interp_path);
    if (interp_file && c->facts.loader_soname[0] && strcmp(interp_file, c->facts.loader_path) == 0)
        c->interp_soname = cf_strdup(c->facts.loader_soname); /* the loader the glibc release came from */
    else
        c->interp_soname = interp_file ? read_soname(interp_file) : NULL;
    free(interp_file);
    free(interp_path);
}

/* The closure of path as the main program, in c (which stays set up for more
 * lookups; the caller releases it). */
static int resolve_closure(struct ctx *c, const char *path, const struct cf_ldso_opts *opts, int fold,
                           struct cf_ldso_result *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    memset(c, 0, sizeof *c);
    c->opts = opts;
    c->fold = fold;
    c->res = out;
    c->interp_obj = -1;
    c->root = opts->root && *opts->root && strcmp(opts->root, "/") != 0 ? opts->root : NULL;

    struct cf_elf *elf;
    if (cf_elf_open(path, &elf, err) != 0)
        return -1;
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    const struct cf_elf_dynamic *dyn = cf_elf_get_dynamic(elf);
    c->elf_class = h->elf_class;
    c->big_endian = h->big_endian;
    c->machine = h->machine;
    out->elf_class = h->elf_class;
    out->machine = h->machine;
    if (cf_ldso_platform_for(c->machine, c->elf_class, c->root, &c->plat, err) != 0) {
        cf_elf_close(elf);
        cf_error_prefix(err, "%s", path);
        return -1;
    }
    if (cf_ldso_facts_get(c->machine, c->elf_class, opts, &c->facts, err) != 0) {
        cf_elf_close(elf);
        cf_ldso_platform_release(&c->plat);
        return -1;
    }
    out->facts = c->facts;
    c->interp_name = cf_strdup(dyn->interp ? dyn->interp : c->plat.interp);
    out->interp = cf_ldso_rooted(c->root, c->interp_name);
    int has_dynamic = dyn->has_dynamic;

    /* The root is the main map: its node, its object, its dynamic section. */
    struct cf_ldso_node *root_node = new_node(c);
    root_node->needed = cf_strdup(path);
    root_node->path = cf_strdup(path);
    root_node->reason = CF_LDSO_ROOT;
    root_node->object = 0;
    /* The main map's identity: the file opened above (it is the loader's main program). */
    struct ldso_verdict rv;
    memset(&rv, 0, sizeof rv);
    struct cf_file_id fid;
    if (cf_elf_file_id(elf, &fid) == 0) {
        rv.dev = (dev_t)fid.dev;
        rv.ino = (ino_t)fid.ino;
    }
    add_object(c, path, NULL, NULL, -1, 0, &rv);
    if (cf_glibc_follows(c->facts.glibc, CF_GLIBC_MAIN_REALPATH)) {
        /* ld.so names the main program by its real path (and takes $ORIGIN from it). */
        char *real = cf_realpath(path);
        if (real) {
            free(c->objs[0].origin);
            c->objs[0].origin = cf_dirname(real);
            cf_strvec_push(&c->objs[0].names, real);
            free(real);
        }
    }
    if (read_object(c, 0, elf, -1, err) != 0) {
        release_ctx(c);
        cf_ldso_result_release(out);
        return -1;
    }
    if (!has_dynamic) {
        keep_all(c);
        return 0;
    }

    prepare_search(c);

    /* Breadth first: objects are appended as they are mapped and processed in
     * that order; each dlopen'ed object's closure completes before the next. */
    size_t i = 0;
    const char *const *next = opts->dlopen;
    for (int started = 0;; started = 1) {
        for (; i < out->n_objects; i++)
            for (size_t k = 0; k < c->objs[i].needed.n; k++)
                map_needed(c, c->objs[i].needed.v[k], (long)i);
        /* From 2.41 the loader is listed even when nothing needs it: after the
         * program's own closure (before anything dlopen'ed), outside the symbol
         * scope (no node loaded it). */
        if (!started && c->interp_obj < 0 && cf_glibc_follows(c->facts.glibc, CF_GLIBC_INTERP_ALWAYS_LISTED))
            match_interp(c, c->interp_name, -1, -1);
        if (!next || !*next)
            break;
        map_needed(c, *next++, 0);
    }
    keep_all(c);
    return 0;
}

/* cf_ldso_result.inputs: what the searches read besides the objects */
static void list_inputs(struct ctx *c)
{
    struct strvec *in = &c->res->inputs;
    for (size_t i = 0; i < c->dirs.cap; i++)
        if (c->dirs.v[i].path) {
            /* the memo holds each directory once: no search of the list (40,000 directories in tests) */
            char *host = cf_ldso_host_path(c->root, c->dirs.v[i].path);
            if (host)
                cf_strvec_push_nodup(in, host);
        }
    const char *files[] = { c->cache_path, c->facts.glibc_source, c->facts.loader_path };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        /* the cache is a path even under a relative --root; of the glibc
         * sources, "--glibc", "assumed: ..." are no files */
        if (files[i] && (i == 0 || files[i][0] == '/' ||
                         (c->root && *c->root && strncmp(files[i], c->root, strlen(c->root)) == 0))) {
            char *host = i == 0 ? cf_ldso_host_path(c->root, files[i]) : cf_strdup(files[i]);
            if (host && !cf_strvec_contains(in, host))
                cf_strvec_push(in, host);
            free(host);
        }
}

int cf_ldso_resolve(const char *path, const struct cf_ldso_opts *opts_in, struct cf_ldso_result *out,
                    cf_error *err)
{
    static const struct cf_ldso_opts no_opts;
    struct ctx c;
    if (resolve_closure(&c, path, opts_in ? opts_in : &no_opts, 1, out, err) != 0)
        return -1;
    if (opts_in && opts_in->list_inputs)
        list_inputs(&c);
    release_ctx(&c);
    return 0;
}

/* The object of the closure that is `file`: the same path, or the same file (device
 * and inode) under another name; -1 when the closure does not hold it. */
static long object_of(struct ctx *c, const char *file)
{
    struct stat st;
    int have = stat(file, &st) == 0;
    for (size_t i = 0; i < c->res->n_objects; i++)
        if (!strcmp(c->res->objects[i].path, file) ||
            (have && c->objs[i].have_id && c->objs[i].dev == st.st_dev && c->objs[i].ino == st.st_ino))
            return (long)i;
    return -1;
}

/* Options or the defaults, and *out emptied: the start of a one-name lookup. */
static const struct cf_ldso_opts *node_start(const struct cf_ldso_opts *opts, struct cf_ldso_node *out)
{
    static const struct cf_ldso_opts no_opts;
    memset(out, 0, sizeof *out);
    out->parent = -1;
    out->object = -1;
    return opts ? opts : &no_opts;
}

/* Maps name from object `loader` of c's closure into *out (the node alone, not
 * its dependencies), then releases c and res: the end of cf_ldso_locate and
 * cf_ldso_dlopen_from. */
static void map_one(struct ctx *c, struct cf_ldso_result *res, const char *name, long loader,
                    struct cf_ldso_node *out)
{
    map_needed(c, name, loader);
    struct cf_ldso_node *n = &res->nodes[res->n_nodes - 1];
    *out = *n;
    memset(n, 0, sizeof *n);
    out->parent = -1;
    out->depth = 0;
    out->object = -1;
    release_ctx(c);
    cf_ldso_result_release(res);
}

int cf_ldso_dlopen_from(const char *root, const char *caller, const char *name, const struct cf_ldso_opts *opts_in,
                        struct cf_ldso_node *out, cf_error *err)
{
    const struct cf_ldso_opts *opts = node_start(opts_in, out);
    struct cf_ldso_result res;
    struct ctx c;
    /* not folded: the one node handed out outlives the result its lists would be in */
    if (resolve_closure(&c, root, opts, 0, &res, err) != 0)
        return -1;
    long loader = caller ? object_of(&c, caller) : 0;
    if (loader < 0) {
        release_ctx(&c);
        cf_ldso_result_release(&res);
        return cf_error_set(err, CF_ERR_NOTFOUND, "%s is not in the closure of %s", caller, root);
    }
    if (!c.sysdirs.n) /* a root without a dynamic section did not set up the search */
        prepare_search(&c);
    /* dl_open_worker: _dl_map_object with the caller's map as the loader */
    map_one(&c, &res, name, loader, out);
    return 0;
}

int cf_ldso_locate(const char *name, unsigned machine, int elf_class, int big_endian,
                   const struct cf_ldso_opts *opts_in, struct cf_ldso_node *out, cf_error *err)
{
    const struct cf_ldso_opts *opts = node_start(opts_in, out);
    struct cf_ldso_result res;
    memset(&res, 0, sizeof res);
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.opts = opts;
    c.res = &res;
    c.interp_obj = -1;
    c.root = opts->root && *opts->root && strcmp(opts->root, "/") != 0 ? opts->root : NULL;
    c.elf_class = elf_class;
    c.big_endian = big_endian;
    c.machine = machine;
    res.elf_class = elf_class;
    res.machine = machine;
    if (cf_ldso_platform_for(machine, elf_class, c.root, &c.plat, err) != 0)
        return -1;
    if (cf_ldso_facts_get(machine, elf_class, opts, &c.facts, err) != 0) {
        cf_ldso_platform_release(&c.plat);
        return -1;
    }
    c.interp_name = cf_strdup(c.plat.interp);
    /* A program with no RPATH, RUNPATH or flags, started from the current directory. */
    struct cf_ldso_node *root_node = new_node(&c);
    root_node->needed = cf_strdup("(program)");
    root_node->path = cf_strdup("(program)");
    root_node->reason = CF_LDSO_ROOT;
    root_node->object = 0;
    char cwd[4096];
    char *prog = cf_path_join(getcwd(cwd, sizeof cwd) ? cwd : "/", "(program)");
    add_object(&c, prog, NULL, NULL, -1, 0, NULL);
    free(prog);
    prepare_search(&c);
    map_one(&c, &res, name, 0, out);
    return 0;
}

void cf_ldso_node_release(struct cf_ldso_node *n)
{
    if (!n)
        return;
    free(n->needed);
    free(n->expanded);
    free(n->path);
    free(n->via);
    free(n->error);
    free_candidates(n->considered, n->n_considered);
    memset(n, 0, sizeof *n);
}

void cf_ldso_result_release(struct cf_ldso_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->n_nodes; i++)
        cf_ldso_node_release(&res->nodes[i]);
    free(res->nodes);
    for (size_t i = 0; i < res->n_objects; i++) {
        struct cf_ldso_object *o = &res->objects[i];
        free(o->path);
        free(o->file);
        free(o->soname);
        free(o->rpath);
        free(o->runpath);
    }
    free(res->objects);
    for (size_t i = 0; res->elves && i < res->n_objects; i++)
        cf_elf_close(res->elves[i]);
    free(res->elves);
    free(res->interp);
    free(res->dst_lib);
    free(res->dst_platform);
    cf_strvec_clear(&res->hwcaps);
    cf_strvec_clear(&res->legacy_hwcaps);
    for (size_t i = 0; i < res->n_lists; i++) {
        cf_strvec_clear(&res->lists[i].dirs);
        free(res->lists[i].missing);
    }
    free(res->lists);
    cf_strvec_clear(&res->inputs);
    memset(res, 0, sizeof *res);
}

static const char *const reason_names[] = {
    [CF_LDSO_ROOT] = "root",
    [CF_LDSO_DIRECT_PATH] = "direct path",
    [CF_LDSO_RPATH] = "rpath",
    [CF_LDSO_LD_LIBRARY_PATH] = "LD_LIBRARY_PATH",
    [CF_LDSO_RUNPATH] = "runpath",
    [CF_LDSO_LDCACHE] = "ld.so.cache",
    [CF_LDSO_DEFAULT_DIRS] = "default dirs",
    [CF_LDSO_ALREADY_LOADED] = "already loaded",
    [CF_LDSO_NOT_FOUND] = "not found",
};

static const char *const reject_names[] = {
    [CF_LDSO_REJ_NONE] = "used",
    [CF_LDSO_REJ_NOT_FOUND] = "not found",
    [CF_LDSO_REJ_NO_ACCESS] = "permission denied",
    [CF_LDSO_REJ_DIR_MISSING] = "directory does not exist",
    [CF_LDSO_REJ_WRONG_CLASS] = "wrong ELF class",
    [CF_LDSO_REJ_WRONG_MACHINE] = "wrong machine",
    [CF_LDSO_REJ_NODEFLIB] = "skipped: DF_1_NODEFLIB",
    [CF_LDSO_REJ_FATAL] = "loader error",
    [CF_LDSO_REJ_OTHER_ERROR] = "open error (search list abandoned)",
};

const char *cf_ldso_reason_name(enum cf_ldso_reason reason)
{
    return (unsigned)reason < sizeof reason_names / sizeof reason_names[0] ? reason_names[reason] : "?";
}

const char *cf_ldso_reject_name(enum cf_ldso_reject reject)
{
    return (unsigned)reject < sizeof reject_names / sizeof reject_names[0] ? reject_names[reject] : "?";
}

char *cf_ldso_describe_reason(const struct cf_ldso_node *node)
{
    if ((node->reason == CF_LDSO_RPATH || node->reason == CF_LDSO_RUNPATH) && node->via)
        return cf_asprintf("%s of %s", cf_ldso_reason_name(node->reason), node->via);
    return cf_strdup(cf_ldso_reason_name(node->reason));
}
