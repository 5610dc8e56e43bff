/* Boxes of cross.snet. */
#include "C4SNet.h"
#include <string.h>

void *make(void *hnd, int size)
{
    c4snet_data_t *d = C4SNetAlloc(CTYPE_char, size, NULL);
    memset(C4SNetGetData(d), 'x', size);
    C4SNetOut(hnd, 1, d);
    return hnd;
}

void *pass(void *hnd, c4snet_data_t *d)
{
    C4SNetOut(hnd, 1, d);
    return hnd;
}

void *size(void *hnd, c4snet_data_t *d)
{
    int n = C4SNetArraySize(d);
    C4SNetFree(d);
    C4SNetOut(hnd, 1, n);
    return hnd;
}
