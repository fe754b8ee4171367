/* The safe unpickler (cclforge/pickle.h): one pass over the opcodes, a
 * whitelist of the ones that build data, every other refused with its byte
 * offset. Pickle is a stack machine: values are pushed, MARK fences off a
 * run of them, and APPENDS/SETITEMS/TUPLE gather the run into the container
 * below the fence; the memo stores values by index so that BINGET pushes the
 * same value again (shared, never copied). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "hang/pv_doc.h"

enum op_class { OP_READ, OP_CALLS_CODE, OP_NOT_READ };

struct op_info {
    uint8_t byte;
    const char *name;
    enum op_class cls;
};

/* Every opcode of Python's pickle (Lib/pickletools.py), by what we do with it. */
static const struct op_info op_table[] = {
    { 0x80, "PROTO", OP_READ },           { 0x95, "FRAME", OP_READ },
    { '}', "EMPTY_DICT", OP_READ },       { ']', "EMPTY_LIST", OP_READ },
    { ')', "EMPTY_TUPLE", OP_READ },      { '(', "MARK", OP_READ },
    { 's', "SETITEM", OP_READ },          { 'u', "SETITEMS", OP_READ },
    { 'a', "APPEND", OP_READ },           { 'e', "APPENDS", OP_READ },
    { 't', "TUPLE", OP_READ },            { 0x85, "TUPLE1", OP_READ },
    { 0x86, "TUPLE2", OP_READ },          { 0x87, "TUPLE3", OP_READ },
    { 'X', "BINUNICODE", OP_READ },       { 0x8c, "SHORT_BINUNICODE", OP_READ },
    { 0x8d, "BINUNICODE8", OP_READ },     { 'B', "BINBYTES", OP_READ },
    { 'C', "SHORT_BINBYTES", OP_READ },   { 0x8e, "BINBYTES8", OP_READ },
    { 'J', "BININT", OP_READ },           { 'K', "BININT1", OP_READ },
    { 'M', "BININT2", OP_READ },          { 0x8a, "LONG1", OP_READ },
    { 'G', "BINFLOAT", OP_READ },         { 0x88, "NEWTRUE", OP_READ },
    { 0x89, "NEWFALSE", OP_READ },        { 'N', "NONE", OP_READ },
    { 'q', "BINPUT", OP_READ },           { 'r', "LONG_BINPUT", OP_READ },
    { 0x94, "MEMOIZE", OP_READ },         { 'h', "BINGET", OP_READ },
    { 'j', "LONG_BINGET", OP_READ },      { '.', "STOP", OP_READ },
    { 'c', "GLOBAL", OP_CALLS_CODE },     { 0x93, "STACK_GLOBAL", OP_CALLS_CODE },
    { 'R', "REDUCE", OP_CALLS_CODE },     { 'b', "BUILD", OP_CALLS_CODE },
    { 0x81, "NEWOBJ", OP_CALLS_CODE },    { 0x92, "NEWOBJ_EX", OP_CALLS_CODE },
    { 'i', "INST", OP_CALLS_CODE },       { 'o', "OBJ", OP_CALLS_CODE },
    { 'P', "PERSID", OP_CALLS_CODE },     { 'Q', "BINPERSID", OP_CALLS_CODE },
    { 0x82, "EXT1", OP_CALLS_CODE },      { 0x83, "EXT2", OP_CALLS_CODE },
    { 0x84, "EXT4", OP_CALLS_CODE },      { '0', "POP", OP_NOT_READ },
    { '1', "POP_MARK", OP_NOT_READ },     { '2', "DUP", OP_NOT_READ },
    { 'F', "FLOAT", OP_NOT_READ },        { 'I', "INT", OP_NOT_READ },
    { 'L', "LONG", OP_NOT_READ },         { 0x8b, "LONG4", OP_NOT_READ },
    { 'S', "STRING", OP_NOT_READ },       { 'T', "BINSTRING", OP_NOT_READ },
    { 'U', "SHORT_BINSTRING", OP_NOT_READ }, { 'V', "UNICODE", OP_NOT_READ },
    { 'd', "DICT", OP_NOT_READ },         { 'l', "LIST", OP_NOT_READ },
    { 'g', "GET", OP_NOT_READ },          { 'p', "PUT", OP_NOT_READ },
    { 0x8f, "EMPTY_SET", OP_NOT_READ },   { 0x90, "ADDITEMS", OP_NOT_READ },
    { 0x91, "FROZENSET", OP_NOT_READ },   { 0x96, "BYTEARRAY8", OP_NOT_READ },
    { 0x97, "NEXT_BUFFER", OP_NOT_READ }, { 0x98, "READONLY_BUFFER", OP_NOT_READ },
};

