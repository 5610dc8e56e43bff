#include "matrix.h"

/* box gen((<n>) -> (A, <n>)): A[i][j] = (i * n + j + 1) / 2, row-major. */
void *gen(void *hnd, int n)
{
    double *a;
    c4snet_data_t *A = C4SNetAlloc(CTYPE_double, (size_t)(n * n), (void **)&a);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            a[i * n + j] = (i * n + j + 1) / 2.0;
        }
    }
    C4SNetOut(hnd, 1, A, n);
    return hnd;
}
