#include <string.h>
#include <C4SNet.h>

/* box blocks((msg, sched, <id>) -> (blk, sched, <id>, <bi>, <lane>, <nb>)):
 * cut the message into 8-byte blocks (zero padded); every block shares the schedule. */
void *blocks(void *hnd, c4snet_data_t *msg, c4snet_data_t *sched, int id)
{
    const char *m = C4SNetGetData(msg);
    size_t n = C4SNetArraySize(msg);
    int nb = (int)((n + 7) / 8);
    if (nb == 0) nb = 1;
    for (int b = 0; b < nb; b++) {
        char block[8];
        memset(block, 0, sizeof block);
        for (size_t j = 0; j < 8 && (size_t)b * 8 + j < n; j++)
            block[j] = m[(size_t)b * 8 + j];
        C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, 8, block), C4SNetShallowCopy(sched), id,
                  b, (id + b) % 4, nb);
    }
    C4SNetFree(sched);
    C4SNetFree(msg);
    return hnd;
}
