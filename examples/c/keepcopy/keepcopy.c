#include <C4SNet.h>

/* box keep((data) -> (data, <len>) | (backup)): the same object in two records. */
void *keep(void *hnd, c4snet_data_t *data)
{
    int len = (int)C4SNetArraySize(data);
    /* Take the second reference before handing the first one over: once emitted,
       the record may already be consumed (and the object freed) downstream. */
    c4snet_data_t *copy = C4SNetShallowCopy(data);
    C4SNetOut(hnd, 1, data, len);
    C4SNetOut(hnd, 2, copy);
    return hnd;
}

/* box sum((data, <len>) -> (total)) */
void *sum(void *hnd, c4snet_data_t *data, int len)
{
    const int *v = C4SNetGetData(data);
    long total = 0;
    for (int i = 0; i < len; i++) {
        total += v[i];
    }
    C4SNetFree(data);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_long, 1, &total));
    return hnd;
}

/* box last((backup) -> (lastval)) */
void *last(void *hnd, c4snet_data_t *backup)
{
    size_t n = C4SNetArraySize(backup);
    int lastval = n > 0 ? ((const int *)C4SNetGetData(backup))[n - 1] : -1;
    C4SNetFree(backup);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &lastval));
    return hnd;
}
