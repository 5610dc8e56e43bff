/* add: the new state state+inval if it is < 10, and always outval = the old state. */
#include <C4SNet.h>

void *add(void *hnd, c4snet_data_t *state, c4snet_data_t *inval)
{
    int s = *(int *)C4SNetGetData(state);
    int i = *(int *)C4SNetGetData(inval);
    int n = s + i;

    C4SNetFree(inval);
    if (n < 10) {
        C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &n));
    }
    C4SNetOut(hnd, 2, state);
    return hnd;
}
