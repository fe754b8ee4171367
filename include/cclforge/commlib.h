/* Comm-library facts: the "NCCL version X.Y.Z[suffix]+cudaA.B" and
 * "RCCL version ..." banners NCCL and RCCL compile into their read-only data,
 * found by reading only the read-only data sections of an ELF file, and
 * whether an object is an NCCL/RCCL library or embeds a copy of one. */
#ifndef CCLFORGE_COMMLIB_H
#define CCLFORGE_COMMLIB_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/vendor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_elf;

struct cf_commlib_banner {
    enum cf_commlib lib;
    unsigned major, minor, patch;
    char suffix[32];          /* NCCL_SUFFIX, e.g. "" or "a0"; truncated if longer */
    char toolkit[8];          /* "cuda", "hip" or "" when the banner names none */
    unsigned toolkit_major, toolkit_minor;
    unsigned version_code;    /* nccl.h NCCL_VERSION(major, minor, patch), what
                               * ncclGetVersion returns and bootstrap compares */
    char text[128];           /* the banner as found (up to its NUL, truncated) */
    uint64_t offset;          /* where it was found: file offset for ELF scans */
};

/* nccl.h's NCCL_VERSION: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9. */
unsigned cf_nccl_version_code(unsigned major, unsigned minor, unsigned patch);
/* The inverse: "2.30.7" for 23007, "2.8.4" for 2804. Caller frees. */
char *cf_nccl_code_version(unsigned code);

/* Parses a banner at the start of s[0..len) ("NCCL version 2.28.9+cuda13.0",
 * "RCCL version 2.18.3+hip6.0", "RCCL version : 2.30.4-HEAD",
 * "NCCL version 2.28.9 compiled with CUDA 13.0"). Returns 0 on success, -1
 * when s is not a banner (e.g. "NCCL version mismatch"). Never reads past len. */
int cf_banner_parse(const char *s, size_t len, struct cf_commlib_banner *out);

/* Calls visit for every banner in buf[0..len); offsets are from buf plus `base`.
 * Return nonzero from visit to stop. Returns the number of banners visited. */
typedef int (*cf_banner_visit_fn)(const struct cf_commlib_banner *banner, void *ctx);
size_t cf_banner_scan(const uint8_t *buf, size_t len, uint64_t base, cf_banner_visit_fn visit,
                      void *ctx);

#define CF_COMMLIB_MAX_BANNERS 8

struct cf_commlib_identity {
    int found;                        /* at least one banner */
    struct cf_commlib_banner banner;  /* the first version found (in the form naming its toolkit) */
    struct cf_commlib_banner banners[CF_COMMLIB_MAX_BANNERS]; /* distinct versions, file order */
    size_t n_banners;
    int distinct_versions;            /* more than one version: several copies in one object */
    enum cf_commlib library;          /* the object IS libnccl.so* / librccl.so* (by soname,
                                       * or file name when it has none) */
    int embeds_copy;                  /* a banner inside an object that is not the library
                                       * itself (e.g. libtorch_cuda.so with static NCCL) */
    size_t sections_scanned;
    uint64_t bytes_scanned;           /* read-only data bytes examined */
    size_t fatbins_skipped;           /* CUDA fatbin containers found in read-only data and
                                       * skipped (GPU code holds no host strings) */
    uint64_t bytes_skipped;           /* their bytes: not examined */
};

/* Where the read-only data scan met a CUDA fatbin container: GPU code kept
 * outside the fatbin sections (cuBLASLt's, CUPTI's, cuSPARSE's .rodata). */
struct cf_fatbin_site {
    uint32_t section;  /* section index */
    uint64_t offset;   /* from the section's start */
    uint64_t size;     /* header and entries */
};
struct cf_fatbin_sites {
    struct cf_fatbin_site *v;
    size_t n, cap;
};
void cf_fatbin_sites_release(struct cf_fatbin_sites *sites);

/* cf_commlib_identify, also handing back every fatbin container the scan
 * skipped (sites may be NULL): one pass finds both. */
int cf_commlib_scan(struct cf_elf *elf, struct cf_commlib_identity *id, struct cf_fatbin_sites *sites, cf_error *err);

/* Finds the banners of an opened ELF file, reading only its allocated,
 * read-only, non-executable PROGBITS sections other than GPU code and unwind
 * tables (never the whole file), skipping the CUDA fatbin containers found
 * inside them. Returns 0 (found or not), -1 when a section
 * lies outside the file. */
int cf_commlib_identify(struct cf_elf *elf, struct cf_commlib_identity *id, cf_error *err);

/* Sets id->library from an object's soname (or file name when it has none) and
 * what follows from it (embeds_copy); cf_commlib_identify calls it, and a
 * caller reusing one file's scan under another name calls it again. */
void cf_commlib_identity_name(struct cf_commlib_identity *id, const char *soname_or_path);

/* enum cf_commlib, cf_commlib_from_name and cf_commlib_name (which library a
 * soname is, its display name) are in cclforge/vendor.h with the sonames. */

/* For the objects one process loads: the number of NCCL/RCCL copies (objects
 * that are the library or embed one). More than one is a conflict to warn
 * about: the copies do not share state and may differ in version. */
size_t cf_commlib_copies(const struct cf_commlib_identity *const *ids, size_t n);

#ifdef __cplusplus
}
#endif
#endif
