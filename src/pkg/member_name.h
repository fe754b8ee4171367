/* A wheel member's name, in one place for `wheel verify` and `wheel graft`:
 * whether it is safe to unpack, its lexical normal form (the path the kernel
 * opens once pip joins it to site-packages: "./a//b/." is "a/b"), and the key
 * two names share when a file system makes them one file (case-insensitive,
 * or normalising Unicode: macOS, Windows). Names come from the archive's
 * author: every function reads exactly len bytes and is linear in them.
 * Internal to src/pkg.
 *
 * The fold key is exact for what docs/security.md claims: two names have the
 * same key if and only if CPython's unicodedata.normalize("NFD", n).lower()
 * of them are equal, for names made of ASCII, U+0080..U+017F (Latin-1
 * Supplement, Latin Extended-A) and the combining marks U+0300..U+036F, as
 * long as no two combining marks of different classes stand in an order NFD
 * would change. Outside that range a pair may be missed; no pair is ever
 * flagged that is not equal under NFD and lower-casing. */
#ifndef CCLFORGE_PKG_MEMBER_NAME_H
#define CCLFORGE_PKG_MEMBER_NAME_H

#include <stddef.h>

#include "cclforge/strbuf.h"
#include "pkg/name_index.h"

#define CF_MEMBER_NAME_MAX 4096 /* PATH_MAX: pip could not create a longer path */

/* Why name[0..len) is unsafe to unpack (zip slip, absolute, ...), NULL when
 * it is not. NUL bytes are the zip reader's to report. */
const char *cf_member_name_problem(const char *name, size_t len);
/* 1 when name is safe and already in normal form (no empty or "."
 * component, no trailing '/'): what cclforge itself writes. */
int cf_member_name_ok(const char *name);
/* The offset of the first control character in s[0..len) (C0, DEL, or
 * U+0080..U+009F in UTF-8), -1 when none. */
long cf_member_name_control(const char *s, size_t len);
/* 1 when name[0..len) is its own normal form (no empty or "." component, no
 * trailing '/'). */
int cf_member_name_is_normal(const char *name, size_t len);
/* Appends the lexical normal form of a safe name: empty and "." components
 * dropped. */
void cf_member_name_normalize(const char *name, size_t len, struct strbuf *out);
/* Appends the fold key: each code point as unicodedata.normalize("NFD",
 * c).lower() for ASCII and the range above, other bytes as they are. */
void cf_member_name_fold(const char *name, size_t len, struct strbuf *out);

/* 1 when name is its own fold key: no ASCII capital, nothing the table folds. */
int cf_member_name_folds_to_itself(const char *name, size_t len);

/* The generated table (member_name_fold_data.c): U+0080..U+017F, U+0340..U+0344. */
extern const char cf_member_fold_latin[0x100][5];
extern const char cf_member_fold_marks[5][5];

/* Names that become one file, found in one pass: a hash index over the fold
 * keys of the normal forms. */
struct cf_member_set {
    struct cf_name_index ix;
    struct strvec keys; /* the index's keys */
};
#define CF_MEMBER_SET_INIT { CF_NAME_INDEX_INIT, STRVEC_INIT }
/* Adds name as number value: -1 when no earlier name is the same file, else
 * that one's value. */
long cf_member_set_add(struct cf_member_set *s, const char *name, size_t len, size_t value);
/* The value of the first name whose fold key is key (a key as the set makes
 * them: normal, folded), -1 when none. */
long cf_member_set_first(struct cf_member_set *s, const char *key, size_t len);
void cf_member_set_release(struct cf_member_set *s);

/* Appends why two names the set matched are one file, naming both as shown
 * ("'a' and 'b' ..."); a and b are the paths the set was given, where is what
 * an alias of one path installs to. */
void cf_member_alias_describe(struct strbuf *out, const char *a_shown, const char *a, const char *b_shown,
                              const char *b, const char *where);

#endif
