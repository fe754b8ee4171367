/* The problems the streaming pass finds, as its workers find them (in any
 * order), reported as the serial pass reported them: in member order, each
 * member's in the order it found them, the first CF_WHEEL_SHOWN word for
 * word and the rest counted. Only the CF_WHEEL_SHOWN earliest are kept, so a
 * wheel of 200,000 corrupt members costs 50 strings, not 200,000. */
#include <stdarg.h>
#include <stdlib.h>

#include "pkg/wheel_verify_internal.h"

void cf_wheel_problem_log_init(struct cf_wheel_problem_log *l)
{
    l->n_kept = 0;
    l->total = 0;
    pthread_mutex_init(&l->lock, NULL);
}

static int earlier(size_t m1, unsigned s1, size_t m2, unsigned s2)
{
    return m1 < m2 || (m1 == m2 && s1 < s2);
}

void cf_wheel_member_problem(struct cf_wheel_problem_log *l, size_t member, unsigned *seq, const char *fmt, ...)
{
    struct strbuf text = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&text, fmt, ap);
    va_end(ap);
    unsigned s = (*seq)++;
    pthread_mutex_lock(&l->lock);
    l->total++;
    size_t at = l->n_kept;
    if (l->n_kept == CF_WHEEL_SHOWN) { /* full: it replaces the latest kept one, if it is earlier */
        at = 0;
        for (size_t k = 1; k < l->n_kept; k++)
            if (earlier(l->kept[at].member, l->kept[at].seq, l->kept[k].member, l->kept[k].seq))
                at = k;
        if (earlier(l->kept[at].member, l->kept[at].seq, member, s))
            at = CF_WHEEL_SHOWN;
        else
            free(l->kept[at].text);
    } else {
        l->n_kept++;
    }
    if (at < CF_WHEEL_SHOWN) {
        l->kept[at].member = member;
        l->kept[at].seq = s;
        l->kept[at].text = cf_sb_detach(&text);
    }
    pthread_mutex_unlock(&l->lock);
    cf_sb_release(&text);
}

static int by_order(const void *a, const void *b)
{
    const struct cf_logged_problem *x = a, *y = b;
    return earlier(x->member, x->seq, y->member, y->seq) ? -1 : earlier(y->member, y->seq, x->member, x->seq);
}

void cf_wheel_problem_log_flush(struct cf_wheel_problem_log *l, struct cf_wheel_problems *p)
{
    qsort(l->kept, l->n_kept, sizeof l->kept[0], by_order);
    for (size_t k = 0; k < l->n_kept; k++) {
        cf_wheel_problem(p, "%s", l->kept[k].text);
        free(l->kept[k].text);
    }
    p->n += l->total - l->n_kept; /* counted, never shown: the earliest CF_WHEEL_SHOWN are above */
    l->n_kept = l->total = 0;
    pthread_mutex_destroy(&l->lock);
}
