#include <C4SNet.h>

/* box check((p, <i>) -> (<isnull>, <i>)) */
void *check(void *hnd, c4snet_data_t *p, int i)
{
    int isnull = p == NULL;
    if (p != NULL) {
        C4SNetFree(p);
    }
    C4SNetOut(hnd, 1, isnull, i);
    return hnd;
}
