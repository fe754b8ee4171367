#include "ts_ldd.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/spawn.h"

static void push_line(struct ts_ldd *l, const char *name, const char *path)
{
    l->lines = cf_xrealloc(l->lines, (l->n + 1) * sizeof *l->lines);
    l->lines[l->n].name = cf_strdup(name);
    l->lines[l->n].path = path ? cf_strdup(path) : NULL;
    l->n++;
}

/* "\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)", "\tlibq.so => not found",
 * "\t/lib64/ld-linux-x86-64.so.2 (0x...)", "\tlinux-vdso.so.1 (0x...)". */
static void parse_line(struct ts_ldd *l, const char *line)
{
    while (*line == '\t' || *line == ' ')
        line++;
    const char *arrow = strstr(line, " => ");
    if (arrow) {
        char *name = cf_strndup(line, (size_t)(arrow - line));
        const char *rest = arrow + 4;
        if (strncmp(rest, "not found", 9) == 0) {
            push_line(l, name, NULL);
        } else {
            const char *end = strstr(rest, " (0x");
            char *path = end ? cf_strndup(rest, (size_t)(end - rest)) : cf_strdup(rest);
            push_line(l, name, path);
            free(path);
        }
        free(name);
        return;
    }
    const char *end = strstr(line, " (0x");
    if (!end || line[0] != '/')
        return; /* linux-vdso.so.1, "statically linked", messages */
    char *path = cf_strndup(line, (size_t)(end - line));
    push_line(l, path, path);
    free(path);
}

int ts_ldd_run(const char *file, const char *llp, struct ts_ldd *out)
{
    memset(out, 0, sizeof *out);
    const char *argv[] = { "ldd", file, NULL };
    char *set = llp ? cf_asprintf("LD_LIBRARY_PATH=%s", llp) : cf_strdup("LD_LIBRARY_PATH");
    const char *env[] = { set, NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.capture_stderr = 1;
    o.null_stdin = 1;
    o.timeout_s = 60;
    o.env_set = env;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    int rc = cf_spawn_run(argv, &o, &r, NULL);
    free(set);
    if (rc != 0)
        return -1;
    out->raw = cf_asprintf("%s%s", cf_sb_str(&r.out), cf_sb_str(&r.err));
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    for (size_t i = 0; i < lines.n; i++)
        parse_line(out, lines.v[i]);
    out->ran = r.exited && r.exit_code == 0;
    cf_strvec_clear(&lines);
    cf_spawn_result_release(&r);
    return 0;
}

void ts_ldd_release(struct ts_ldd *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->lines[i].name);
        free(l->lines[i].path);
    }
    free(l->lines);
    free(l->raw);
    memset(l, 0, sizeof *l);
}

char *ts_ldd_compare(const struct cf_ldso_result *res, const struct ts_ldd *ldd)
{
    struct strbuf ours = STRBUF_INIT, theirs = STRBUF_INIT;
    /* The link map order: each node that mapped a new object, or faked a missing
     * one, in processing order; the root is not listed by ldd. In trace mode
     * rtld.c moves the dynamic loader to just after its predecessor in the
     * symbol search list, which excludes the faked (missing) entries. */
    long interp = -1;
    for (size_t i = 0; i < res->n_objects; i++)
        if (res->objects[i].is_interp)
            interp = (long)i;
    long interp_after = interp > 0 ? interp - 1 : -1;
    if (interp_after == 0) /* right after the main program: ldd lists it first */
        cf_sb_addf(&ours, "%s\n", res->objects[interp].path);
    for (size_t i = 1; i < res->n_nodes; i++) {
        const struct cf_ldso_node *n = &res->nodes[i];
        /* ldd names an object by the NEEDED string after token expansion. */
        const char *name = n->expanded ? n->expanded : n->needed;
        if (n->object < 0) {
            cf_sb_addf(&ours, "%s => not found\n", name);
            continue;
        }
        const struct cf_ldso_object *o = &res->objects[n->object];
        if (o->node != (long)i || o->is_interp)
            continue;
        if (strcmp(name, o->path) == 0)
            cf_sb_addf(&ours, "%s\n", o->path);
        else
            cf_sb_addf(&ours, "%s => %s\n", name, o->path);
        if (n->object == interp_after)
            cf_sb_addf(&ours, "%s\n", res->objects[interp].path);
    }
    for (size_t i = 0; i < ldd->n; i++) {
        const struct ts_ldd_line *l = &ldd->lines[i];
        if (l->path && strcmp(l->name, l->path) == 0)
            cf_sb_addf(&theirs, "%s\n", l->path);
        else
            cf_sb_addf(&theirs, "%s => %s\n", l->name, l->path ? l->path : "not found");
    }
    char *diff = NULL;
    if (strcmp(cf_sb_str(&ours), cf_sb_str(&theirs)) != 0)
        diff = cf_asprintf("cclforge:\n%sldd:\n%s", cf_sb_str(&ours), cf_sb_str(&theirs));
    cf_sb_release(&ours);
    cf_sb_release(&theirs);
    return diff;
}
