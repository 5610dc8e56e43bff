#include <C4SNet.h>

/* box render((counts, <maxit>) -> (text)): one character per point. */
void *render(void *hnd, c4snet_data_t *counts, int maxit)
{
    static const char shades[] = " .:-=+*#%@";
    const int *c = C4SNetGetData(counts);
    size_t n = C4SNetArraySize(counts);
    char *t;
    c4snet_data_t *text = C4SNetAlloc(CTYPE_char, n, (void **)&t);
    for (size_t i = 0; i < n; i++)
        t[i] = c[i] >= maxit ? '&' : shades[(c[i] * 9) / maxit];
    C4SNetFree(counts);
    C4SNetOut(hnd, 1, text);
    return hnd;
}
