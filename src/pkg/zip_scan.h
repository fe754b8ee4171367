/* The structure of a zip archive read straight from its bytes (end record,
 * ZIP64 records, central directory, every local header), before anything is
 * decompressed: each member's name, sizes and attributes, and every
 * structural fault named with its member (duplicate names, a local header
 * that disagrees with the central directory, data that overlaps another
 * member's or runs past the directory, sizes past the cap). libzip only says
 * "Zip archive inconsistent" or "File already exists" for these; a wheel's
 * user needs to know which member and what is wrong with it.
 *
 * Reads go through a callback, so the same code serves a file (pread) and the
 * fuzz target (a buffer). Memory: the member table, and one window of at most
 * 256 KiB for the headers. Internal to src/pkg. */
#ifndef CCLFORGE_PKG_ZIP_SCAN_H
#define CCLFORGE_PKG_ZIP_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

/* Reads n bytes at off into buf; returns 0, or -1 when they cannot all be read. */
typedef int (*cf_zip_read_fn)(void *ctx, uint64_t off, void *buf, size_t n);

struct cf_zip_entry {
    char *name;            /* the raw name bytes, NUL-terminated */
    size_t name_len;       /* may exceed strlen(name) when the name holds a NUL */
    uint16_t flags, method;
    uint32_t crc;
    uint64_t csize, usize; /* compressed, uncompressed (as the central directory says) */
    uint64_t local_offset; /* the local header */
    uint64_t data_offset;  /* the first byte of the member's data */
    uint8_t made_by_os;    /* 3 = Unix: external_attr >> 16 is the mode */
    uint32_t external_attr;
    int is_dir;            /* the name ends in '/' */
    int is_symlink;        /* Unix mode S_IFLNK: the data is the link's target */
};

struct cf_zip_limits {
    size_t max_entries;    /* more is an error: the table itself would be too large */
    uint64_t max_total;    /* the uncompressed total allowed; past it is a fault */
    size_t max_faults;     /* faults kept word for word; the rest are counted */
};

struct cf_zip_scan {
    struct cf_zip_entry *entries; /* central directory order (libzip's indices) */
    size_t n;
    uint64_t total_usize;  /* saturating sum of the declared uncompressed sizes */
    int over_cap;          /* total_usize > max_total */
    struct strvec faults;  /* one sentence each, naming the member */
    size_t n_faults;       /* all of them, including those not kept */
};

/* Reads the archive's structure. Returns 0 when the central directory could
 * be read (faults, if any, are in out->faults), -1 when it could not (no end
 * record, a directory outside the file, too many members), with err saying so. */
int cf_zip_scan(cf_zip_read_fn read, void *ctx, uint64_t file_size, const struct cf_zip_limits *lim,
                struct cf_zip_scan *out, cf_error *err);
void cf_zip_scan_release(struct cf_zip_scan *scan);

/* Appends a member name for a message: control bytes and bytes that are not
 * UTF-8 as \xNN (the name comes from the archive's author: a terminal escape,
 * or a JSON document that no longer parses), cut past 240 bytes. */
void cf_zip_name_display(struct strbuf *out, const char *name, size_t len);

#endif
