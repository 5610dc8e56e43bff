#include <C4SNet.h>

/* box parity((n) -> (n, <odd>) | (n, <even>)) */
void *parity(void *hnd, c4snet_data_t *n)
{
    long v = *(long *)C4SNetGetData(n);
    if (v % 2) C4SNetOut(hnd, 1, n, 1);
    else C4SNetOut(hnd, 2, n, 1);
    return hnd;
}
