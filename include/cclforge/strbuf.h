/* A growable string (after git's strbuf): no fixed buffers, no truncation. */
#ifndef CCLFORGE_STRBUF_H
#define CCLFORGE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct strbuf {
    char *buf;   /* always NUL-terminated; never NULL after any sb_ call */
    size_t len;
    size_t alloc;
};

#define STRBUF_INIT { 0, 0, 0 }

void cf_sb_grow(struct strbuf *sb, size_t extra);
void cf_sb_add(struct strbuf *sb, const void *data, size_t len);
void cf_sb_adds(struct strbuf *sb, const char *s);
void cf_sb_addc(struct strbuf *sb, char c);
void cf_sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cf_sb_addvf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void cf_sb_reset(struct strbuf *sb);
void cf_sb_setlen(struct strbuf *sb, size_t len);
/* Removes trailing whitespace. */
void cf_sb_rtrim(struct strbuf *sb);
/* Returns the buffer (caller frees) and leaves sb empty. Never NULL. */
char *cf_sb_detach(struct strbuf *sb);
void cf_sb_release(struct strbuf *sb);
/* The buffer, or "" when nothing was ever added. */
const char *cf_sb_str(const struct strbuf *sb);

/* Small string helpers. */
char *cf_strdup(const char *s);             /* aborts on OOM, NULL stays NULL */
char *cf_strndup(const char *s, size_t n);
char *cf_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *cf_vasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int cf_starts_with(const char *s, const char *prefix);
int cf_ends_with(const char *s, const char *suffix);
void *cf_xmalloc(size_t n);
void *cf_xcalloc(size_t n, size_t size);
void *cf_xrealloc(void *p, size_t n);

/* A growable array of owned strings. */
struct strvec {
    char **v;   /* NULL-terminated */
    size_t n;
    size_t alloc;
};
#define STRVEC_INIT { 0, 0, 0 }
void cf_strvec_push(struct strvec *sv, const char *s);
void cf_strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cf_strvec_push_nodup(struct strvec *sv, char *s);
/* Pushes each of a NULL-terminated list of words (an argv written as a literal). */
void cf_strvec_push_all(struct strvec *sv, const char *const *words);
/* Splits s on any of seps, skipping empty pieces unless keep_empty. */
void cf_strvec_split(struct strvec *sv, const char *s, const char *seps, int keep_empty);
int cf_strvec_contains(const struct strvec *sv, const char *s);
/* strcmp for qsort/bsearch over arrays of strings (char * or const char *). */
int cf_str_ptr_cmp(const void *a, const void *b);
void cf_strvec_clear(struct strvec *sv);
/* A NULL-terminated argv view (never NULL). */
char *const *cf_strvec_argv(struct strvec *sv);

#ifdef __cplusplus
}
#endif
#endif
