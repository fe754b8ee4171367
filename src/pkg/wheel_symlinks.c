/* Symlink members. pip writes a symlink member as a small file holding the
 * target, but unzip, installers built on it and anyone unpacking the wheel
 * by hand create the link, and then follow it. A link is therefore followed
 * here as the kernel follows it once unpacked: component by component,
 * through the other links of the wheel (`hw/up -> ..` then `esc ->
 * hw/up/..` leaves the wheel though each alone looks harmless), with the
 * kernel's limit of 40 links and a budget of work for the whole wheel. A
 * member whose path runs through a link is written wherever the link points. */
#include <stdlib.h>
#include <string.h>

#include "pkg/wheel_verify_internal.h"

#define MAX_HOPS 40                          /* the kernel's MAXSYMLINKS */
#define WORK_BUDGET ((size_t)64 << 20)       /* bytes handled over all links of a wheel */

/* The symlink member at path[0..len), or NULL. */
static const struct vmember *link_at(struct verify_ctx *c, const char *path, size_t len)
{
    size_t i;
    if (!cf_name_index_find(&c->by_name, path, len, &i) || !c->m[i].z->is_symlink)
        return NULL;
    return &c->m[i];
}

enum outcome { INSIDE, ESCAPES, ABSOLUTE, LOOP, OVER_BUDGET };

/* Follows link m; *via is the first other link the walk went through. */
static enum outcome follow(struct verify_ctx *c, const struct vmember *m, size_t *budget, const struct vmember **via)
{
    const char *target = m->link_target;
    if (target[0] == '/')
        return ABSOLUTE;
    struct strbuf cur = STRBUF_INIT, rest = STRBUF_INIT, next = STRBUF_INIT;
    const char *slash = strrchr(m->z->name, '/');
    if (slash)
        cf_sb_add(&rest, m->z->name, (size_t)(slash - m->z->name) + 1);
    cf_sb_adds(&rest, target);
    size_t pos = 0, hops = 0;
    enum outcome out = INSIDE;
    *via = NULL;
    while (pos < rest.len && out == INSIDE) {
        const char *s = rest.buf + pos;
        const char *e = memchr(s, '/', rest.len - pos);
        size_t n = e ? (size_t)(e - s) : rest.len - pos;
        pos += n + (e != NULL);
        if (*budget < cur.len + n + 1) {
            out = OVER_BUDGET;
            break;
        }
        *budget -= cur.len + n + 1;
        if (n == 0 || (n == 1 && s[0] == '.'))
            continue;
        if (n == 2 && s[0] == '.' && s[1] == '.') {
            if (!cur.len) {
                out = ESCAPES;
                break;
            }
            const char *up = memrchr(cur.buf, '/', cur.len);
            cf_sb_setlen(&cur, up ? (size_t)(up - cur.buf) : 0);
            continue;
        }
        size_t keep = cur.len;
        if (cur.len)
            cf_sb_addc(&cur, '/');
        cf_sb_add(&cur, s, n);
        const struct vmember *l = link_at(c, cur.buf, cur.len);
        if (!l)
            continue;
        if (!l->link_target || ++hops > MAX_HOPS) {
            out = l->link_target ? LOOP : INSIDE; /* an unreadable link was reported when read */
            break;
        }
        if (!*via && l != m)
            *via = l;
        if (l->link_target[0] == '/') {
            out = ABSOLUTE;
            break;
        }
        /* the link's target replaces it, relative to the directory holding it */
        cf_sb_setlen(&cur, keep);
        cf_sb_reset(&next);
        cf_sb_adds(&next, l->link_target);
        cf_sb_addc(&next, '/');
        cf_sb_add(&next, rest.buf + pos, rest.len - pos);
        struct strbuf t = rest;
        rest = next;
        next = t;
        pos = 0;
    }
    cf_sb_release(&cur);
    cf_sb_release(&rest);
    cf_sb_release(&next);
    return out;
}

/* 1 when some directory above member m is a symlink member (*link gets it). */
static int written_through_link(struct verify_ctx *c, const struct vmember *m, const struct vmember **link)
{
    const char *name = m->z->name;
    uint64_t raw = cf_name_hash_start(&c->by_name);
    size_t from = 0;
    for (size_t i = 0; i < m->z->name_len; i++) {
        if (name[i] != '/')
            continue;
        raw = cf_fnv1a64_more(raw, name + from, i - from);
        from = i;
        size_t k;
        if (cf_name_index_find_raw(&c->by_name, name, i, raw, &k) && c->m[k].z->is_symlink) {
            *link = &c->m[k];
            return 1;
        }
    }
    return 0;
}

void cf_wheel_symlink_problems(struct verify_ctx *c, struct strvec *problems)
{
    size_t n_links = 0, budget = WORK_BUDGET;
    for (size_t i = 0; i < c->n; i++)
        n_links += c->m[i].z->is_symlink;
    if (!n_links)
        return;
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i], *via = NULL;
        cf_sb_reset(&a);
        cf_zip_name_display(&a, m->z->name, m->z->name_len);
        if (written_through_link(c, m, &via)) {
            cf_sb_reset(&b);
            cf_zip_name_display(&b, via->z->name, via->z->name_len);
            cf_strvec_pushf(problems, "'%s': its path runs through the symlink '%s': unpacked, it is written wherever "
                                      "that link points",
                            a.buf, b.buf);
            continue;
        }
        if (!m->z->is_symlink || !m->link_target)
            continue;
        enum outcome o = follow(c, m, &budget, &via);
        struct strbuf t = STRBUF_INIT;
        cf_zip_name_display(&t, m->link_target, strlen(m->link_target));
        cf_sb_reset(&b);
        if (via) {
            struct strbuf vt = STRBUF_INIT;
            cf_zip_name_display(&vt, via->link_target, strlen(via->link_target));
            cf_sb_adds(&b, " (through the link '");
            cf_zip_name_display(&b, via->z->name, via->z->name_len);
            cf_sb_addf(&b, "' -> '%s')", vt.buf);
            cf_sb_release(&vt);
        }
        if (o == ABSOLUTE)
            cf_strvec_pushf(problems, "'%s': symlink to '%s' reaches an absolute path%s: it escapes the wheel", a.buf,
                            t.buf, cf_sb_str(&b));
        else if (o == ESCAPES)
            cf_strvec_pushf(problems, "'%s': symlink to '%s' escapes the wheel%s", a.buf, t.buf, cf_sb_str(&b));
        else if (o == LOOP)
            cf_strvec_pushf(problems, "'%s': symlink to '%s' goes through more than %d links (a loop)", a.buf, t.buf,
                            MAX_HOPS);
        cf_sb_release(&t);
        if (o == OVER_BUDGET) {
            cf_strvec_pushf(problems, "%zu symlinks too long or deep to follow within the budget: refusing the rest",
                            n_links);
            break;
        }
    }
    cf_sb_release(&a);
    cf_sb_release(&b);
}
