#include <C4SNet.h>

/* box seed((pts, <k>) -> (pts, cent, assign, <it>)): the first k points are the
 * initial centroids; no point assigned yet (-1). */
void *seed(void *hnd, c4snet_data_t *pts, int k)
{
    const double *p = C4SNetGetData(pts);
    int n = (int)C4SNetArraySize(pts);
    double *c;
    int *a;
    c4snet_data_t *cent = C4SNetAlloc(CTYPE_double, (size_t)k, (void **)&c);
    c4snet_data_t *assign = C4SNetAlloc(CTYPE_int, (size_t)n, (void **)&a);
    for (int j = 0; j < k; j++) c[j] = p[j % n];
    for (int i = 0; i < n; i++) a[i] = -1;
    C4SNetOut(hnd, 1, pts, cent, assign, 0);
    return hnd;
}
