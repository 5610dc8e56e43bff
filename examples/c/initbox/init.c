#include <C4SNet.h>

/* box init( -> (X, <i>)): three records X = 10, 20, 30 with <i> = 0, 1, 2. */
void *init(void *hnd)
{
    for (int i = 0; i < 3; i++) {
        int x = 10 * (i + 1);
        C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &x), i);
    }
    return hnd;
}
