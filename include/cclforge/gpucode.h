/* GPU code inventory without any vendor toolkit: the SASS, PTX and LTO-IR archs
 * in CUDA fatbins and the AMD targets in clang offload bundles, read from the
 * container headers only (payloads are never decompressed or copied).
 * Formats and findings: docs/gpucode.md. */
#ifndef CCLFORGE_GPUCODE_H
#define CCLFORGE_GPUCODE_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/arch.h"
#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_elf;

/* ---- CUDA fatbin containers (magic 0xBA55ED50) ---- */

#define CF_FATBIN_MAGIC 0xBA55ED50u

enum cf_fatbin_kind {
    CF_FATBIN_PTX = 1,   /* PTX text: JIT-compiled by the driver ("compute_XY") */
    CF_FATBIN_SASS = 2,  /* a cubin ELF: machine code ("sm_XY") */
    CF_FATBIN_LTOIR = 8, /* NVVM IR for link-time optimisation ("lto_XY") */
    CF_FATBIN_OTHER = 0  /* any other kind number; raw_kind says which */
};

/* Entry flag bits (fatbin entry header, offset 40). */
#define CF_FATBIN_FLAG_64BIT          0x1ull
#define CF_FATBIN_FLAG_DEBUG          0x2ull
#define CF_FATBIN_FLAG_LINUX          0x10ull
#define CF_FATBIN_FLAG_COMPRESSED_OLD 0x2000ull   /* CUDA 11.x-12.x compression */
#define CF_FATBIN_FLAG_COMPRESSED     0x8000ull   /* zstd, CUDA 12.8+ */
#define CF_FATBIN_FLAG_ARCH_SPECIFIC  0x100000ull /* sm_90a, compute_100a */
#define CF_FATBIN_FLAG_FAMILY         0x200000ull /* sm_100f, compute_120f */

struct cf_fatbin_entry {
    enum cf_fatbin_kind kind;
    unsigned raw_kind;          /* the kind number as stored */
    unsigned arch;              /* 75, 90, 120, ... */
    char variant;               /* 0, 'a' (arch-specific) or 'f' (family-specific) */
    int compressed;             /* payload compressed (either codec) */
    uint64_t flags;             /* raw flag bits */
    unsigned version_major;     /* PTX: ISA version (9.0 for CUDA 13); SASS: cubin format */
    unsigned version_minor;
    uint64_t container_offset;  /* offset of the container header in the scanned buffer */
    uint64_t header_offset;     /* offset of this entry header in the scanned buffer */
    uint64_t payload_offset;    /* offset of the payload in the scanned buffer */
    uint64_t payload_size;      /* bytes stored (padded to 8) */
    uint64_t uncompressed_size; /* 0 when not compressed */
};

/* Called once per entry; return nonzero to stop the walk early (not an error). */
typedef int (*cf_fatbin_visit_fn)(const struct cf_fatbin_entry *entry, void *ctx);

/* Walks fatbin containers laid back to back in buf[0..len) (a .nv_fatbin or
 * __nv_relfatbin section, or a whole .fatbin file). Zero padding between
 * containers is skipped. Reads only container and entry
 * headers; every offset is checked against len. `name` labels errors.
 * On success returns 0 and, if non-NULL, sets *n_containers. A truncated or
 * corrupt container gives -1 after the entries before it were visited. */
int cf_fatbin_walk(const uint8_t *buf, size_t len, const char *name, cf_fatbin_visit_fn visit,
                   void *ctx, size_t *n_containers, cf_error *err);

/* "sm_90a", "compute_120", "lto_90", or "kind7_90" for other kinds. */
void cf_fatbin_entry_name(const struct cf_fatbin_entry *entry, char *buf, size_t size);
/* The entry's arch and code form (an OTHER kind reads as SASS). */
void cf_fatbin_entry_arch(const struct cf_fatbin_entry *entry, struct cf_arch *out);

/* ---- clang offload bundles (AMD/HIP) ---- */

#define CF_BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define CF_CCOB_MAGIC "CCOB"

