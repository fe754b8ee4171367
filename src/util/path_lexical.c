/* Paths as strings: made absolute and normalised without touching the file
 * system, for paths that need not exist (RPATH targets, archive members);
 * and paths resolved inside a root as a chroot would (cf_path_in_root). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

/* One pass over the input into one output buffer no longer than it: a
 * component is appended as "/name"; ".." cuts the output back to its last
 * '/'. Every output byte is written once and cut at most once, so the work is
 * linear in the length whatever the path (a hostile symlink target may be
 * hundreds of megabytes of "a/../"), and no string is made per component. */
char *cf_path_normalize(const char *abs, int *escaped)
{
    size_t len = strlen(abs);
    char *out = cf_xmalloc(len + 2);
    size_t o = 0;
    int climbed_out = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && abs[i] == '/')
            i++;
        size_t start = i;
        while (i < len && abs[i] != '/')
            i++;
        size_t n = i - start;
        if (n == 0 || (n == 1 && abs[start] == '.'))
            continue;
        if (n == 2 && abs[start] == '.' && abs[start + 1] == '.') {
            if (o == 0)
                climbed_out = 1; /* "/.." is "/" to the kernel */
            while (o > 0 && out[--o] != '/')
                ;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, abs + start, n);
        o += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    if (escaped)
        *escaped = climbed_out;
    return out;
}

char *cf_path_absolute(const char *path)
{
    if (path[0] == '/')
        return cf_strdup(path);
    char *cwd = cf_getcwd();
    char *abs = cf_path_join(cwd ? cwd : "/", path);
    free(cwd);
    return abs;
}

/* Pushes the components of path onto the front of the queue (in order). */
static void queue_front(struct strvec *queue, const char *path)
{
    struct strvec parts = STRVEC_INIT;
    cf_strvec_split(&parts, path, "/", 0);
    struct strvec merged = STRVEC_INIT;
    for (size_t i = 0; i < parts.n; i++)
        cf_strvec_push(&merged, parts.v[i]);
    for (size_t i = 0; i < queue->n; i++)
        cf_strvec_push(&merged, queue->v[i]);
    cf_strvec_clear(&parts);
    cf_strvec_clear(queue);
    *queue = merged;
}

char *cf_path_in_root(const char *root, const char *path)
{
    enum { MAX_LINKS = 40 }; /* the kernel's MAXSYMLINKS */
    size_t rlen = strlen(root);
    while (rlen > 1 && root[rlen - 1] == '/')
        rlen--;
    struct strvec queue = STRVEC_INIT;
    queue_front(&queue, path);
    struct strbuf done = STRBUF_INIT; /* resolved so far, inside the root: "" or "/a/b" */
    size_t next = 0;
    int links = 0;
    char *out = NULL;
    while (next < queue.n) {
        const char *comp = queue.v[next++];
        if (!strcmp(comp, "."))
            continue;
        if (!strcmp(comp, "..")) {
            const char *slash = strrchr(cf_sb_str(&done), '/');
            cf_sb_setlen(&done, slash ? (size_t)(slash - done.buf) : 0); /* never above the root */
            continue;
        }
        size_t keep = done.len;
        cf_sb_addf(&done, "/%s", comp);
        char *host = cf_asprintf("%.*s%s", (int)rlen, root, cf_sb_str(&done));
        struct stat st;
        if (lstat(host, &st) != 0) {
            /* Missing (or unreadable): the rest is kept as written. */
            free(host);
            for (; next < queue.n; next++)
                cf_sb_addf(&done, "/%s", queue.v[next]);
            break;
        }
        if (!S_ISLNK(st.st_mode)) {
            free(host);
            continue;
        }
        char target[4096];
        ssize_t n = readlink(host, target, sizeof target - 1);
        free(host);
        if (n < 0 || ++links > MAX_LINKS)
            goto fail;
        target[n] = '\0';
        cf_sb_setlen(&done, target[0] == '/' ? 0 : keep);
        /* The unread components follow the link's target. */
        struct strvec rest = STRVEC_INIT;
        for (size_t i = next; i < queue.n; i++)
            cf_strvec_push(&rest, queue.v[i]);
        cf_strvec_clear(&queue);
        queue = rest;
        next = 0;
        queue_front(&queue, target);
    }
    out = cf_asprintf("%.*s%s", (int)rlen, root, done.len ? cf_sb_str(&done) : "/");
fail:
    cf_sb_release(&done);
    cf_strvec_clear(&queue);
    return out;
}
