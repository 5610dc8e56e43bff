#include <C4SNet.h>

/* box describe((x) -> (x, <type>, <size>, <count>)) */
void *describe(void *hnd, c4snet_data_t *x)
{
    c4snet_type_t type = C4SNetGetType(x);
    int size = C4SNetSizeof(x);
    int count = (int)C4SNetArraySize(x);
    C4SNetOut(hnd, 1, x, (int)type, size, count);
    return hnd;
}
