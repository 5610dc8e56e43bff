#include <C4SNet.h>

/* box count((board) -> (board, <empty>, <row>)): board is 81 characters, '.' empty */
void *count(void *hnd, c4snet_data_t *board)
{
    const char *b = C4SNetGetData(board);
    int empty = 0;
    for (int i = 0; i < 81; i++)
        if (b[i] == '.') empty++;
    C4SNetOut(hnd, 1, board, empty, 0);
    return hnd;
}
