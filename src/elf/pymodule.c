/* Extension-module names and the strings a module's data holds
 * (cclforge/pymodule.h). */
#include <elf.h>
#include <string.h>

#include "cclforge/pymodule.h"

static int ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

/* The tag between the leaf and ".so": "abi3", or CPython's SOABI with an
 * optional platform triplet ("cpython-311-x86_64-linux-gnu", "cpython-311d"). */
static int known_tag(const char *tag, size_t len)
{
    if (len == 4 && !memcmp(tag, "abi3", 4))
        return 1;
    static const char cp[] = "cpython-";
    if (len <= sizeof cp - 1 || memcmp(tag, cp, sizeof cp - 1))
        return 0;
    size_t i = sizeof cp - 1, digits = 0;
    while (i < len && tag[i] >= '0' && tag[i] <= '9') {
        i++;
        digits++;
    }
    if (digits < 2)
        return 0;
    for (; i < len; i++) /* ABI flags and the platform triplet */
        if (!ident_char(tag[i]) && tag[i] != '-')
            return 0;
    return 1;
}

int cf_pymodule_leaf(const char *base, char *leaf, size_t cap)
{
    size_t n = strlen(base), i = 0;
    if (n < 4 || memcmp(base + n - 3, ".so", 3) || !ident_start(base[0]))
        return 0;
    while (ident_char(base[i]))
        i++;
    if (base[i] != '.' || i + 1 > cap)
        return 0;
    if (i != n - 3 && !known_tag(base + i + 1, n - 3 - (i + 1))) /* "<leaf>.so" or "<leaf>.<tag>.so" */
        return 0;
    memcpy(leaf, base, i);
    leaf[i] = '\0';
    return i == n - 3 ? CF_PYMODULE_PLAIN : CF_PYMODULE_TAGGED;
}

static int holds(const uint8_t *d, size_t len, const char *s, size_t slen)
{
    return len > slen && memmem(d, len, s, slen + 1) != NULL; /* with its NUL */
}

int cf_elf_holds_string(const struct cf_elf *elf, const char *s, cf_error *err)
{
    size_t slen = strlen(s), n = cf_elf_section_count(elf);
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cf_elf_section *sec = cf_elf_section_at(elf, i);
        if (sec->type != SHT_PROGBITS || !(sec->flags & SHF_ALLOC) || (sec->flags & (SHF_EXECINSTR | SHF_WRITE)))
            continue;
        any = 1;
        const uint8_t *d;
        size_t len;
        if (cf_elf_section_bytes(elf, sec, &d, &len, err) < 0)
            return -1;
        if (holds(d, len, s, slen))
            return 1;
    }
    if (any)
        return 0;
    /* no section headers (stripped with sstrip): the read-only segments */
    for (size_t i = 0; i < cf_elf_segment_count(elf); i++) {
        const struct cf_elf_segment *seg = cf_elf_segment_at(elf, i);
        if (seg->type != PT_LOAD || (seg->flags & (PF_X | PF_W)))
            continue;
        struct cf_elf_section as = { .name = "(read-only segment)", .type = SHT_PROGBITS, .offset = seg->offset, .size = seg->filesz };
        const uint8_t *d;
        size_t len;
        if (cf_elf_section_bytes(elf, &as, &d, &len, err) < 0)
            return -1;
        if (holds(d, len, s, slen))
            return 1;
    }
    return 0;
}
