/* The archive itself: the file, its name, and the zip check, which reads the
 * structure (zip_scan.c), the names, the symlinks, and then every member's
 * data once, streaming, on all cores (wheel_stream_pool.c, wheel_stream.c):
 * each member is hashed in RECORD's algorithm as it is decompressed, and the
 * ELF members are copied into the installed layout for the native checks.
 * Memory stays at the member table and ~170 KiB per worker whatever the
 * wheel holds. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "pkg/member_name.h"
#include "pkg/wheel_verify_internal.h"

#define MAX_MEMBERS 200000            /* 70,000 is a very large wheel; each costs ~250 bytes here */
#define MAX_NAME CF_MEMBER_NAME_MAX
#define MAX_LINK 4096                 /* a symlink target longer than PATH_MAX is no path */

void cf_wheel_check_file(struct verify_ctx *c)
{
    const char *path = c->opts->wheel;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0) {
        cf_wheel_add_check(c->res, "file", 0, "%s: %s", path, errno == ENOENT ? "no such file" : strerror(errno));
        return;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        cf_wheel_add_check(c->res, "file", 0, "%s is not a regular file: a wheel is a zip file on disk", path);
        return;
    }
    c->fd = fd;
    c->file_size = (uint64_t)st.st_size;
    cf_wheel_add_check(c->res, "file", 1, "%llu bytes", (unsigned long long)c->file_size);
}

void cf_wheel_check_name(struct verify_ctx *c)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_name_parse(c->opts->wheel, &c->wn, &err) < 0) {
        cf_wheel_add_check(c->res, "name", 0, "%s", cf_error_message(&err));
        cf_error_clear(&err);
        return;
    }
    struct cf_wheel_verify_result *r = c->res;
    r->dist = cf_strdup(c->wn.dist);
    r->version = cf_strdup(c->wn.version);
    r->python_tag = cf_strdup(c->wn.python_tag);
    r->abi_tag = cf_strdup(c->wn.abi_tag);
    r->platform_tag = cf_strdup(c->wn.platform_tag);
    r->glibc_ceiling = cf_platform_glibc_ceiling(r->platform_tag);
    c->tag_minor = r->glibc_ceiling ? r->glibc_ceiling % 1000 : 0;
    c->arch = cf_platform_arch(r->platform_tag);
    c->musl = cf_starts_with(r->platform_tag, "musllinux_");
    c->have_name = 1;
    cf_wheel_add_check(r, "name", 1, "%s %s, tags %s-%s-%s", r->dist, r->version, r->python_tag, r->abi_tag,
                       r->platform_tag);
}

/* Every directory above an installed path, into c->dirs. Prefix hashes come
 * out of one pass over the path, and the walk stops at the first directory
 * already known (all above it are): linear in the names' total length. The
 * new directories' keys all point into one copy of the path. */
static void index_dirs(struct verify_ctx *c, const char *path)
{
    size_t len = strlen(path), n_cuts = 0;
    uint64_t raw = cf_name_hash_start(&c->dirs);
    size_t cuts[MAX_NAME / 2 + 32]; /* installed paths are a name (<= MAX_NAME) under a few directories */
    uint64_t hashes[MAX_NAME / 2 + 32];
    for (size_t i = 0, from = 0; i < len; i++)
        if (path[i] == '/' && n_cuts < sizeof cuts / sizeof cuts[0]) {
            raw = cf_fnv1a64_more(raw, path + from, i - from);
            from = i;
            cuts[n_cuts] = i;
            hashes[n_cuts++] = raw;
        }
    const char *copy = NULL;
    for (size_t k = n_cuts; k-- > 0;) {
        if (cf_name_index_find_raw(&c->dirs, path, cuts[k], hashes[k], NULL))
            break;
        if (!copy) {
            cf_strvec_push_nodup(&c->dir_names, cf_strndup(path, cuts[k]));
            copy = c->dir_names.v[c->dir_names.n - 1];
        }
        cf_name_index_add_raw(&c->dirs, copy, cuts[k], hashes[k], 1, NULL);
    }
}

