/* A RUNPATH entry into another distribution's directory (torch/lib,
 * nvidia/nccl/lib) is declared by the wheel itself when its METADATA's
 * Requires-Dist names that distribution and the distribution's installed
 * RECORD lists files in that directory: pip installs the requirement, and the
 * directory comes with it. No --external needed for what the wheel says. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cclforge/fs.h"
#include "cclforge/wheel.h"
#include "pkg/wheel_verify_internal.h"

#define MAX_RECORD ((size_t)64 << 20) /* torch's installed RECORD is 2 MB */

char *cf_wheel_requirement_canon(const char *req)
{
    size_t n = 0; /* PEP 508: the name runs of letters, digits, '-', '_', '.' */
    while (req[n] && (req[n] == '-' || req[n] == '_' || req[n] == '.' || (req[n] >= '0' && req[n] <= '9') ||
                      ((req[n] | 0x20) >= 'a' && (req[n] | 0x20) <= 'z')))
        n++;
    if (!n)
        return NULL;
    char *name = cf_strndup(req, n);
    char *canon = cf_dist_canonical(name);
    free(name);
    return canon;
}

void cf_wheel_requires_dist(const char *metadata, size_t len, struct strvec *out)
{
    struct cf_kv kv = { 0 };
    cf_error err = CF_ERROR_INIT;
    if (cf_kv_parse(metadata ? metadata : "", len, &kv, &err) < 0) {
        cf_error_clear(&err);
        return; /* the wheel-metadata check names what is wrong */
    }
    for (size_t i = 0; i < kv.n; i++) {
        const char *v = kv.values[i];
        if (strcasecmp(kv.keys[i], "Requires-Dist") || !v)
            continue;
        const char *marker = strchr(v, ';');
        if (marker && strstr(marker, "extra"))
            continue; /* only with an extra pip is not asked for */
        char *canon = cf_wheel_requirement_canon(v);
        if (!canon)
            continue;
        if (cf_strvec_contains(out, canon))
            free(canon);
        else
            cf_strvec_push_nodup(out, canon);
    }
    cf_kv_release(&kv);
}

/* "torch-2.15.0.dist-info" -> canonical "torch" and version "2.15.0"; 0 when not such a name. */
static int dist_info_name(const char *entry, char **canon, char **version)
{
    static const char suffix[] = ".dist-info";
    size_t n = strlen(entry);
    if (n <= sizeof suffix - 1 || strcmp(entry + n - (sizeof suffix - 1), suffix))
        return 0;
    const char *dash = memchr(entry, '-', n - (sizeof suffix - 1));
    if (!dash || dash == entry)
        return 0;
    char *name = cf_strndup(entry, (size_t)(dash - entry));
    *canon = cf_dist_canonical(name);
    *version = cf_strndup(dash + 1, (size_t)(entry + n - (sizeof suffix - 1) - dash - 1));
    free(name);
    return 1;
}

/* 1 when a RECORD line's path is a file directly in dir (both site-packages relative). */
static int record_lists_in(const struct cf_record *rec, const char *dir)
{
    size_t dl = strlen(dir);
    for (size_t i = 0; i < rec->n; i++) {
        const char *p = rec->entries[i].path;
        if (!strncmp(p, dir, dl) && p[dl] == '/' && p[dl + 1] && !strchr(p + dl + 1, '/'))
            return 1;
    }
    return 0;
}

static int owns(const char *site, const char *entry, const char *dir, cf_error *err)
{
    char *path = cf_asprintf("%s/%s/RECORD", site, entry);
    struct strbuf text = STRBUF_INIT;
    int rc = 0;
    if (cf_read_file(path, MAX_RECORD, &text, err) < 0) {
        rc = -1;
    } else {
        struct cf_record rec = { 0 };
        if (cf_record_parse(cf_sb_str(&text), text.len, &rec, err) < 0)
            rc = -1;
        else
            rc = record_lists_in(&rec, dir);
        cf_record_release(&rec);
    }
    if (rc < 0)
        cf_error_prefix(err, "%s", path);
    cf_sb_release(&text);
    free(path);
    return rc;
}

/* An installed distribution found under a --site directory. */
struct dist {
    char *canon, *version, *site, *entry; /* entry: "torch-2.15.0.dist-info" */
    const char *via;                      /* the required distribution that brought it in, NULL when direct */
};

