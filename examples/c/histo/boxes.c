#include <C4SNet.h>

/* box bins((data, <nb>) -> (hist, <nb>) | (junk) | ()) */
void *bins(void *hnd, c4snet_data_t *data, int nb)
{
    size_t n = C4SNetArraySize(data);
    if (n == 0) {
        C4SNetFree(data);
        C4SNetOut(hnd, 3);
        return hnd;
    }
    if (nb <= 0) {
        C4SNetOut(hnd, 2, data);
        return hnd;
    }
    unsigned short *h;
    c4snet_data_t *hist = C4SNetAlloc(CTYPE_ushort, (size_t)nb, (void **)&h);
    for (int i = 0; i < nb; i++)
        h[i] = 0;
    const float *v = C4SNetGetData(data);
    for (size_t i = 0; i < n; i++) {
        int b = (int)(v[i] * nb);
        if (b >= nb)
            b = nb - 1;
        if (b < 0)
            b = 0;
        h[b]++;
    }
    C4SNetFree(data);
    C4SNetOut(hnd, 1, hist, nb);
    return hnd;
}

/* box sink((junk) -> ) */
void *sink(void *hnd, c4snet_data_t *junk)
{
    C4SNetFree(junk);
    return hnd;
}

/* box peaks((hist, <nb>) -> (<bin>, <cnt>) | (hist, <total>)) */
void *peaks(void *hnd, c4snet_data_t *hist, int nb)
{
    const unsigned short *h = C4SNetGetData(hist);
    int n = (int)C4SNetArraySize(hist), max = 0, total = 0;
    (void)nb;
    for (int i = 0; i < n; i++) {
        total += h[i];
        if (h[i] > max)
            max = h[i];
    }
    for (int i = 0; i < n; i++)
        if (h[i] == max)
            C4SNetOut(hnd, 1, i, max);
    C4SNetOut(hnd, 2, hist, total);
    return hnd;
}
