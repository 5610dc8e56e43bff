#include "matrix.h"

/* box mult((A, B, <n>) -> (C, <n>)): C = A * B. */
void *mult(void *hnd, c4snet_data_t *a, c4snet_data_t *b, int n)
{
    const double *x = C4SNetGetData(a);
    const double *y = C4SNetGetData(b);
    double *z;
    c4snet_data_t *C = C4SNetAlloc(CTYPE_double, (size_t)(n * n), (void **)&z);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < n; k++) {
            double s = 0.0;
            for (int j = 0; j < n; j++) {
                s += x[i * n + j] * y[j * n + k];
            }
            z[i * n + k] = s;
        }
    }
    C4SNetFree(a);
    C4SNetFree(b);
    C4SNetOut(hnd, 1, C, n);
    return hnd;
}
