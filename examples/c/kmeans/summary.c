#include <C4SNet.h>

/* box summary((cent, assign) -> (sizes, cent)): cluster sizes; the centroids pass on */
void *summary(void *hnd, c4snet_data_t *cent, c4snet_data_t *assign)
{
    int k = (int)C4SNetArraySize(cent);
    const int *a = C4SNetGetData(assign);
    int *s;
    c4snet_data_t *sizes = C4SNetAlloc(CTYPE_int, (size_t)k, (void **)&s);
    for (int j = 0; j < k; j++) s[j] = 0;
    for (size_t i = 0; i < C4SNetArraySize(assign); i++) s[a[i]]++;
    C4SNetFree(assign);
    C4SNetOut(hnd, 1, sizes, cent);
    return hnd;
}
