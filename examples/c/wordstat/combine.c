#include <stdio.h>
#include <string.h>
#include <C4SNet.h>

/* box combine((a, b, <ln>) -> (summary, <ln>, <words>)) */
void *combine(void *hnd, c4snet_data_t *a, c4snet_data_t *b, int ln)
{
    int *hist = C4SNetGetData(a);
    long *cls = C4SNetGetData(b);
    char buf[128];
    int longest = 0;
    for (int i = 1; i < 16; i++)
        if (hist[i] > 0) longest = i;
    int len = snprintf(buf, sizeof buf, "%s%d:%ld/%ld/%ld/%ld<%d&",
                       cls[0] == ln ? "" : "MISMATCH ", ln, cls[1], cls[2], cls[3], cls[4], longest);
    int words = hist[0];
    C4SNetFree(a);
    C4SNetFree(b);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, len, buf), ln, words);
    return hnd;
}
