#include <string.h>
#include <C4SNet.h>

/* box schedule((key, <rounds>) -> (sched, <rounds>)):
 * one 4-byte subkey per round, derived from the key string by rotation and mixing. */
void *schedule(void *hnd, c4snet_data_t *key, int rounds)
{
    const unsigned char *k = C4SNetGetData(key);
    size_t klen = C4SNetArraySize(key);
    unsigned char *sub;
    c4snet_data_t *sched = C4SNetAlloc(CTYPE_uchar, (size_t)rounds * 4, (void **)&sub);
    for (int r = 0; r < rounds; r++) {
        for (int j = 0; j < 4; j++) {
            unsigned char c = klen ? k[(size_t)(r * 3 + j) % klen] : 0;
            sub[r * 4 + j] = (unsigned char)((c << (j + 1)) ^ (c >> (7 - j)) ^ (r * 37 + j * 11));
        }
    }
    C4SNetFree(key);
    C4SNetOut(hnd, 1, sched, rounds);
    return hnd;
}
