#include <stdlib.h>
#include <string.h>
#include <C4SNet.h>

/* box place((board, <row>, <n>) -> (board, <row>, <col>, <n>) | (board, <n>, <first>)):
 * put a queen into row <row> in every column not attacked; a full board leaves as
 * variant 2 with the column of the first queen. */
void *place(void *hnd, c4snet_data_t *board, int row, int n)
{
    const int *cols = C4SNetGetData(board);
    for (int c = 0; c < n; c++) {
        int ok = 1;
        for (int r = 0; r < row && ok; r++) {
            int d = cols[r] - c;
            if (d == 0 || abs(d) == row - r) ok = 0;
        }
        if (!ok) continue;
        int *next;
        c4snet_data_t *nb = C4SNetAlloc(CTYPE_int, (size_t)n, (void **)&next);
        memcpy(next, cols, sizeof(int) * (size_t)n);
        next[row] = c;
        if (row + 1 == n) C4SNetOut(hnd, 2, nb, n, next[0]);
        else C4SNetOut(hnd, 1, nb, row + 1, c, n);
    }
    C4SNetFree(board);
    return hnd;
}
