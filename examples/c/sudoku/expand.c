#include <string.h>
#include <C4SNet.h>

static int fits(const char *b, int cell, char d)
{
    int r = cell / 9, c = cell % 9, br = r / 3 * 3, bc = c / 3 * 3;
    for (int k = 0; k < 9; k++) {
        if (b[r * 9 + k] == d || b[k * 9 + c] == d) return 0;
        if (b[(br + k / 3) * 9 + bc + k % 3] == d) return 0;
    }
    return 1;
}

/* box expand((board, <empty>) -> (board, <empty>, <row>) | (board, <solved>)):
 * fill the empty cell with the fewest candidates; a full board is solved (<solved> is
 * the number of cells that were filled by the search). */
void *expand(void *hnd, c4snet_data_t *board, int empty)
{
    const char *b = C4SNetGetData(board);
    int best = -1, nbest = 10;
    for (int i = 0; i < 81 && nbest > 1; i++) {
        if (b[i] != '.') continue;
        int n = 0;
        for (char d = '1'; d <= '9'; d++) n += fits(b, i, d);
        if (n < nbest) { nbest = n; best = i; }
    }
    if (best < 0) {
        C4SNetOut(hnd, 2, board, 0);
        return hnd;
    }
    for (char d = '1'; d <= '9'; d++) {
        if (!fits(b, best, d)) continue;
        char next[81];
        memcpy(next, b, 81);
        next[best] = d;
        c4snet_data_t *nb = C4SNetCreate(CTYPE_char, 81, next);
        if (empty == 1) C4SNetOut(hnd, 2, nb, 1);
        else C4SNetOut(hnd, 1, nb, empty - 1, best / 9);
    }
    C4SNetFree(board);
    return hnd;
}
