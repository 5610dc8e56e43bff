#include <C4SNet.h>

/* box init( -> (<p>)): a stage starts without a prime */
void *init(void *hnd)
{
    C4SNetOut(hnd, 1, 0);
    return hnd;
}

/* box compute((<p>, <n>) -> (<p>) | (<n>) | (<found>)) */
void *compute(void *hnd, int p, int n)
{
    if (p == 0) {
        C4SNetOut(hnd, 1, n); /* n is this stage's prime */
        C4SNetOut(hnd, 3, n);
    } else {
        C4SNetOut(hnd, 1, p);
        if (n % p != 0) C4SNetOut(hnd, 2, n);
    }
    return hnd;
}