struct cf_bundle_entry {
    const char *id;         /* bundle entry ID, e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"
                             * (NUL-terminated copy, valid only during the callback) */
    const char *kind;       /* "hipv4", "hip", "host", "openmp", ... */
    const char *triple;     /* "amdgcn-amd-amdhsa-", "x86_64-unknown-linux-gnu-" */
    const char *target_id;  /* "gfx90a:xnack-", "" for host entries */
    uint64_t bundle_offset; /* offset of the bundle magic (plain or CCOB) in the scanned buffer */
    uint64_t code_offset;   /* offset of this entry's code object in the scanned buffer;
                             * for a compressed bundle, in the uncompressed bundle */
    uint64_t code_size;
    int compressed;         /* the entry comes from a compressed (CCOB) bundle */
};

/* A compressed ("CCOB") bundle's header. Its entries (and targets) are read by
 * decompressing the start of the payload only (zlib or zstd), at most
 * CF_CCOB_PREFIX_MAX bytes of output, and reported like plain ones. */
#define CF_CCOB_PREFIX_MAX (256u * 1024u)
struct cf_ccob_info {
    uint64_t bundle_offset;
    unsigned version;          /* 1, 2 or 3 */
    unsigned method;           /* 0 zlib, 1 zstd (llvm::compression::Format) */
    uint64_t total_size;       /* 0 when the version does not store it (v1) */
    uint64_t uncompressed_size;
    uint64_t hash;             /* truncated MD5 of the uncompressed bundle */
};

typedef int (*cf_bundle_visit_fn)(const struct cf_bundle_entry *entry, void *ctx);
typedef int (*cf_ccob_visit_fn)(const struct cf_ccob_info *info, void *ctx);

/* Walks the offload bundles (plain and compressed) in buf[0..len): a .hip_fatbin
 * section or a whole bundle file. Bundles are found back to back, skipping the
 * padding between them. visit_ccob may be NULL; visit is called for the
 * entries of compressed bundles too (after visit_ccob), unless it is NULL. Returns 0 (and the counts) or
 * -1 for a truncated or corrupt bundle, after visiting the ones before it. */
int cf_bundle_walk(const uint8_t *buf, size_t len, const char *name, cf_bundle_visit_fn visit,
                   cf_ccob_visit_fn visit_ccob, void *ctx, size_t *n_bundles,
                   size_t *n_compressed, cf_error *err);

/* "zlib", "zstd" or "unknown". */
const char *cf_ccob_method_name(unsigned method);

/* ---- per-file inventory ---- */

/* Unique lists are capped so memory stays bounded on hostile input. */
#define CF_GPUCODE_MAX_UNIQUE 256

struct cf_gpucode_inventory {
    struct cf_arch *sass;       /* unique, in cf_arch_cmp order: "sm_75", "sm_90a" */
    size_t n_sass;
    struct cf_arch *ptx;        /* "compute_120" */
    size_t n_ptx;
    struct cf_arch *ltoir;      /* "lto_90" */
    size_t n_ltoir;
    struct strvec amd_targets;  /* unique target IDs, sorted: "gfx90a:xnack-", "gfx942" */
    size_t fatbin_sections;     /* sections scanned for fatbins */
    size_t fatbin_containers;
    size_t fatbin_entries;
    size_t fatbin_compressed_entries;
    size_t bundle_sections;
    size_t bundles;             /* plain and compressed */
    size_t compressed_bundles;  /* their targets come from a decompressed prefix */
    int truncated_lists;        /* more than CF_GPUCODE_MAX_UNIQUE distinct values */
    uint64_t header_bytes_read; /* fatbin/bundle header bytes actually examined */
    uint64_t file_bytes_read;   /* bytes read from the file (4 KB windows around the
                                 * headers); 0 when the mapped bytes were used */
    char *problem;              /* NULL, or a corrupt section's message (the rest still counted) */
};

/* Scans the fatbin sections (.nv_fatbin, __nv_relfatbin) and offload-bundle
 * sections (.hip_fatbin) of an opened ELF file. A corrupt section does not
 * fail the call: what was read is kept and `problem` says what went wrong.
 * Returns -1 only when a section lies outside the file. */
int cf_gpucode_inventory(struct cf_elf *elf, struct cf_gpucode_inventory *inv, cf_error *err);
/* The same over a raw buffer holding fatbin containers or offload bundles
 * (a .fatbin / .hipfb file); used for standalone bundles that are not ELF. */
int cf_gpucode_inventory_buffer(const uint8_t *buf, size_t len, const char *name,
                                struct cf_gpucode_inventory *inv, cf_error *err);
void cf_gpucode_inventory_release(struct cf_gpucode_inventory *inv);

#ifdef __cplusplus
}
#endif
#endif
