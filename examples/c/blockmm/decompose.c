#include <C4SNet.h>

/* copy block (bi, bj) of the n x n matrix m into a new bs x bs double array */
static c4snet_data_t *block(const double *m, int n, int bs, int bi, int bj)
{
    double *p;
    c4snet_data_t *d = C4SNetAlloc(CTYPE_double, (size_t)(bs * bs), (void **)&p);
    for (int r = 0; r < bs; r++)
        for (int c = 0; c < bs; c++)
            p[r * bs + c] = m[(bi * bs + r) * n + bj * bs + c];
    return d;
}

/* box decompose((A, B, <n>, <bs>, <job>) -> (acc, <blk>, <cnt>, <nb>, <job>)
 *                                        | (a, b, <blk>, <k>, <job>)) */
void *decompose(void *hnd, c4snet_data_t *A, c4snet_data_t *B, int n, int bs, int job)
{
    const double *a = C4SNetGetData(A);
    const double *b = C4SNetGetData(B);
    int nb = n / bs;
    for (int i = 0; i < nb; i++) {
        for (int j = 0; j < nb; j++) {
            int blk = job * 1000 + i * nb + j;
            double *z;
            c4snet_data_t *acc = C4SNetAlloc(CTYPE_double, (size_t)(bs * bs), (void **)&z);
            for (int e = 0; e < bs * bs; e++) z[e] = 0.0;
            /* the accumulator after the work for odd blocks, before it for even ones */
            if ((i + j) % 2 == 0) C4SNetOut(hnd, 1, acc, blk, 0, nb, job);
            for (int k = 0; k < nb; k++)
                C4SNetOut(hnd, 2, block(a, n, bs, i, k), block(b, n, bs, k, j), blk, k, job);
            if ((i + j) % 2 == 1) C4SNetOut(hnd, 1, acc, blk, 0, nb, job);
        }
    }
    C4SNetFree(A);
    C4SNetFree(B);
    return hnd;
}
