#include <stdio.h>
#include <string.h>
#include <C4SNet.h>

/* box show((x, <#k>) -> (txt, <#k>) | (txt)): describe x and the key; an even key is
 * kept (variant 1), an odd one dropped (variant 2). x is a short. */
void *show(void *hnd, c4snet_data_t *x, int k)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "k=%d x=%hd", k, *(short *)C4SNetGetData(x));
    c4snet_data_t *txt = C4SNetCreate(CTYPE_char, (size_t)n, buf);
    C4SNetFree(x);
    if (k % 2 == 0)
        C4SNetOut(hnd, 1, txt, k);
    else
        C4SNetOut(hnd, 2, txt);
    return hnd;
}
