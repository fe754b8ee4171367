/* Which files are dumps and whose: the paths given (a directory's files are
 * taken when their content is a pickle or JSON), the rank from the name's
 * trailing integer (or the dump's own "rank"), the host from the name around
 * --prefix, then each dump read. One rank's second dump is left out, said. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/hang.h"

/* a dump larger than this is refused unread (a 2,000-entry ring is ~2 MB) */
#define DUMP_MAX (1ull << 30)

static const char *const dump_suffixes[] = { ".pkl", ".pickle", ".json", ".pkl.json" };

static int is_sep(char c)
{
    return c == '-' || c == '_' || c == '.';
}

/* The name without a dump suffix; its trailing integer (-1 none), and with
 * prefix the host: the text before the prefix, else between it and the rank. */
static int rank_of_name(const char *base, const char *prefix, char **host)
{
    size_t len = strlen(base);
    for (size_t i = 0; i < sizeof dump_suffixes / sizeof *dump_suffixes; i++) {
        size_t sl = strlen(dump_suffixes[i]);
        if (len > sl && !strcmp(base + len - sl, dump_suffixes[i])) {
            len -= sl;
            break;
        }
    }
    size_t d = len;
    while (d > 0 && base[d - 1] >= '0' && base[d - 1] <= '9')
        d--;
    if (d == len || len - d > 8)
        return -1;
    int rank = atoi(base + d); /* at most 8 digits */
    *host = NULL;
    if (prefix && *prefix) {
        const char *p = strstr(base, prefix);
        if (p && (size_t)(p - base) < d) {
            size_t a = 0, b = (size_t)(p - base);
            if (b == 0) { /* prefix first: the host follows it */
                a = strlen(prefix);
                b = d;
            }
            while (a < b && is_sep(base[a]))
                a++;
            while (b > a && is_sep(base[b - 1]))
                b--;
            if (b > a)
                *host = cf_strndup(base + a, b - a);
        }
    }
    return rank;
}

static void add_file(struct cf_hang_result *r, const char *path, const char *prefix, int from_dir)
{
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    struct cf_hang_dump d;
    memset(&d, 0, sizeof d);
    d.gpu = -1;
    d.path = cf_strdup(path);
    d.rank = rank_of_name(cf_basename(path), prefix, &d.host);
    if (cf_read_file(path, DUMP_MAX, &text, &err) < 0) {
        d.refused = cf_strdup(cf_error_message(&err));
        cf_error_clear(&err);
    } else {
        const unsigned char *b = (const unsigned char *)text.buf;
        size_t i = 0;
        while (i < text.len && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r'))
            i++;
        int looks = text.len >= 2 && (b[0] == 0x80 || (i < text.len && b[i] == '{'));
        if (from_dir && !looks) { /* a log or a note beside the dumps */
            cf_sb_release(&text);
            free(d.path);
            free(d.host);
            return;
        }
        cf_hang_read_dump(text.buf, text.len, r, &d);
    }
    cf_sb_release(&text);
    if (!d.refused && d.rank < 0)
        d.refused = cf_strdup("no rank: the file name ends in no number and the dump names none");
    r->dumps = cf_xrealloc(r->dumps, (r->n_dumps + 1) * sizeof *r->dumps);
    r->dumps[r->n_dumps++] = d;
}

static int by_rank_then_path(const void *a, const void *b)
{
    const struct cf_hang_dump *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_dir(struct cf_hang_result *r, const char *dir, const char *prefix)
{
    DIR *dh = opendir(dir);
    if (!dh)
        return;
    struct strvec names = STRVEC_INIT;
    struct dirent *de;
    while ((de = readdir(dh)))
        if (de->d_name[0] != '.')
            cf_strvec_push(&names, de->d_name);
    closedir(dh);
    qsort(names.v, names.n, sizeof *names.v, by_name);
    for (size_t i = 0; i < names.n; i++) {
        if (prefix && *prefix && !strstr(names.v[i], prefix))
            continue;
        char *p = cf_path_join(dir, names.v[i]);
        if (cf_is_file(p))
            add_file(r, p, prefix, 1);
        free(p);
    }
    cf_strvec_clear(&names);
}

int cf_hang_read(const char *const *paths, size_t n, const struct cf_hang_options *opt, struct cf_hang_result *r,
                 cf_error *err)
{
    const char *prefix = opt ? opt->prefix : NULL;
    for (size_t i = 0; i < n; i++) {
        if (cf_is_dir(paths[i]))
            add_dir(r, paths[i], prefix);
        else if (cf_path_exists(paths[i]))
            add_file(r, paths[i], prefix, 0);
        else
            return cf_error_set(err, CF_ERR_USAGE, "%s: no such file or directory", paths[i]);
    }
    if (!r->n_dumps)
        return cf_error_set(err, CF_ERR_USAGE, "no dump found (a dump is a pickle or JSON file named ...<rank>)");
    qsort(r->dumps, r->n_dumps, sizeof *r->dumps, by_rank_then_path);
    /* one dump a rank: the first readable by name is read, a second one said and refused */
    const struct cf_hang_dump *read = NULL;
    for (size_t i = 0; i < r->n_dumps; i++) {
        struct cf_hang_dump *d = &r->dumps[i];
        if (d->refused || d->rank < 0)
            continue;
        if (read && read->rank == d->rank)
            d->refused = cf_asprintf("a second dump of rank %d (%s is read)", d->rank, read->path);
        else
            read = d;
    }
    for (size_t i = 0; i < r->n_dumps; i++) {
        struct cf_hang_dump *d = &r->dumps[i];
        if (d->refused) {
            r->n_refused++;
        } else if (d->version && !d->version_known) {
            cf_strvec_pushf(&r->notes, "rank %d: dump version %s is not one this reader lists; read by field names",
                            d->rank, d->version);
        } else if (!d->version) {
            cf_strvec_pushf(&r->notes, "rank %d: the dump names no version; read by field names", d->rank);
        }
    }
    return 0;
}

const struct cf_hang_dump *cf_hang_dump_of(const struct cf_hang_result *r, int rank)
{
    for (size_t i = 0; i < r->n_dumps; i++)
        if (r->dumps[i].rank == rank && !r->dumps[i].refused)
            return &r->dumps[i];
    return NULL;
}
