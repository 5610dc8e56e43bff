#include <stdio.h>
#include <C4SNet.h>

/* box hex((blk, sched, <r>) -> (hex)) */
void *hex(void *hnd, c4snet_data_t *blk, c4snet_data_t *sched, int r)
{
    const unsigned char *b = C4SNetGetData(blk);
    char text[17];
    for (int j = 0; j < 8; j++)
        sprintf(text + 2 * j, "%02x", b[j]);
    (void)r;
    C4SNetFree(blk);
    C4SNetFree(sched);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, 16, text));
    return hnd;
}
