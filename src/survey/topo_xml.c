/* NCCL_TOPO_FILE as NCCL's own XML reader takes it (graph/xml.cc, xmlGetNode and
 * xmlLoadSub): elements and attributes only, every value quoted, names and values
 * under 256 bytes, and only ' ', '\n' and '\r' between elements -- a tab or an
 * "<?xml ...?>" declaration, fine for any XML library, makes NCCL fail. */
#include <stdio.h>
#include <string.h>

#include "cclforge/ncclconf.h"

enum { MAX_STR = CF_TOPO_XML_MAX_STR, MAX_DEPTH = 1024 };

struct reader {
    const char *start, *p, *end;
    char *why;
    size_t why_len;
};

static int fail(struct reader *r, const char *what)
{
    snprintf(r->why, r->why_len, "%s (byte %zu)", what, (size_t)(r->p - r->start));
    return -1;
}

static int get(struct reader *r, char *c)
{
    if (r->p >= r->end)
        return -1;
    *c = *r->p++;
    return 0;
}

/* xmlGetValue: a quoted value, kept (without its quotes) in val[MAX_STR] */
static int value(struct reader *r, char *val, char *last)
{
    char c, quote;
    if (get(r, &quote) < 0)
        return fail(r, "unexpected end of file");
    if (quote != '"' && quote != '\'')
        return fail(r, "an attribute value without quotes");
    size_t n = 0;
    do {
        if (get(r, &c) < 0)
            return fail(r, "unexpected end of file in a value");
        if (n + 1 == MAX_STR)
            return fail(r, "a value of 256 bytes or more");
        val[n++] = c;
    } while (c != quote);
    val[n - 1] = 0;
    return get(r, last) < 0 ? fail(r, "unexpected end of file") : 0;
}

/* xmlGetToken: a name up to ' ', '>', '/', '\n' or '\r', or name=value (the
 * value into val; NULL where none is allowed) */
static int token(struct reader *r, char *name, char *val, char *last)
{
    size_t n = 0;
    char c;
    do {
        if (get(r, &c) < 0)
            return fail(r, "unexpected end of file");
        if (c == '=') {
            name[n] = 0;
            if (!val)
                return fail(r, "an attribute in a closing tag or element name");
            return value(r, val, last);
        }
        name[n] = c;
        if (++n == MAX_STR)
            return fail(r, "a name of 256 bytes or more");
    } while (c != ' ' && c != '>' && c != '/' && c != '\n' && c != '\r');
    name[n - 1] = 0;
    *last = c;
    return 0;
}

enum node_type { NODE_NONE, NODE_OPEN, NODE_CLOSE, NODE_SINGLE };

/* from just after "<!--" to just after the first "-->" */
static int skip_comment(struct reader *r, const char *from)
{
    const char *end = from;
    for (; end + 2 < r->end; end++)
        if (end[0] == '-' && end[1] == '-' && end[2] == '>') {
            r->p = end + 3;
            return 0;
        }
    return fail(r, "an unterminated comment");
}

/* xmlGetNode: the element's name and its first CF_TOPO_XML_MAX_ATTRS attributes
 * into e (NCCL ignores the others too) */
static int node(struct reader *r, struct cf_topo_xml_elem *e, enum node_type *type)
{
    char *name = e->name;
    e->n_attrs = 0;
    char c = ' ';
    *type = NODE_NONE;
    for (;;) {
        while (c == ' ' || c == '\n' || c == '\r')
            if (get(r, &c) < 0)
                return 0;
        if (c != '<')
            return fail(r, c == '\t' ? "a tab between elements (NCCL accepts only spaces and newlines)"
                                     : "text outside a tag (NCCL expects '<')");
        const char *tag = r->p;
        if (token(r, name, NULL, &c) < 0)
            return -1;
        if (strncmp(name, "!--", 3))
            break;
        if (skip_comment(r, tag + 3) < 0)
            return -1;
        c = ' ';
    }
    if (!name[0] && c == '/') {
        *type = NODE_CLOSE;
        if (token(r, name, NULL, &c) < 0)
            return -1;
        return c == '>' ? 0 : fail(r, "a closing tag not ended by '>'");
    }
    char key[MAX_STR], val[MAX_STR];
    while (c == ' ') {
        val[0] = 0;
        if (token(r, key, val, &c) < 0)
            return -1;
        if (key[0] && e->n_attrs < CF_TOPO_XML_MAX_ATTRS) {
            memcpy(e->keys[e->n_attrs], key, MAX_STR);
            memcpy(e->values[e->n_attrs++], val, MAX_STR);
        }
    }
    *type = NODE_OPEN;
    if (c == '/') {
        *type = NODE_SINGLE;
        if (token(r, key, NULL, &c) < 0)
            return -1;
    }
    if (c != '>')
        return fail(r, name[0] == '?' ? "an XML declaration (<?xml ... ?>), which NCCL's reader refuses"
                                      : "a tag not ended by '>'");
    return 0;
}

int cf_nccl_topo_xml_walk(const char *text, size_t len, cf_topo_xml_visit_fn visit, void *ctx, char *why,
                          size_t why_len)
{
    struct reader r = { text, text, text + len, why, why_len };
    char open[MAX_DEPTH][MAX_STR > 64 ? 64 : MAX_STR];
    int depth = 0, systems = 0;
    struct cf_topo_xml_elem e;
    for (;;) {
        enum node_type type;
        if (node(&r, &e, &type) < 0)
            return -1;
        if (type == NODE_NONE) {
            if (depth)
                return fail(&r, "an element left open at the end");
            break;
        }
        const char *name = e.name;
        if (type == NODE_CLOSE) {
            if (!depth || strncmp(open[depth - 1], name, sizeof open[0] - 1))
                return fail(&r, "a closing tag that does not match the open element");
            depth--;
            continue;
        }
        if (!depth && !strcmp(name, "system"))
            systems++;
        if (visit) {
            e.depth = (size_t)depth;
            visit(ctx, &e);
        }
        if (type == NODE_OPEN) {
            if (depth == MAX_DEPTH)
                return fail(&r, "elements nested deeper than NCCL's 1024");
            size_t n = strnlen(name, sizeof open[0] - 1);
            memcpy(open[depth], name, n);
            open[depth++][n] = 0;
        }
    }
    if (!systems)
        return fail(&r, "no <system> element at the top: NCCL finds no topology in it");
    return 0;
}

int cf_nccl_topo_xml_check(const char *text, size_t len, char *why, size_t why_len)
{
    return cf_nccl_topo_xml_walk(text, len, NULL, NULL, why, why_len);
}

const char *cf_topo_xml_attr(const struct cf_topo_xml_elem *e, const char *key)
{
    for (size_t i = 0; i < e->n_attrs; i++)
        if (!strcmp(e->keys[i], key))
            return e->values[i];
    return NULL;
}
