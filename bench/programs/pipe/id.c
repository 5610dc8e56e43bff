/* pipe: the identity box. */
#include <C4SNet.h>

void *id(void *hnd, c4snet_data_t *a)
{
    C4SNetOut(hnd, 1, a);
    return hnd;
}
