#include <stdlib.h>
#include <C4SNet.h>

/* box step((pts, cent, assign, <it>) -> (pts, cent, assign, <it>) | (cent, assign, <it>)):
 * one Lloyd iteration on fresh arrays; variant 2 when nothing moved or after 40. */
void *step(void *hnd, c4snet_data_t *pts, c4snet_data_t *cent, c4snet_data_t *assign, int it)
{
    const double *p = C4SNetGetData(pts);
    const double *c = C4SNetGetData(cent);
    const int *a = C4SNetGetData(assign);
    int n = (int)C4SNetArraySize(pts), k = (int)C4SNetArraySize(cent);
    double *nc;
    int *na;
    c4snet_data_t *ncent = C4SNetAlloc(CTYPE_double, (size_t)k, (void **)&nc);
    c4snet_data_t *nassign = C4SNetAlloc(CTYPE_int, (size_t)n, (void **)&na);
    double *sum = calloc((size_t)k, sizeof(double));
    int *cnt = calloc((size_t)k, sizeof(int));
    int moved = 0;
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int j = 1; j < k; j++) {
            double dj = p[i] - c[j], db = p[i] - c[best];
            if (dj * dj < db * db) best = j;
        }
        na[i] = best;
        if (best != a[i]) moved++;
        sum[best] += p[i];
        cnt[best]++;
    }
    for (int j = 0; j < k; j++) nc[j] = cnt[j] ? sum[j] / cnt[j] : c[j];
    free(sum);
    free(cnt);
    C4SNetFree(cent);
    C4SNetFree(assign);
    if (moved == 0 || it + 1 >= 40) {
        C4SNetFree(pts);
        C4SNetOut(hnd, 2, ncent, nassign, it + 1);
    } else {
        C4SNetOut(hnd, 1, pts, ncent, nassign, it + 1);
    }
    return hnd;
}