static const struct op_info *op_find(uint8_t byte)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (op_table[i].byte == byte)
            return &op_table[i];
    return NULL;
}

struct memo_slot {
    uint32_t index_plus_one; /* 0: empty */
    struct cf_pv *v;
};

struct unpickler {
    const uint8_t *in;
    size_t len, pos;
    size_t op_at; /* the current opcode's offset, for messages */
    struct cf_pickle_limits lim;
    struct cf_pvdoc *doc;
    cf_error *err;

    struct cf_pv **stack;
    size_t sn, scap;
    size_t *marks; /* stack heights at each open MARK */
    size_t mn, mcap;
    size_t items;

    /* The memo: dense by index as picklers number it (0, 1, 2, ...); an
     * index far past what has been stored goes to a small hash table, so a
     * LONG_BINPUT of 4 billion costs one slot, not 32 GB. */
    struct cf_pv **memo;
    size_t memo_cap, memo_count;
    struct memo_slot *sparse;
    size_t sparse_n, sparse_cap;

    struct cf_pv **dicts; /* every dict, made one per key after STOP */
    size_t dn, dcap;
    uint32_t *dedup;
    size_t dedup_cap;

    struct cf_pv *none, *yes, *no, *empty_tuple, *small_int[256];
};

static int fail(struct unpickler *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct unpickler *u, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *why = cf_vasprintf(fmt, ap);
    va_end(ap);
    uint8_t byte = u->in[u->op_at];
    const struct op_info *op = op_find(byte);
    cf_error_set(u->err, CF_ERR_FORMAT, "pickle byte %zu, %s (0x%02x): %s", u->op_at, op ? op->name : "opcode",
                 byte, why);
    free(why);
    return -1;
}

static int fail_memory(struct unpickler *u)
{
    return fail(u, "over the memory limit of %zu bytes", u->lim.max_memory);
}

static int grow(struct unpickler *u, void **arr, size_t *cap, size_t need, size_t elem)
{
    return cf_pvdoc_grow(u->doc, arr, cap, need, elem) != 0 ? fail_memory(u) : 0;
}

static int push(struct unpickler *u, struct cf_pv *v)
{
    if (!v)
        return fail_memory(u);
    if (++u->items > u->lim.max_items)
        return fail(u, "more than %zu values", u->lim.max_items);
    if (u->sn == u->scap && grow(u, (void **)&u->stack, &u->scap, u->sn + 1, sizeof *u->stack) != 0)
        return -1;
    u->stack[u->sn++] = v;
    return 0;
}

static size_t fence(const struct unpickler *u)
{
    return u->mn ? u->marks[u->mn - 1] : 0;
}

/* n values above the innermost MARK, or an error. */
static int need_values(struct unpickler *u, size_t n)
{
    if (u->sn - fence(u) < n)
        return fail(u, "needs %zu value%s on the stack above the last MARK, finds %zu", n, n == 1 ? "" : "s",
                    u->sn - fence(u));
    return 0;
}

/* Closes the innermost MARK: *base is where its run of values starts. */
static int pop_mark(struct unpickler *u, size_t *base)
{
    if (!u->mn)
        return fail(u, "no MARK is open");
    *base = u->marks[--u->mn];
    return 0;
}