static void read_link_targets(struct verify_ctx *c, struct cf_wheel_problems *p)
{
    for (size_t i = 0; i < c->n; i++) {
        struct vmember *m = &c->m[i];
        if (!m->z->is_symlink)
            continue;
        struct strbuf target = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        if (cf_wheel_member_read_all(c, i, MAX_LINK, &target, &err) < 0) {
            cf_wheel_problem(p, "'%s': symlink target unreadable: %s", m->shown, cf_error_message(&err));
            cf_error_clear(&err);
        } else if (memchr(cf_sb_str(&target), '\0', target.len)) {
            cf_wheel_problem(p, "'%s': NUL byte in the symlink target", m->shown);
        } else {
            m->link_target = cf_sb_detach(&target);
        }
        cf_sb_release(&target);
    }
}

/* The earliest member before i that installs to the same file once case and
 * Unicode are folded, -1 when none. Keys are relative to site-packages
 * ("../<path>" for the other schemes). A usual member (at the root, its name
 * in normal form and its own fold key: nearly every member) is its own key,
 * already in c->by_name; only the unusual ones (an alias, a capital, a
 * foldable letter, a .data member) get a key of their own in c->paths, so
 * memory does not grow with a sound wheel. Two usual members never share a
 * key (their names would be equal: zip's duplicate), so every pair has an
 * unusual one, found either way. */
static long earlier_twin(struct verify_ctx *c, size_t i, const char *installed)
{
    static const char site[] = CF_WHEEL_SITE_REL "/";
    const struct cf_zip_entry *z = c->m[i].z;
    const char *rel = cf_starts_with(installed, site) ? installed + sizeof site - 1 : NULL;
    if (rel && strlen(rel) == z->name_len && !memcmp(rel, z->name, z->name_len) &&
        cf_member_name_folds_to_itself(z->name, z->name_len))
        return cf_member_set_first(&c->paths, z->name, z->name_len);
    struct strbuf key = STRBUF_INIT;
    char *other_scheme = rel ? NULL : cf_asprintf("../%s", installed);
    cf_member_name_fold(rel ? rel : other_scheme, strlen(rel ? rel : other_scheme), &key);
    free(other_scheme);
    long first = cf_member_set_first(&c->paths, cf_sb_str(&key), key.len);
    size_t j;
    if (cf_name_index_find(&c->by_name, cf_sb_str(&key), key.len, &j) && j < i && (first < 0 || (long)j < first) &&
        !c->m[j].problem && c->m[j].installable && !c->m[j].z->is_dir)
        first = (long)j;
    if (cf_member_set_first(&c->paths, cf_sb_str(&key), key.len) < 0)
        cf_member_set_add(&c->paths, cf_sb_str(&key), key.len, i);
    cf_sb_release(&key);
    return first;
}

