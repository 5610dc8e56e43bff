#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <C4SNet.h>

static c4snet_data_t *text(const char *s)
{
    return C4SNetCreate(CTYPE_char, strlen(s), s);
}

/* box trade((buy, sell, <px>, <qty>) -> (deal, <px>, <qty>)) */
void *trade(void *hnd, c4snet_data_t *buy, c4snet_data_t *sell, int px, int qty)
{
    char *b = C4SNetGetString(buy);
    char *s = C4SNetGetString(sell);
    char line[128];
    snprintf(line, sizeof line, "%s<-%s:%dx%d", b, s, qty, px);
    free(b);
    free(s);
    C4SNetFree(buy);
    C4SNetFree(sell);
    C4SNetOut(hnd, 1, text(line), px * qty, qty);
    return hnd;
}

/* box cheap((buy, <px>) -> (rejected)) */
void *cheap(void *hnd, c4snet_data_t *buy, int px)
{
    char *b = C4SNetGetString(buy);
    char line[128];
    snprintf(line, sizeof line, "%s@%d", b, px);
    free(b);
    C4SNetFree(buy);
    C4SNetOut(hnd, 1, text(line));
    return hnd;
}