static int grown(struct unpickler *u, enum cf_pv_grow g)
{
    if (g == CF_PV_TOO_DEEP)
        return fail(u, "values nested deeper than %zu", u->lim.max_depth);
    return g == CF_PV_NO_MEMORY ? fail_memory(u) : 0;
}

/* Bytes an opcode's argument takes, or an error naming what runs short. */
static int take(struct unpickler *u, size_t n, const char *what, const uint8_t **at)
{
    if (u->len - u->pos < n)
        return fail(u, "%s of %zu byte%s runs past the end (%zu left)", what, n, n == 1 ? "" : "s", u->len - u->pos);
    *at = u->in + u->pos;
    u->pos += n;
    return 0;
}

static uint64_t le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* ---- the memo ---- */

static struct memo_slot *sparse_find(struct unpickler *u, uint32_t index)
{
    if (!u->sparse_cap)
        return NULL;
    size_t at = (index * 0x9e3779b1u) & (u->sparse_cap - 1);
    while (u->sparse[at].index_plus_one && u->sparse[at].index_plus_one != index + 1)
        at = (at + 1) & (u->sparse_cap - 1);
    return &u->sparse[at];
}

static int sparse_put(struct unpickler *u, uint32_t index, struct cf_pv *v)
{
    if (2 * (u->sparse_n + 1) > u->sparse_cap) {
        struct memo_slot *old = u->sparse;
        size_t old_cap = u->sparse_cap, cap = old_cap ? old_cap * 2 : 64;
        if (cf_pvdoc_charge(u->doc, cap * sizeof *old) != 0 || !(u->sparse = calloc(cap, sizeof *old))) {
            u->sparse = old;
            return fail_memory(u);
        }
        u->sparse_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].index_plus_one)
                *sparse_find(u, old[i].index_plus_one - 1) = old[i];
        free(old);
    }
    struct memo_slot *s = sparse_find(u, index);
    if (!s->index_plus_one) {
        s->index_plus_one = index + 1;
        u->sparse_n++;
        u->memo_count++;
    }
    s->v = v;
    return 0;
}

static struct cf_pv *memo_get(struct unpickler *u, uint64_t index)
{
    if (index < u->memo_cap && u->memo[index])
        return u->memo[index];
    struct memo_slot *s = index < UINT32_MAX ? sparse_find(u, (uint32_t)index) : NULL;
    return s && s->index_plus_one ? s->v : NULL;
}

static int memo_put(struct unpickler *u, uint64_t index)
{
    if (need_values(u, 1) != 0)
        return -1;
    struct cf_pv *top = u->stack[u->sn - 1];
    if (index >= UINT32_MAX)
        return fail(u, "memo index %llu is past what a pickle can number", (unsigned long long)index);
    if (index >= u->memo_cap && index <= 2 * u->memo_count + 1024 &&
        grow(u, (void **)&u->memo, &u->memo_cap, index + 1, sizeof *u->memo) != 0)
        return -1;
    if (index >= u->memo_cap)
        return sparse_put(u, (uint32_t)index, top);
    if (!u->memo[index] && !(u->sparse_n && sparse_find(u, (uint32_t)index)->index_plus_one))
        u->memo_count++;
    u->memo[index] = top;
    return 0;
}

static int push_memo(struct unpickler *u, uint64_t index)
{
    struct cf_pv *v = memo_get(u, index);
    if (!v)
        return fail(u, "memo index %llu was never stored", (unsigned long long)index);
    return push(u, v);
}

/* ---- values ---- */

static struct cf_pv *singleton(struct unpickler *u, struct cf_pv **slot, enum cf_pv_kind kind, int b)
{
    if (!*slot && (*slot = cf_pv_new(u->doc, kind)) != NULL)
        (*slot)->u.b = b;
    return *slot;
}

