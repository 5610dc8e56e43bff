#include <stdio.h>
#include <C4SNet.h>

static int val(c4snet_data_t *d)
{
    int v = *(int *)C4SNetGetData(d);
    C4SNetFree(d);
    return v;
}

static void *say(void *hnd, int variant, const char *name, int v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%s %d", name, v);
    C4SNetOut(hnd, variant, C4SNetCreate(CTYPE_char, (size_t)n, buf));
    return hnd;
}

/* box pa((a) -> (out)) */
void *pa(void *hnd, c4snet_data_t *a) { return say(hnd, 1, "pa", val(a)); }

/* box pab((a, b) -> (out)) */
void *pab(void *hnd, c4snet_data_t *a, c4snet_data_t *b)
{
    int x = val(a);
    return say(hnd, 1, "pab", x + val(b));
}

/* box pabt((a, b, <t>) -> (out)) */
void *pabt(void *hnd, c4snet_data_t *a, c4snet_data_t *b, int t)
{
    int x = val(a);
    return say(hnd, 1, "pabt", x * val(b) + t);
}

/* box pbc((b, c) -> (out)) */
void *pbc(void *hnd, c4snet_data_t *b, c4snet_data_t *c)
{
    int x = val(b);
    return say(hnd, 1, "pbc", x - val(c));
}

/* box kb((a, <#k>) -> (out)) */
void *kb(void *hnd, c4snet_data_t *a, int k) { return say(hnd, 1, "kb", val(a) * k); }

/* box ctr((<n>) -> (<n>) | (out)) */
void *ctr(void *hnd, int n)
{
    if (n > 0) {
        C4SNetOut(hnd, 1, n - 1);
        return hnd;
    }
    return say(hnd, 2, "ctr", n);
}
