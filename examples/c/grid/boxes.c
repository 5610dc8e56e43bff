#include <C4SNet.h>

/* box hello( -> (greet)) */
void *hello(void *hnd)
{
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, 2, "hi"));
    return hnd;
}

/* box work((v, <i>, <j>) -> (v, <i>, <j>) | (w, <j>)):
 * an even value also gives a result w = v / 2 (a long) tagged with the column j + i;
 * every value moves to the next row as v + i + j */
void *work(void *hnd, c4snet_data_t *v, int i, int j)
{
    int x = *(int *)C4SNetGetData(v);
    C4SNetFree(v);
    if (x % 2 == 0) {
        long half = x / 2;
        C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_long, 1, &half), j + i);
    }
    int y = x + i + j;
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &y), i + 1, j);
    return hnd;
}
