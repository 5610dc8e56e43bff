#include <stdio.h>
#include <C4SNet.h>

/* box apply((bal, tx, <seq>) -> (bal) | (receipt, <seq>, <ok>)):
 * tx = {kind, amount}: 0 deposit, 1 withdrawal (refused if it would overdraw),
 * 2 interest in per mille. The balance object is private to the account: update in
 * place and re-emit it. */
void *apply(void *hnd, c4snet_data_t *bal, c4snet_data_t *tx, int seq)
{
    long *b = C4SNetGetData(bal);
    const int *t = C4SNetGetData(tx);
    int ok = 1;
    long before = *b;
    switch (t[0]) {
    case 0: *b += t[1]; break;
    case 1: if (*b >= t[1]) *b -= t[1]; else ok = 0; break;
    default: *b += *b * t[1] / 1000; break;
    }
    char text[96];
    int n = snprintf(text, sizeof text, "#%d %s %ld -> %ld", seq,
                     t[0] == 0 ? "deposit" : t[0] == 1 ? "withdraw" : "interest", before, *b);
    C4SNetFree(tx);
    C4SNetOut(hnd, 1, bal);
    C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_char, (size_t)n, text), seq, ok);
    return hnd;
}
