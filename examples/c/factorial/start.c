#include <C4SNet.h>

/* box start((<n>) -> (acc, <n>, <m>)): acc = 1 (long), <m> = n counts down. */
void *start(void *hnd, int n)
{
    long one = 1;
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_long, 1, &one), n, n);
    return hnd;
}
