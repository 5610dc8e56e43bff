#include <C4SNet.h>

/* box start((<n>) -> (board, <row>, <col>, <n>)): the empty board, no row placed. */
void *start(void *hnd, int n)
{
    int *cols;
    c4snet_data_t *board = C4SNetAlloc(CTYPE_int, (size_t)n, (void **)&cols);
    for (int i = 0; i < n; i++) cols[i] = -1;
    C4SNetOut(hnd, 1, board, 0, 0, n);
    return hnd;
}
