/* cclforge_abi_info read from a bridge's file (cclforge/bridge_facts.h): the
 * defined dynamic symbol's bytes, found through the section holding its
 * address, decoded in the file's byte order. Any ELF may claim the name, so
 * the size, the section and the magic are checked before a byte is used. */
#include <elf.h>
#include <string.h>

#include "cclforge/bridge_facts.h"

static int64_t rd64(const uint8_t *p, int be)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[be ? 7 - i : i] << (8 * i);
    return (int64_t)v;
}

static int32_t rd32(const uint8_t *p, int be)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[be ? 3 - i : i] << (8 * i);
    return (int32_t)v;
}

/* A fixed char field into a NUL-terminated, printable string. */
static void text(char *to, size_t cap, const uint8_t *from, size_t len)
{
    size_t n = 0;
    while (n < len && n + 1 < cap && from[n]) {
        to[n] = from[n] >= 0x20 && from[n] < 0x7f ? (char)from[n] : '?';
        n++;
    }
    to[n] = 0;
}

int cf_bridge_facts_read(struct cf_elf *elf, struct cf_bridge_facts *f, const char **why, cf_error *err)
{
    memset(f, 0, sizeof *f);
    *why = CF_BRIDGE_FACTS_ABSENT;
    const struct cf_elf_symbol *syms;
    size_t n;
    if (cf_elf_dynsyms(elf, &syms, &n, err) < 0)
        return -1;
    const struct cf_elf_symbol *s = NULL;
    for (size_t i = 0; i < n && !s; i++)
        if (syms[i].defined && syms[i].name && !strcmp(syms[i].name, CF_BRIDGE_FACTS_SYMBOL))
            s = &syms[i];
    if (!s)
        return 0;
    if (s->size != CF_BRIDGE_FACTS_SIZE) {
        *why = "cclforge_abi_info has another size: a format this cclforge does not read";
        return 0;
    }
    const uint8_t *b = NULL;
    for (size_t i = 0; i < cf_elf_section_count(elf) && !b; i++) {
        const struct cf_elf_section *sec = cf_elf_section_at(elf, i);
        if (sec->type == SHT_NOBITS || !(sec->flags & SHF_ALLOC) || s->value < sec->addr ||
            s->value - sec->addr > sec->size || sec->size - (s->value - sec->addr) < CF_BRIDGE_FACTS_SIZE)
            continue;
        const uint8_t *data;
        size_t len;
        cf_error serr = CF_ERROR_INIT;
        if (cf_elf_section_bytes(elf, sec, &data, &len, &serr) == 0 && s->value - sec->addr <= len &&
            len - (s->value - sec->addr) >= CF_BRIDGE_FACTS_SIZE)
            b = data + (s->value - sec->addr);
        cf_error_clear(&serr);
    }
    if (!b) {
        *why = "cclforge_abi_info lies in no section of the file";
        return 0;
    }
    if (memcmp(b, CF_BRIDGE_FACTS_MAGIC, sizeof CF_BRIDGE_FACTS_MAGIC)) {
        *why = "cclforge_abi_info has another magic: a format this cclforge does not read";
        return 0;
    }
    int be = cf_elf_get_header(elf)->big_endian;
    f->options_size_headers = rd64(b + 16, be);
    f->options_size_libtorch = rd64(b + 24, be);
    f->process_group_size_headers = rd64(b + 32, be);
    f->process_group_size_libtorch = rd64(b + 40, be);
    f->nccl_header_code = rd32(b + 48, be);
    text(f->nccl_libtorch, sizeof f->nccl_libtorch, b + 56, 16);
    text(f->torch_gpu_lib, sizeof f->torch_gpu_lib, b + 72, 64);
    text(f->comm_lib, sizeof f->comm_lib, b + 136, 64);
    text(f->vendor, sizeof f->vendor, b + 200, 16);
    text(f->toolkit_version, sizeof f->toolkit_version, b + 216, 32);
    text(f->toolkit_libs, sizeof f->toolkit_libs, b + 248, 256);
    f->found = 1;
    *why = NULL;
    return 0;
}

int cf_bridge_facts_read_file(const char *path, struct cf_bridge_facts *f, const char **why, cf_error *err)
{
    struct cf_elf *elf;
    memset(f, 0, sizeof *f);
    if (cf_elf_open(path, &elf, err) < 0)
        return -1;
    int rc = cf_bridge_facts_read(elf, f, why, err);
    cf_elf_close(elf);
    return rc;
}
