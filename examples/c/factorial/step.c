#include <C4SNet.h>

/* box step((acc, <m>) -> (acc, <m>) | (acc, <done>)): acc * m into a new object. */
void *step(void *hnd, c4snet_data_t *acc, int m)
{
    c4snet_data_t *next = C4SNetDeepCopy(acc);
    C4SNetFree(acc);
    if (m <= 1) {
        C4SNetOut(hnd, 2, next, 1);
        return hnd;
    }
    *(long *)C4SNetGetData(next) *= m;
    C4SNetOut(hnd, 1, next, m - 1);
    return hnd;
}
