#include <C4SNet.h>

static unsigned char sbox(unsigned char x)
{
    return (unsigned char)((x * 167u + 13u) ^ (x >> 3));
}

/* box rnd((blk, sched, <r>) -> (blk, sched, <r>)): one Feistel round
 * (L, R) -> (R, L ^ F(R, K_r)), on a fresh block. */
void *rnd(void *hnd, c4snet_data_t *blk, c4snet_data_t *sched, int r)
{
    const unsigned char *in = C4SNetGetData(blk);
    const unsigned char *k = (const unsigned char *)C4SNetGetData(sched) + r * 4;
    unsigned char out[8];
    for (int j = 0; j < 4; j++) {
        unsigned char f = sbox((unsigned char)(in[4 + j] ^ k[j])) ^ in[4 + (j + 1) % 4];
        out[j] = in[4 + j];
        out[4 + j] = in[j] ^ f;
    }
    C4SNetFree(blk);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, 8, out), sched, r);
    return hnd;
}
