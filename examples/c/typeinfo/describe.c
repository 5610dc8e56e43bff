#include <C4SNet.h>

/* box describe((x) -> (x, <ctype>, <size>, <count>)) */
void *describe(void *hnd, c4snet_data_t *x)
{
    c4snet_type_t ctype = C4SNetGetType(x);
    int size = C4SNetSizeof(x);
    int count = (int)C4SNetArraySize(x);
    C4SNetOut(hnd, 1, x, (int)ctype, size, count);
    return hnd;
}
