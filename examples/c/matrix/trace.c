#include "matrix.h"

/* box trace((C, <n>) -> (C, tr, <n>)) */
void *trace(void *hnd, c4snet_data_t *c, int n)
{
    const double *z = C4SNetGetData(c);
    double tr = 0.0;
    for (int i = 0; i < n; i++) {
        tr += z[i * n + i];
    }
    C4SNetOut(hnd, 1, c, C4SNetCreate(CTYPE_double, 1, &tr), n);
    return hnd;
}
