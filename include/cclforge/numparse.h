/* Numbers and version strings read out of text that comes from elsewhere
 * (survey files, --version banners, version headers): bounded, no overflow. */
#ifndef CCLFORGE_NUMPARSE_H
#define CCLFORGE_NUMPARSE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The leading decimal digits of s (after spaces), clamped to max; 0 when none.
 * No atoi overflow on hostile numbers. */
int cf_parse_small(const char *s, int max);
/* The dotted version number at s (after spaces), trailing dots dropped:
 * "13.0.88, ..." -> "13.0.88", "6.2.41133-dd7f" -> "6.2.41133"; NULL when none.
 * Caller frees. */
char *cf_version_at(const char *s);

#ifdef __cplusplus
}
#endif
#endif
