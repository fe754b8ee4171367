/* Dynamic string tokens in RPATH, RUNPATH, NEEDED and LD_LIBRARY_PATH entries:
 * $ORIGIN, $LIB and $PLATFORM, each also written ${NAME}, expanded as glibc's
 * loader does (elf/dl-load.c: is_dst, _dl_dst_substitute). */
#ifndef CCLFORGE_DST_H
#define CCLFORGE_DST_H

#ifdef __cplusplus
extern "C" {
#endif

/* Expands every token in one path entry (not a ':' list). A name is a token
 * only when whole: "$ORIGINAL" and "$LIBS" stay literal, as do unknown "$FOO".
 * origin_dir: the directory of the object the entry belongs to; lib: the
 * loader's $LIB ("lib64", "lib/x86_64-linux-gnu", ...); platform: its
 * $PLATFORM ("x86_64", "haswell", ...).
 * Returns a malloc'd string, or NULL when the entry uses a token whose value is
 * NULL (unknown): glibc then drops the whole entry from the search path. */
char *cf_dst_expand(const char *entry, const char *origin_dir, const char *lib, const char *platform);

/* 1 when s contains a token that cf_dst_expand would replace. */
int cf_dst_has_token(const char *s);

#ifdef __cplusplus
}
#endif
#endif
