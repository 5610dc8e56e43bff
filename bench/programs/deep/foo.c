/* deep: emit {A: A-1} while A > 0, else {B: 0}. */
#include <C4SNet.h>

void *foo(void *hnd, c4snet_data_t *a)
{
    int v = *(int *)C4SNetGetData(a);
    if (v > 0) {
        int w = v - 1;
        C4SNetFree(a);
        C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &w));
    } else {
        int z = 0;
        C4SNetFree(a);
        C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_int, 1, &z));
    }
    return hnd;
}
