/* The archive itself: the file, its name, and the zip check, which reads the
 * structure (zip_scan.c), the names, the symlinks, and then every member's
 * data once, streaming (zip_read.c): each member is hashed in RECORD's
 * algorithm as it is decompressed, and the ELF members are copied into the
 * installed layout for the native checks. Memory stays at the member table
 * and a 64 KiB buffer whatever the wheel holds. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "pkg/member_name.h"
#include "pkg/wheel_digest.h"
#include "pkg/wheel_verify_internal.h"

#define MAX_MEMBERS 200000            /* 70,000 is a very large wheel; each costs ~250 bytes here */
#define MAX_NAME CF_MEMBER_NAME_MAX
#define MAX_LINK 4096                 /* a symlink target longer than PATH_MAX is no path */
#define MAX_METADATA ((size_t)16 << 20) /* WHEEL, METADATA, the marker */
#define LIBRARY_HEAD 4096             /* what is placed of a non-ELF file named like a library */
#define CHUNK (64 * 1024)

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
            raw = cf_name_hash_more(raw, path + from, i - from);
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

static int write_all(int fd, const void *data, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, (const char *)data + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

static int looks_like_library(const char *name)
{
    const char *base = strrchr(name, '/');
    return strstr(base ? base + 1 : name, ".so") != NULL;
}

/* Where a member's bytes go besides the digest. */
struct sink {
    int fd;              /* its layout copy, -1 none */
    uint64_t fd_cap;     /* bytes the copy may take */
    struct strbuf *keep; /* a metadata file kept in memory, or NULL */
};

/* The first bytes decide: an ELF member is copied whole into the layout, a
 * non-ELF one named like a library gets its head there, others nothing. */
static void open_sink(struct verify_ctx *c, size_t i, const unsigned char *head, size_t n, struct sink *s,
                      struct cf_wheel_problems *p)
{
    struct vmember *m = &c->m[i];
    m->is_elf = cf_elf_facts_is_elf(head, n);
    if (!m->installable || m->z->is_symlink || (!m->is_elf && !looks_like_library(m->z->name)))
        return;
    cf_error err = CF_ERROR_INIT;
    char *installed = cf_wheel_installed_path(c->stem, m->z->name);
    s->fd = installed ? cf_wheel_layout_open(c, i, installed, &err) : -1;
    s->fd_cap = m->is_elf ? UINT64_MAX : LIBRARY_HEAD;
    if (installed && s->fd < 0) {
        cf_wheel_problem(p, "%s", cf_error_message(&err));
        cf_error_clear(&err);
    }
    free(installed);
}

/* Compares the digest of member m's bytes with its RECORD entry's, keeping it only when they differ. */
static void settle_digest(struct verify_ctx *c, struct vmember *m, struct cf_digest *d, int have_algo)
{
    struct strbuf b64 = STRBUF_INIT;
    cf_digest_final_b64(d, &b64);
    const struct cf_record_entry *e = m->record_line >= 0 ? &c->rec.entries[m->record_line] : NULL;
    if (have_algo && e && e->digest && strcmp(e->digest, b64.buf))
        m->bad_digest = cf_sb_detach(&b64);
    cf_sb_release(&b64);
}

/* Streams member i once: digest, layout copy, kept text, and its size and CRC checked. */
static void stream_member(struct verify_ctx *c, size_t i, unsigned char *buf, struct cf_wheel_problems *p)
{
    struct vmember *m = &c->m[i];
    if (m->z->is_dir) {
        m->data = DATA_OK;
        if (m->z->usize)
            cf_wheel_problem(p, "'%s': a directory entry holding %llu bytes of data", m->shown,
                             (unsigned long long)m->z->usize);
        return;
    }
    enum cf_digest_algo algo = CF_DIGEST_SHA256;
    int have_algo = m->record_line >= 0 && c->rec.entries[m->record_line].algo &&
                    cf_digest_algo_named(c->rec.entries[m->record_line].algo, &algo) == 0;
    struct cf_digest d;
    cf_digest_init(&d, algo);
    struct sink s = { -1, 0, NULL };
    if ((long)i == c->wheel)
        s.keep = &c->wheel_text;
    else if ((long)i == c->metadata)
        s.keep = &c->metadata_text;
    else if ((long)i == c->marker)
        s.keep = &c->marker_text;
    if (s.keep && m->z->usize > MAX_METADATA) {
        cf_wheel_problem(p, "'%s': %llu bytes, too large for a metadata file (16 MiB at most)", m->shown,
                         (unsigned long long)m->z->usize);
        s.keep = NULL;
    }
    struct cf_wheel_stream *st = cf_xmalloc(sizeof *st);
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_member_open(c, i, st, &err) < 0) {
        cf_wheel_problem(p, "'%s': %s", m->shown, cf_error_message(&err));
        cf_error_clear(&err);
        m->data = DATA_BAD;
        free(st);
        return;
    }
    unsigned char head[4];
    size_t head_n = 0;
    int decided = 0, write_failed = 0;
    ssize_t got;
    while ((got = cf_wheel_member_read(st, buf, CHUNK, &err)) > 0) {
        size_t n = (size_t)got;
        cf_digest_update(&d, buf, n);
        if (!decided) {
            size_t before = head_n, take = n < sizeof head - head_n ? n : sizeof head - head_n;
            memcpy(head + head_n, buf, take);
            head_n += take;
            if (head_n == sizeof head || m->size_read + n == m->z->usize) {
                decided = 1;
                open_sink(c, i, head, head_n, &s, p);
                /* bytes of earlier, shorter reads go first */
                if (s.fd >= 0 && before && write_all(s.fd, head, before) < 0)
                    write_failed = 1;
            }
        }
        if (s.fd >= 0 && m->size_read < s.fd_cap) {
            size_t w = s.fd_cap - m->size_read < n ? (size_t)(s.fd_cap - m->size_read) : n;
            if (write_all(s.fd, buf, w) < 0 && !write_failed) {
                cf_wheel_problem(p, "writing the layout copy of '%s': %s", m->shown, strerror(errno));
                write_failed = 1;
            }
        }
        if (s.keep)
            cf_sb_add(s.keep, buf, n);
        m->size_read += n;
    }
    if (!decided)
        open_sink(c, i, head, head_n, &s, p);
    if (got < 0) {
        cf_wheel_problem(p, "'%s': %s", m->shown, cf_error_message(&err));
        cf_error_clear(&err);
    }
    cf_wheel_member_close(st);
    free(st);
    if (s.fd >= 0)
        close(s.fd);
    settle_digest(c, m, &d, have_algo);
    m->data = got < 0 ? DATA_BAD : DATA_OK;
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
        unsigned char *buf = cf_xmalloc(CHUNK);
        for (size_t i = 0; i < c->n; i++)
            stream_member(c, i, buf, &p);
        free(buf);
        c->content_read = 1;
        cf_wheel_read_elf_facts(c);
    }
    cf_wheel_report(r, "zip", &p,
                    "%zu members, %llu bytes uncompressed (limit %llu); no unsafe, duplicate or overlapping names, no "
                    "escaping symlinks; every member's data matches its CRC and size",
                    c->n, (unsigned long long)c->scan.total_usize, (unsigned long long)c->max_size);
}
