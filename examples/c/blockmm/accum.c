#include <C4SNet.h>

/* box accum((acc, part, <cnt>) -> (acc, <cnt>)): adds in place (the accumulator is
 * private to this block's chain) and re-emits it */
void *accum(void *hnd, c4snet_data_t *acc, c4snet_data_t *part, int cnt)
{
    double *s = C4SNetGetData(acc);
    const double *p = C4SNetGetData(part);
    for (size_t e = 0; e < C4SNetArraySize(acc); e++) s[e] += p[e];
    C4SNetFree(part);
    C4SNetOut(hnd, 1, acc, cnt + 1);
    return hnd;
}
