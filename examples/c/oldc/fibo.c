#include <stdio.h>
#include <C4SNet.h>
#include "common.h"

inline int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

void *fibo(void *hnd, int n)
{
    if (debug_level)
        printf("fibo %d\n", n);
    C4SNetOut(hnd, 1, n, fib(n));
    return hnd;
}
