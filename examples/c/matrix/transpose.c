#include "matrix.h"

/* box transpose((A, <n>) -> (A, B, <n>)): B is a deep copy of A, transposed in place. */
void *transpose(void *hnd, c4snet_data_t *a, int n)
{
    c4snet_data_t *B = C4SNetDeepCopy(a);
    double *b = C4SNetGetData(B);
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            double t = b[i * n + j];
            b[i * n + j] = b[j * n + i];
            b[j * n + i] = t;
        }
    }
    C4SNetOut(hnd, 1, a, B, n);
    return hnd;
}
