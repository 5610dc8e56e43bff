#include <stdio.h>
#include <C4SNet.h>

/* box fmt((n, <steps>, <fin>) -> (text)) */
void *fmt(void *hnd, c4snet_data_t *n, int steps, int fin)
{
    char buf[64];
    int len = snprintf(buf, sizeof buf, "reached %ld after %d steps%s", *(long *)C4SNetGetData(n),
                       steps, fin ? "" : "?");
    C4SNetFree(n);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, (size_t)len, buf));
    return hnd;
}