#define MAX_DISTS 4096 /* a site-packages of many environments */

/* Every *.dist-info under the site directories, the first of each name kept. */
static size_t list_dists(const char *const *site_dirs, size_t n_sites, struct dist **out)
{
    size_t n = 0, cap = 0;
    for (size_t s = 0; s < n_sites; s++) {
        DIR *d = opendir(site_dirs[s]);
        if (!d)
            continue; /* the install step names a --site that is no directory */
        struct dirent *e;
        while ((e = readdir(d)) && n < MAX_DISTS) {
            char *canon, *version;
            if (!dist_info_name(e->d_name, &canon, &version))
                continue;
            int seen = 0;
            for (size_t k = 0; k < n && !seen; k++)
                seen = !strcmp((*out)[k].canon, canon);
            if (seen) {
                free(canon);
                free(version);
                continue;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                *out = cf_xrealloc(*out, cap * sizeof **out);
            }
            (*out)[n++] = (struct dist){ canon, version, cf_strdup(site_dirs[s]), cf_strdup(e->d_name), NULL };
        }
        closedir(d);
    }
    return n;
}

static struct dist *dist_named(struct dist *all, size_t n, const char *canon)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i].canon, canon))
            return &all[i];
    return NULL;
}

int cf_wheel_dist_owning_dir(const char *const *site_dirs, size_t n_sites, const struct strvec *requires,
                             const char *site_rel_dir, char **owner, char **site, cf_error *err)
{
    *owner = *site = NULL;
    struct dist *all = NULL;
    size_t n = list_dists(site_dirs, n_sites, &all);
    /* what pip installs with the wheel: its requirements and theirs, in that order */
    struct strvec order = STRVEC_INIT;
    for (size_t i = 0; i < requires->n; i++)
        cf_strvec_push(&order, requires->v[i]);
    int rc = 0;
    for (size_t q = 0; q < order.n && rc == 0; q++) {
        struct dist *d = dist_named(all, n, order.v[q]);
        if (!d)
            continue;
        rc = owns(d->site, d->entry, site_rel_dir, err);
        if (rc > 0) {
            *owner = d->via ? cf_asprintf("%s %s, which %s requires", d->canon, d->version, d->via)
                            : cf_asprintf("%s %s", d->canon, d->version);
            *site = cf_strdup(d->site);
            break;
        }
        if (rc < 0)
            break;
        char *meta_path = cf_asprintf("%s/%s/METADATA", d->site, d->entry);
        struct strbuf meta = STRBUF_INIT;
        cf_error e2 = CF_ERROR_INIT;
        if (cf_read_file(meta_path, MAX_RECORD, &meta, &e2) == 0) {
            struct strvec more = STRVEC_INIT;
            cf_wheel_requires_dist(cf_sb_str(&meta), meta.len, &more);
            for (size_t k = 0; k < more.n; k++) {
                struct dist *m = dist_named(all, n, more.v[k]);
                if (m && !cf_strvec_contains(&order, more.v[k])) {
                    m->via = d->canon;
                    cf_strvec_push(&order, more.v[k]);
                }
            }
            cf_strvec_clear(&more);
        }
        cf_error_clear(&e2);
        cf_sb_release(&meta);
        free(meta_path);
    }
    cf_strvec_clear(&order);
    for (size_t i = 0; i < n; i++) {
        free(all[i].canon);
        free(all[i].version);
        free(all[i].site);
        free(all[i].entry);
    }
    free(all);
    return rc;
}

int cf_wheel_external_from_requires(struct verify_ctx *c, const struct strvec *requires, const char *site_rel_dir,
                                    struct strvec *provided)
{
    if (!requires->n || !c->opts->n_site_dirs)
        return 0;
    char *owner, *site;
    cf_error err = CF_ERROR_INIT;
    int rc = cf_wheel_dist_owning_dir(c->opts->site_dirs, c->opts->n_site_dirs, requires, site_rel_dir, &owner, &site,
                                      &err);
    if (rc > 0) {
        cf_strvec_push(&c->externals, site_rel_dir);
        cf_strvec_pushf(provided, "%s (owned by %s, installed in %s)", site_rel_dir, owner, site);
    }
    /* an unreadable RECORD proves nothing: the entry stays undeclared, and is said so */
    cf_error_clear(&err);
    free(owner);
    free(site);
    return rc > 0;
}
