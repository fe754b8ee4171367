/* Per-file GPU code inventory: sorted unique archs and targets from the
 * fatbin and offload-bundle sections, in memory bounded by the number of
 * distinct values (capped), never by the file size. */
#include "cclforge/gpucode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/elf.h"
#include "gpucode_walk.h"
#include "page_advice.h"

enum section_format { FORMAT_FATBIN, FORMAT_BUNDLE };

/* pread window for headers: one entry header, bundle table or ID at a time. */
enum { HEADER_WINDOW = 4096 };

/* Where toolchains put device code. .nvFatBinSegment only holds wrapper
 * structs whose pointers (relocated at load time) lead into these sections,
 * so scanning the sections sees every container without relocation. */
static const struct {
    const char *name;
    enum section_format format;
} gpu_sections[] = {
    { ".nv_fatbin", FORMAT_FATBIN },
    { "__nv_relfatbin", FORMAT_FATBIN },
    { ".hip_fatbin", FORMAT_BUNDLE },
};

/* Inserts keeping the list sorted and unique; 1 if the cap was hit. */
static int arch_insert(struct cf_arch **items, size_t *n, struct cf_arch a)
{
    size_t i = 0;
    while (i < *n && cf_arch_cmp(&(*items)[i], &a) < 0)
        i++;
    if (i < *n && cf_arch_cmp(&(*items)[i], &a) == 0)
        return 0;
    if (*n >= CF_GPUCODE_MAX_UNIQUE)
        return 1;
    *items = cf_xrealloc(*items, (*n + 1) * sizeof(**items));
    memmove(*items + i + 1, *items + i, (*n - i) * sizeof(**items));
    (*items)[i] = a;
    (*n)++;
    return 0;
}

/* What a walk adds to: the whole inventory and the current section's record. */
struct walk_ctx {
    struct cf_gpucode_inventory *inv;
    struct cf_gpucode_section *sec;
};

