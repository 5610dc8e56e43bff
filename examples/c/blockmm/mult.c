#include <C4SNet.h>

/* box mult((a, b) -> (part)): the product of two square blocks */
void *mult(void *hnd, c4snet_data_t *a, c4snet_data_t *b)
{
    const double *x = C4SNetGetData(a);
    const double *y = C4SNetGetData(b);
    int bs = 1;
    while ((size_t)(bs * bs) < C4SNetArraySize(a)) bs++;
    double *p;
    c4snet_data_t *part = C4SNetAlloc(CTYPE_double, (size_t)(bs * bs), (void **)&p);
    for (int r = 0; r < bs; r++)
        for (int c = 0; c < bs; c++) {
            double s = 0.0;
            for (int k = 0; k < bs; k++) s += x[r * bs + k] * y[k * bs + c];
            p[r * bs + c] = s;
        }
    C4SNetFree(a);
    C4SNetFree(b);
    C4SNetOut(hnd, 1, part);
    return hnd;
}
