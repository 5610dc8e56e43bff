#include <C4SNet.h>

/* box label((X, <i>) -> (X, <i>, <seen>)): doubles X into a new object. */
void *label(void *hnd, c4snet_data_t *x, int i)
{
    int v = 2 * *(int *)C4SNetGetData(x);
    C4SNetFree(x);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &v), i, 1);
    return hnd;
}
