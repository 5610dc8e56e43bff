#include <C4SNet.h>

/* box dot((a, b) -> (r)) */
void *dot(void *hnd, c4snet_data_t *a, c4snet_data_t *b)
{
    const double *x = C4SNetGetData(a);
    const double *y = C4SNetGetData(b);
    double r = 0.0;
    for (size_t i = 0; i < C4SNetArraySize(a); i++) {
        r += x[i] * y[i];
    }
    C4SNetFree(a);
    C4SNetFree(b);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_double, 1, &r));
    return hnd;
}
