#include <C4SNet.h>

/* box render((board, <n>) -> (picture, <n>)): rows of '.' and 'Q' separated by '/'. */
void *render(void *hnd, c4snet_data_t *board, int n)
{
    const int *cols = C4SNetGetData(board);
    char *pic;
    size_t len = (size_t)(n * (n + 1) - 1);
    c4snet_data_t *p = C4SNetAlloc(CTYPE_char, len, (void **)&pic);
    size_t k = 0;
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < n; c++) pic[k++] = cols[r] == c ? 'Q' : '.';
        if (r + 1 < n) pic[k++] = '/';
    }
    C4SNetFree(board);
    C4SNetOut(hnd, 1, p, n);
    return hnd;
}
