#include <C4SNet.h>

/* box step((a, b, <sw>) -> (a, b, <sw>) | (b, a, <sw>) | (g, <sw>))
 * One step of Euclid on unsigned longs: b == 0 gives the result a; a < b swaps the
 * pair (variant 2 is written (b, a, ...), so passing a then b swaps them) and counts
 * the swap; otherwise (a, b) becomes (b, a mod b). */
void *step(void *hnd, c4snet_data_t *a, c4snet_data_t *b, int sw)
{
    unsigned long x = *(unsigned long *)C4SNetGetData(a);
    unsigned long y = *(unsigned long *)C4SNetGetData(b);

    if (y == 0) {
        C4SNetFree(b);
        C4SNetOut(hnd, 3, a, sw);
    } else if (x < y) {
        C4SNetOut(hnd, 2, a, b, sw + 1);
    } else {
        unsigned long r = x % y;
        C4SNetFree(a);
        C4SNetOut(hnd, 1, b, C4SNetCreate(CTYPE_ulong, 1, &r), sw);
    }
    return hnd;
}