static int push_int(struct unpickler *u, int64_t i)
{
    if (i >= 0 && i < 256) {
        struct cf_pv **slot = &u->small_int[i];
        if (!*slot && (*slot = cf_pv_new(u->doc, CF_PV_INT)) != NULL)
            (*slot)->u.i = i;
        return push(u, *slot);
    }
    struct cf_pv *v = cf_pv_new(u->doc, CF_PV_INT);
    if (v)
        v->u.i = i;
    return push(u, v);
}

/* LONG1: n bytes of two's complement, little-endian; read when it fits 64 bits. */
static int push_long1(struct unpickler *u)
{
    const uint8_t *p = NULL, *n = NULL;
    if (take(u, 1, "the length", &n) != 0 || take(u, *n, "the number", &p) != 0)
        return -1;
    if (*n == 0)
        return push_int(u, 0);
    size_t low = *n < 8 ? *n : 8;
    uint64_t v = le(p, low);
    int negative = (p[*n - 1] & 0x80) != 0;
    if (low < 8 && negative)
        v |= ~(uint64_t)0 << (8 * low);
    /* bytes past the eighth must only repeat the sign */
    for (size_t i = 8; i < *n; i++)
        if (p[i] != (negative ? 0xff : 0x00))
            return fail(u, "a %u-byte integer beyond 64 bits is not read", (unsigned)*n);
    if (*n > 8 && ((v >> 63) != 0) != negative)
        return fail(u, "a %u-byte integer beyond 64 bits is not read", (unsigned)*n);
    return push_int(u, (int64_t)v);
}

static int push_text(struct unpickler *u, enum cf_pv_kind kind, size_t len_bytes)
{
    const uint8_t *lp = NULL, *s = NULL;
    if (take(u, len_bytes, "the length", &lp) != 0)
        return -1;
    uint64_t len = le(lp, len_bytes);
    if (len > u->len - u->pos)
        return fail(u, "a %s of %llu bytes runs past the end (%zu left)", kind == CF_PV_STR ? "string" : "bytes",
                    (unsigned long long)len, u->len - u->pos);
    if (take(u, (size_t)len, "the text", &s) != 0)
        return -1;
    size_t bad = kind == CF_PV_STR ? cf_pv_utf8_invalid_at((const char *)s, (size_t)len) : (size_t)len;
    if (bad < len)
        return fail(u, "the string's byte %zu (at byte %zu) is not UTF-8", bad, (size_t)(s - u->in) + bad);
    return push(u, cf_pv_new_text(u->doc, kind, s, (size_t)len));
}

static int push_float(struct unpickler *u)
{
    const uint8_t *p = NULL;
    if (take(u, 8, "the float", &p) != 0)
        return -1;
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++) /* big-endian */
        bits = bits << 8 | p[i];
    struct cf_pv *v = cf_pv_new(u->doc, CF_PV_FLOAT);
    if (v)
        memcpy(&v->u.f, &bits, sizeof v->u.f);
    return push(u, v);
}

/* ---- containers ---- */

static int make_tuple(struct unpickler *u, size_t base)
{
    size_t n = u->sn - base;
    struct cf_pv *t;
    if (n == 0) {
        enum cf_pv_grow g = u->empty_tuple ? CF_PV_GROWN
                                           : cf_pv_seq_make(u->doc, CF_PV_TUPLE, NULL, 0, u->lim.max_depth,
                                                            &u->empty_tuple);
        if (grown(u, g) != 0)
            return -1;
        t = u->empty_tuple;
    } else if (grown(u, cf_pv_seq_make(u->doc, CF_PV_TUPLE, u->stack + base, n, u->lim.max_depth, &t)) != 0) {
        return -1;
    }
    u->sn = base;
    return push(u, t);
}

static int tuple_n(struct unpickler *u, size_t n)
{
    if (need_values(u, n) != 0)
        return -1;
    return make_tuple(u, u->sn - n);
}

