#include <C4SNet.h>

/* box bump((v, <n>) -> (v, <n>) | (v, <done>)): adds 1 to every element of the int
 * object v, in place, and re-emits the same object; <n> counts the remaining rounds. */
void *bump(void *hnd, c4snet_data_t *v, int n)
{
    int *p = C4SNetGetData(v);
    size_t len = C4SNetArraySize(v);
    for (size_t i = 0; i < len; i++) {
        p[i] += 1;
    }
    if (n > 1) {
        C4SNetOut(hnd, 1, v, n - 1);
    } else {
        C4SNetOut(hnd, 2, v, 1);
    }
    return hnd;
}
