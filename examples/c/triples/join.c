#include <stdio.h>
#include <C4SNet.h>

/* box join((a, b, c, <t>, <u>) -> (abc, note)): a int, b short, c unsigned int */
void *join(void *hnd, c4snet_data_t *a, c4snet_data_t *b, c4snet_data_t *c, int t, int u)
{
    long sum = (long)*(int *)C4SNetGetData(a) * 1000000L
             + (long)*(short *)C4SNetGetData(b) * 1000L
             + (long)*(unsigned int *)C4SNetGetData(c);
    char note[48];
    int n = snprintf(note, sizeof note, "t=%d u=%d", t, u);
    C4SNetFree(a);
    C4SNetFree(b);
    C4SNetFree(c);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_long, 1, &sum), C4SNetCreate(CTYPE_char, (size_t)n, note));
    return hnd;
}