/* The container below a run of values that starts at base. */
static struct cf_pv *holder(struct unpickler *u, size_t base, enum cf_pv_kind kind, const char *what)
{
    if (base <= fence(u)) {
        fail(u, "no %s below the values", what);
        return NULL;
    }
    struct cf_pv *c = u->stack[base - 1];
    if (c->kind != kind) {
        fail(u, "the value below is not a %s", what);
        return NULL;
    }
    return c;
}

static int append_run(struct unpickler *u, size_t base)
{
    struct cf_pv *list = holder(u, base, CF_PV_LIST, "list");
    if (!list ||
        grown(u, cf_pv_list_extend(u->doc, list, u->stack + base, u->sn - base, u->lim.max_depth)) != 0)
        return -1;
    u->sn = base;
    return 0;
}

static int setitem_run(struct unpickler *u, size_t base)
{
    size_t n = u->sn - base;
    if (n % 2)
        return fail(u, "an odd number of values (%zu) for keys and values", n);
    struct cf_pv *dict = holder(u, base, CF_PV_DICT, "dict");
    if (!dict)
        return -1;
    for (size_t i = base; i < u->sn; i += 2)
        if (!cf_pv_hashable(u->stack[i]))
            return fail(u, "a %s as a dict key", u->stack[i]->kind == CF_PV_LIST ? "list" : "dict");
    if (grown(u, cf_pv_dict_extend(u->doc, dict, u->stack + base, n / 2, u->lim.max_depth)) != 0)
        return -1;
    u->sn = base;
    return 0;
}

static int push_dict(struct unpickler *u)
{
    struct cf_pv *d = cf_pv_new(u->doc, CF_PV_DICT);
    if (!d || (u->dn == u->dcap && grow(u, (void **)&u->dicts, &u->dcap, u->dn + 1, sizeof *u->dicts) != 0))
        return d ? -1 : fail_memory(u);
    u->dicts[u->dn++] = d;
    return push(u, d);
}

static int refuse(struct unpickler *u)
{
    const struct op_info *op = op_find(u->in[u->op_at]);
    if (!op)
        return fail(u, "unknown opcode");
    if (op->cls == OP_CALLS_CODE)
        return fail(u, "refused: it imports or calls code, and only data is read");
    return fail(u, "not read: only the opcodes of plain data (dicts, lists, tuples, strings, numbers) are");
}