static int visit_fatbin_entry(const struct cf_fatbin_entry *e, void *ctxp)
{
    struct walk_ctx *ctx = ctxp;
    struct cf_gpucode_inventory *inv = ctx->inv;
    struct cf_gpucode_section *sec = ctx->sec;
    struct cf_arch a;
    cf_fatbin_entry_arch(e, &a);
    sec->entries++;
    inv->fatbin_entries++;
    inv->header_bytes_read += e->payload_offset - e->header_offset;
    if (e->header_offset == e->container_offset + 16)
        inv->header_bytes_read += 16;
    if (e->compressed)
        inv->fatbin_compressed_entries++;
    int capped = 0;
    switch (e->kind) {
    case CF_FATBIN_SASS:
        capped = arch_insert(&inv->sass, &inv->n_sass, a) | arch_insert(&sec->sass, &sec->n_sass, a);
        break;
    case CF_FATBIN_PTX:
        capped = arch_insert(&inv->ptx, &inv->n_ptx, a) | arch_insert(&sec->ptx, &sec->n_ptx, a);
        break;
    case CF_FATBIN_LTOIR:
        capped = arch_insert(&inv->ltoir, &inv->n_ltoir, a) | arch_insert(&sec->ltoir, &sec->n_ltoir, a);
        break;
    default:
        break;
    }
    inv->truncated_lists |= capped;
    return 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int visit_bundle_entry(const struct cf_bundle_entry *e, void *ctxp)
{
    struct walk_ctx *ctx = ctxp;
    struct cf_gpucode_inventory *inv = ctx->inv;
    ctx->sec->entries++;
    inv->header_bytes_read += 24 + strlen(e->id);
    if (!e->target_id[0] || cf_strvec_contains(&inv->amd_targets, e->target_id))
        return 0;
    if (inv->amd_targets.n >= CF_GPUCODE_MAX_UNIQUE) {
        inv->truncated_lists = 1;
        return 0;
    }
    cf_strvec_push(&inv->amd_targets, e->target_id);
    qsort(inv->amd_targets.v, inv->amd_targets.n, sizeof(char *), str_cmp);
    return 0;
}

static int visit_ccob(const struct cf_ccob_info *info, void *ctxp)
{
    struct cf_gpucode_inventory *inv = ((struct walk_ctx *)ctxp)->inv;
    inv->header_bytes_read += info->version == 1 ? 20 : info->version == 2 ? 24 : 32;
    return 0;
}

static void note_problem(struct cf_gpucode_inventory *inv, cf_error *section_err)
{
    if (!inv->problem)
        inv->problem = cf_strdup(cf_error_message(section_err));
    cf_error_clear(section_err);
}

/* The record for a section name (the last one when it repeats in a row). */
static struct cf_gpucode_section *section_record(struct cf_gpucode_inventory *inv, const char *name, int embedded)
{
    if (inv->n_sections && strcmp(inv->sections[inv->n_sections - 1].name, name) == 0 &&
        inv->sections[inv->n_sections - 1].embedded == embedded)
        return &inv->sections[inv->n_sections - 1];
    inv->sections = cf_xrealloc(inv->sections, (inv->n_sections + 1) * sizeof *inv->sections);
    struct cf_gpucode_section *sec = &inv->sections[inv->n_sections++];
    memset(sec, 0, sizeof *sec);
    snprintf(sec->name, sizeof sec->name, "%s", name);
    sec->embedded = embedded;
    return sec;
}

static void scan_source(struct cf_byte_source *src, const char *label, enum section_format format,
                        struct cf_gpucode_inventory *inv, struct cf_gpucode_section *sec)
{
    cf_error perr = CF_ERROR_INIT;
    struct walk_ctx ctx = { inv, sec };
    if (format == FORMAT_FATBIN) {
        size_t containers = 0;
        if (!sec->embedded)
            inv->fatbin_sections++;
        if (cf_fatbin_walk_source(src, label, visit_fatbin_entry, &ctx, &containers, &perr) < 0)
            note_problem(inv, &perr);
        inv->fatbin_containers += containers;
        sec->containers += containers;
        if (sec->embedded)
            inv->embedded_containers += containers;
    } else {
        size_t bundles = 0, compressed = 0;
        inv->bundle_sections++;
        if (cf_bundle_walk_source(src, label, visit_bundle_entry, visit_ccob, &ctx, &bundles,
                                  &compressed, &perr) < 0)
            note_problem(inv, &perr);
        inv->bundles += bundles;
        inv->compressed_bundles += compressed;
        sec->containers += bundles;
    }
}

int cf_gpucode_inventory(struct cf_elf *elf, struct cf_gpucode_inventory *inv, cf_error *err)
{
    memset(inv, 0, sizeof(*inv));
    int fd = -2;
    size_t n = cf_elf_section_count(elf);
    for (size_t i = 0; i < n; i++) {
        const struct cf_elf_section *s = cf_elf_section_at(elf, i);
        if (!s)
            continue;
        for (size_t g = 0; g < sizeof(gpu_sections) / sizeof(gpu_sections[0]); g++) {
            if (strcmp(s->name, gpu_sections[g].name) != 0)
                continue;
            const uint8_t *data;
            size_t len;
            if (cf_elf_section_bytes(elf, s, &data, &len, err) < 0) {
                cf_gpucode_inventory_release(inv);
                if (fd >= 0)
                    close(fd);
                return -1;
            }
            char *label = cf_asprintf("%s section %s", cf_elf_path(elf), s->name);
            struct cf_byte_source src;
            cf_src_init_section(&src, elf, s, data, len, HEADER_WINDOW, 1, &fd);
            /* Only headers are read, one every few kilobytes: no read-around. */
            cf_advise_pages(src.mem, src.mem ? len : 0, CF_PAGES_SCATTERED);
            scan_source(&src, label, gpu_sections[g].format, inv, section_record(inv, s->name, 0));
            cf_advise_pages(src.mem, src.mem ? len : 0, CF_PAGES_DEFAULT);
            inv->file_bytes_read += src.bytes_read;
            cf_src_release(&src);
            free(label);
        }
    }
    if (fd >= 0)
        close(fd);
    return 0;
}

int cf_gpucode_inventory_buffer(const uint8_t *buf, size_t len, const char *name,
                                struct cf_gpucode_inventory *inv, cf_error *err)
{
    memset(inv, 0, sizeof(*inv));
    static const char bundle_magic[] = CF_BUNDLE_MAGIC;
    const size_t mlen = sizeof(bundle_magic) - 1;
    int is_bundle = (len >= mlen && memcmp(buf, bundle_magic, mlen) == 0) ||
                    (len >= 4 && memcmp(buf, CF_CCOB_MAGIC, 4) == 0);
    int is_fatbin = len >= 4 && buf[0] == 0x50 && buf[1] == 0xED && buf[2] == 0x55 && buf[3] == 0xBA;
    if (!is_bundle && !is_fatbin)
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: neither a CUDA fatbin (magic 0xBA55ED50) nor a clang offload "
                            "bundle (__CLANG_OFFLOAD_BUNDLE__ or CCOB)",
                            name);
    struct cf_byte_source src;
    cf_src_init_memory(&src, buf, len);
    scan_source(&src, name, is_fatbin ? FORMAT_FATBIN : FORMAT_BUNDLE, inv,
                section_record(inv, is_fatbin ? "(fatbin file)" : "(offload bundle file)", 0));
    return 0;
}

