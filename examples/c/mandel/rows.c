#include <C4SNet.h>

/* box rows((view, <w>, <h>, <maxit>) -> (view, <y>, <w>, <h>, <maxit>)):
 * one record per row; every row shares the view array. */
void *rows(void *hnd, c4snet_data_t *view, int w, int h, int maxit)
{
    for (int y = 0; y < h; y++)
        C4SNetOut(hnd, 1, C4SNetShallowCopy(view), y, w, h, maxit);
    C4SNetFree(view);
    return hnd;
}