/* One opcode at u->pos; 1 after STOP. */
static int step(struct unpickler *u)
{
    const uint8_t *a = NULL;
    size_t base = 0;
    u->op_at = u->pos;
    uint8_t op = u->in[u->pos++];
    switch (op) {
    case 0x80: /* PROTO */
        if (take(u, 1, "the protocol", &a) != 0)
            return -1;
        if (*a > 5)
            return fail(u, "protocol %u is not read (2 to 5 are)", (unsigned)*a);
        return 0;
    case 0x95: /* FRAME: a length to check, nothing to build */
        if (take(u, 8, "the frame length", &a) != 0)
            return -1;
        if (le(a, 8) > u->len - u->pos)
            return fail(u, "a frame of %llu bytes runs past the end (%zu left)", (unsigned long long)le(a, 8),
                        u->len - u->pos);
        return 0;
    case '}':
        return push_dict(u);
    case ']':
        return push(u, cf_pv_new(u->doc, CF_PV_LIST));
    case ')':
        return make_tuple(u, u->sn);
    case '(':
        if (u->mn >= u->lim.max_depth)
            return fail(u, "more than %zu MARKs open", u->lim.max_depth);
        if (u->mn == u->mcap && grow(u, (void **)&u->marks, &u->mcap, u->mn + 1, sizeof *u->marks) != 0)
            return -1;
        u->marks[u->mn++] = u->sn;
        return 0;
    case 'a':
        return need_values(u, 2) != 0 ? -1 : append_run(u, u->sn - 1);
    case 'e':
        return pop_mark(u, &base) != 0 ? -1 : append_run(u, base);
    case 's':
        return need_values(u, 3) != 0 ? -1 : setitem_run(u, u->sn - 2);
    case 'u':
        return pop_mark(u, &base) != 0 ? -1 : setitem_run(u, base);
    case 't':
        return pop_mark(u, &base) != 0 ? -1 : make_tuple(u, base);
    case 0x85:
    case 0x86:
    case 0x87:
        return tuple_n(u, (size_t)(op - 0x84));
    case 'X':
        return push_text(u, CF_PV_STR, 4);
    case 0x8c:
        return push_text(u, CF_PV_STR, 1);
    case 0x8d:
        return push_text(u, CF_PV_STR, 8);
    case 'B':
        return push_text(u, CF_PV_BYTES, 4);
    case 'C':
        return push_text(u, CF_PV_BYTES, 1);
    case 0x8e:
        return push_text(u, CF_PV_BYTES, 8);
    case 'J':
        return take(u, 4, "the integer", &a) != 0 ? -1 : push_int(u, (int32_t)(uint32_t)le(a, 4));
    case 'K':
        return take(u, 1, "the integer", &a) != 0 ? -1 : push_int(u, *a);
    case 'M':
        return take(u, 2, "the integer", &a) != 0 ? -1 : push_int(u, (int64_t)le(a, 2));
    case 0x8a:
        return push_long1(u);
    case 'G':
        return push_float(u);
    case 0x88:
        return push(u, singleton(u, &u->yes, CF_PV_BOOL, 1));
    case 0x89:
        return push(u, singleton(u, &u->no, CF_PV_BOOL, 0));
    case 'N':
        return push(u, singleton(u, &u->none, CF_PV_NONE, 0));
    case 'q':
        return take(u, 1, "the memo index", &a) != 0 ? -1 : memo_put(u, *a);
    case 'r':
        return take(u, 4, "the memo index", &a) != 0 ? -1 : memo_put(u, le(a, 4));
    case 0x94:
        return memo_put(u, u->memo_count);
    case 'h':
        return take(u, 1, "the memo index", &a) != 0 ? -1 : push_memo(u, *a);
    case 'j':
        return take(u, 4, "the memo index", &a) != 0 ? -1 : push_memo(u, le(a, 4));
    case '.':
        if (u->mn)
            return fail(u, "%zu MARK%s still open", u->mn, u->mn == 1 ? "" : "s");
        if (u->sn != 1)
            return fail(u, "%zu values on the stack, one expected", u->sn);
        return 1;
    default:
        return refuse(u);
    }
}

static int finish(struct unpickler *u)
{
    for (size_t i = 0; i < u->dn; i++)
        if (cf_pv_dict_dedup(u->doc, u->dicts[i], &u->dedup, &u->dedup_cap) != 0)
            return fail_memory(u);
    cf_pvdoc_set_root(u->doc, u->stack[0]);
    return 0;
}

int cf_pickle_read(const void *data, size_t len, const struct cf_pickle_limits *lim, struct cf_pvdoc **out,
                   cf_error *err)
{
    *out = NULL;
    struct unpickler u = { 0 };
    u.in = data;
    u.len = len;
    u.err = err;
    u.lim = cf_pv_limits_resolve(lim, len);
    if (len > u.lim.max_bytes)
        return cf_error_set(err, CF_ERR_FORMAT, "pickle of %zu bytes is over the limit of %zu", len,
                            u.lim.max_bytes);
    if (!(u.doc = cf_pvdoc_new(u.lim.max_memory)))
        return cf_error_set(err, CF_ERR_INTERNAL, "out of memory");
    int rc = 0;
    while (rc == 0 && u.pos < u.len)
        rc = step(&u);
    if (rc == 0)
        rc = cf_error_set(err, CF_ERR_FORMAT, "pickle ends at byte %zu without STOP (truncated)", len);
    else if (rc == 1)
        rc = finish(&u);
    free(u.stack);
    free(u.marks);
    free(u.memo);
    free(u.sparse);
    free(u.dicts);
    free(u.dedup);
    if (rc != 0) {
        cf_pvdoc_free(u.doc);
        return -1;
    }
    *out = u.doc;
    return 0;
}
