#include <C4SNet.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* box chunk((arr, <k>) -> (part, <idx>, <k>)): k sorted pieces, one record each. */
void *chunk(void *hnd, c4snet_data_t *arr, int k)
{
    int n = (int)C4SNetArraySize(arr);
    const int *a = C4SNetGetData(arr);
    for (int i = 0; i < k; i++) {
        int lo = (int)((long)n * i / k), hi = (int)((long)n * (i + 1) / k);
        int *p;
        c4snet_data_t *d = C4SNetAlloc(CTYPE_int, (size_t)(hi - lo), (void **)&p);
        memcpy(p, a + lo, sizeof(int) * (size_t)(hi - lo));
        qsort(p, (size_t)(hi - lo), sizeof(int), cmp);
        C4SNetOut(hnd, 1, d, i, k);
    }
    C4SNetFree(arr);
    return hnd;
}

/* box merge((L, R) -> (part)): the merge of two sorted pieces. */
void *merge(void *hnd, c4snet_data_t *l, c4snet_data_t *r)
{
    size_t nl = C4SNetArraySize(l), nr = C4SNetArraySize(r);
    const int *a = C4SNetGetData(l), *b = C4SNetGetData(r);
    int *p;
    c4snet_data_t *d = C4SNetAlloc(CTYPE_int, nl + nr, (void **)&p);
    size_t i = 0, j = 0, o = 0;
    while (i < nl && j < nr) p[o++] = a[i] <= b[j] ? a[i++] : b[j++];
    while (i < nl) p[o++] = a[i++];
    while (j < nr) p[o++] = b[j++];
    C4SNetFree(l);
    C4SNetFree(r);
    C4SNetOut(hnd, 1, d);
    return hnd;
}
