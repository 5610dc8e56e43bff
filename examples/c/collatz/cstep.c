#include <C4SNet.h>

/* box cstep((n, <steps>) -> (n, <steps>) | (n, <steps>, <fin>) | (peak, <mark>)):
 * one step of the trajectory; a mark record every 16 steps. */
void *cstep(void *hnd, c4snet_data_t *n, int steps)
{
    long v = *(long *)C4SNetGetData(n);
    if (v <= 1) {
        C4SNetOut(hnd, 2, n, steps, 1);
        return hnd;
    }
    long next = v % 2 ? 3 * v + 1 : v / 2;
    C4SNetFree(n);
    if ((steps + 1) % 16 == 0) C4SNetOut(hnd, 3, C4SNetCreate(CTYPE_long, 1, &v), steps + 1);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_long, 1, &next), steps + 1);
    return hnd;
}
