#include <C4SNet.h>

/* box start( -> (<start>)): an initialiser. */
void *start(void *hnd)
{
    C4SNetOut(hnd, 1, 1);
    return hnd;
}

/* box twice((<n>) -> (<n>)) */
void *twice(void *hnd, int n)
{
    C4SNetOut(hnd, 1, 2 * n);
    return hnd;
}