/* Where each member installs, the directories that makes, and what is wrong with the names. */
static void index_members(struct verify_ctx *c, struct cf_wheel_problems *p)
{
    c->n = c->scan.n;
    c->m = cf_xcalloc(c->n ? c->n : 1, sizeof *c->m);
    cf_name_index_reserve(&c->by_name, c->n);
    for (size_t i = 0; i < c->n; i++) {
        struct vmember *m = &c->m[i];
        m->z = &c->scan.entries[i];
        m->record_line = -1;
        struct strbuf shown = STRBUF_INIT;
        cf_zip_name_display(&shown, m->z->name, m->z->name_len);
        if (strcmp(shown.buf ? shown.buf : "", m->z->name) || shown.len != m->z->name_len)
            m->shown = cf_sb_detach(&shown);
        else
            m->shown = m->z->name;
        cf_sb_release(&shown);
        m->problem = cf_member_name_problem(m->z->name, m->z->name_len);
        if (m->problem)
            cf_wheel_problem(p, "'%s': %s", m->shown, m->problem);
        /* a second member of one name is zip_scan's fault already */
        if (!cf_name_index_add(&c->by_name, m->z->name, m->z->name_len, i, NULL) && !m->problem)
            m->problem = "duplicate name";
    }
    cf_wheel_find_dist_info(c);
    c->stem = c->dist_info ? cf_strndup(c->dist_info, strlen(c->dist_info) - strlen(".dist-info")) : NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct vmember *m = &c->m[i];
        if (m->problem)
            continue;
        char *installed = cf_wheel_installed_path(c->stem, m->z->name);
        if (!installed) {
            if (!m->z->is_dir)
                cf_wheel_problem(p, "'%s': not in a .data scheme pip knows (purelib, platlib, scripts, headers, "
                                    "data): pip refuses the wheel",
                                 m->shown);
            continue;
        }
        m->installable = 1;
        if (m->z->is_dir) { /* the directory itself, which the normal form no longer ends in '/' */
            char *dir = cf_asprintf("%s/", installed);
            index_dirs(c, dir);
            free(dir);
        } else {
            index_dirs(c, installed);
        }
        /* two members landing on one file (an alias, a .data member over a
         * root one, a case or Unicode twin): pip keeps one */
        long other = m->z->is_dir ? -1 : earlier_twin(c, i, installed);
        if (other >= 0) {
            char *where = cf_wheel_layout_display(installed);
            char *first = cf_wheel_installed_path(c->stem, c->m[other].z->name);
            struct strbuf why = STRBUF_INIT;
            cf_member_alias_describe(&why, c->m[other].shown, first, m->shown, installed, where);
            cf_wheel_problem(p, "%s", why.buf);
            cf_sb_release(&why);
            free(first);
            free(where);
        }
        free(installed);
    }
}

void cf_wheel_check_zip(struct verify_ctx *c)
{
    struct cf_wheel_verify_result *r = c->res;
    struct cf_zip_limits lim = { MAX_MEMBERS, c->max_size, CF_WHEEL_SHOWN };
    cf_error err = CF_ERROR_INIT;
    if (cf_zip_scan(cf_wheel_read_at, &c->fd, c->file_size, &lim, &c->scan, &err) < 0) {
        cf_wheel_add_check(r, "zip", 0, "not a readable zip archive: %s", cf_error_message(&err));
        cf_error_clear(&err);
        return;
    }
    c->have_scan = 1;
    r->members = c->scan.n;
    r->uncompressed = c->scan.total_usize;
    struct cf_wheel_problems p = { STRBUF_INIT, 0 };
    for (size_t i = 0; i < c->scan.faults.n; i++)
        cf_wheel_problem(&p, "%s", c->scan.faults.v[i]);
    index_members(c, &p);
    if (c->scan.n_faults) {
        cf_wheel_problems_finish(&p);
        cf_wheel_add_check(r, "zip", 0, "unsafe archive, nothing decompressed: %s", p.text.buf);
        cf_sb_release(&p.text);
        return;
    }
    c->readable = 1;
    read_link_targets(c, &p);
    struct strvec links = STRVEC_INIT;
    cf_wheel_symlink_problems(c, &links);
    for (size_t i = 0; i < links.n; i++)
        cf_wheel_problem(&p, "%s", links.v[i]);
    cf_strvec_clear(&links);
    cf_wheel_read_record(c);
    if (cf_wheel_layout_create(c, &err) < 0) {
        cf_wheel_problem(&p, "no installed layout to check the native code in: %s", cf_error_message(&err));
        cf_error_clear(&err);
    } else {
        cf_wheel_stream_members(c, c->jobs, &p);
        c->content_read = 1;
        cf_wheel_read_elf_facts(c);
    }
    cf_wheel_report(r, "zip", &p,
                    "%zu members, %llu bytes uncompressed (limit %llu); no unsafe, duplicate or overlapping names, no "
                    "escaping symlinks; every member's data matches its CRC and size",
                    c->n, (unsigned long long)c->scan.total_usize, (unsigned long long)c->max_size);
}
