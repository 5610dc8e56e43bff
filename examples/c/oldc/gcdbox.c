#include <stdio.h>
#include <C4SNet.h>
#include "common.h"

inline int gcd(int a, int b)
{
    return b == 0 ? a : gcd(b, a % b);
}

void *gcdbox(void *hnd, int f, int g)
{
    if (debug_level)
        printf("gcd %d %d\n", f, g);
    C4SNetOut(hnd, 1, gcd(f, g));
    return hnd;
}