int cf_gpucode_inventory_add_sites(struct cf_elf *elf, const struct cf_fatbin_sites *sites,
                                   struct cf_gpucode_inventory *inv, cf_error *err)
{
    int fd = -2;
    int rc = 0;
    int use_fd = -1; /* decided at the first site: the file matches the mapping (then pread only) */
    for (size_t k = 0; sites && k < sites->n && rc == 0; k++) {
        const struct cf_fatbin_site *site = &sites->v[k];
        const struct cf_elf_section *s = cf_elf_section_at(elf, site->section);
        const uint8_t *data;
        size_t len;
        if (!s || cf_elf_section_bytes(elf, s, &data, &len, err) < 0) {
            rc = -1;
            break;
        }
        if (site->offset > len || site->size > len - site->offset)
            continue; /* not from this file's scan */
        /* The container alone, as a section of its own. */
        struct cf_elf_section part = *s;
        part.offset += site->offset;
        part.size = site->size;
        char *label = cf_asprintf("%s section %s offset %#llx", cf_elf_path(elf), s->name,
                                  (unsigned long long)site->offset);
        struct cf_byte_source src;
        /* Deciding compares mapped bytes (a page fault and its read-around):
         * once per file, not for each of cuBLASLt's 383 containers. */
        if (use_fd == 1)
            cf_src_init_fd(&src, fd, part.offset, (size_t)part.size, HEADER_WINDOW);
        else if (use_fd == 0)
            cf_src_init_memory(&src, data + site->offset, (size_t)site->size);
        else {
            cf_src_init_section(&src, elf, &part, data + site->offset, (size_t)site->size, HEADER_WINDOW, 1, &fd);
            use_fd = src.mem == NULL;
        }
        scan_source(&src, label, FORMAT_FATBIN, inv, section_record(inv, s->name, 1));
        inv->file_bytes_read += src.bytes_read;
        cf_src_release(&src);
        free(label);
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

void cf_gpucode_inventory_release(struct cf_gpucode_inventory *inv)
{
    for (size_t i = 0; i < inv->n_sections; i++) {
        free(inv->sections[i].sass);
        free(inv->sections[i].ptx);
        free(inv->sections[i].ltoir);
    }
    free(inv->sections);
    free(inv->sass);
    free(inv->ptx);
    free(inv->ltoir);
    cf_strvec_clear(&inv->amd_targets);
    free(inv->problem);
    memset(inv, 0, sizeof(*inv));
}
