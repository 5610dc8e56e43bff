#include <C4SNet.h>

/* box expand((<n>) -> (x, <i>)): for i = 1..n, emits x = i * i (int) with <i> = i. */
void *expand(void *hnd, int n)
{
    for (int i = 1; i <= n; i++) {
        int sq = i * i;
        C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &sq), i);
    }
    return hnd;
}
