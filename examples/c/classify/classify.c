#include <C4SNet.h>

/* box classify((x) -> (x, <neg>) | (x, <pos>) | (<zero>)) */
void *classify(void *hnd, c4snet_data_t *x)
{
    int v = *(int *)C4SNetGetData(x);
    if (v < 0) {
        C4SNetOut(hnd, 1, x, 1);
    } else if (v > 0) {
        C4SNetOut(hnd, 2, x, 1);
    } else {
        C4SNetFree(x);
        C4SNetOut(hnd, 3, 1);
    }
    return hnd;
}

/* box negate((x, <neg>) -> (x)) */
void *negate(void *hnd, c4snet_data_t *x, int neg)
{
    int v = -*(int *)C4SNetGetData(x);
    (void)neg;
    C4SNetFree(x);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &v));
    return hnd;
}

/* box twice((x, <pos>) -> (x)) */
void *twice(void *hnd, c4snet_data_t *x, int pos)
{
    int v = 2 * *(int *)C4SNetGetData(x);
    (void)pos;
    C4SNetFree(x);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &v));
    return hnd;
}

/* box mark((x) -> (x, <#grp>)): <#grp> = x mod 4 */
void *mark(void *hnd, c4snet_data_t *x)
{
    int grp = *(int *)C4SNetGetData(x) % 4;
    C4SNetOut(hnd, 1, x, grp);
    return hnd;
}
