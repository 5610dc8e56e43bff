#include <C4SNet.h>

/* box probe((<i>) -> (p, <i>)): p is NULL for odd <i>, an int object otherwise. */
void *probe(void *hnd, int i)
{
    if (i % 2 != 0) {
        C4SNetOut(hnd, 1, NULL, i);
    } else {
        C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &i), i);
    }
    return hnd;
}
