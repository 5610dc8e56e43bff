#include <C4SNet.h>

/* box halves((v) -> (a) | (b)): the first and the second half of a double array. */
void *halves(void *hnd, c4snet_data_t *v)
{
    const double *x = C4SNetGetData(v);
    size_t n = C4SNetArraySize(v) / 2;
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_double, n, x));
    C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_double, n, x + n));
    C4SNetFree(v);
    return hnd;
}
