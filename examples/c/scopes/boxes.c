#include "C4SNet.h"

/* box shift((x, <d>) -> (x)): the box is named like the net it is declared in */
void *shift(void *hnd, c4snet_data_t *x, int d)
{
    int v = *(int *)C4SNetGetData(x) + d;
    C4SNetFree(x);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &v));
    return hnd;
}

/* box norm((x, y) -> (d2)), declared at top level */
void *norm(void *hnd, c4snet_data_t *x, c4snet_data_t *y)
{
    long a = *(int *)C4SNetGetData(x), b = *(int *)C4SNetGetData(y);
    long d2 = a * a + b * b;
    C4SNetFree(x);
    C4SNetFree(y);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_long, 1, &d2));
    return hnd;
}
