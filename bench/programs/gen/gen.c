#include <string.h>
#include <C4SNet.h>
/* box gen((<n>) -> (x)) : emits <n> records, each with a 256-byte char array x */
void *gen(void *hnd, int n)
{
    for (int i = 0; i < n; i++) {
        char *p;
        c4snet_data_t *d = C4SNetAlloc(CTYPE_char, 256, (void **)&p);
        memset(p, 'a' + (i % 26), 256);
        C4SNetOut(hnd, 1, d);
    }
    return hnd;
}
/* box id((x) -> (x)) */
void *id(void *hnd, c4snet_data_t *x)
{
    C4SNetOut(hnd, 1, x);
    return hnd;
}
