#include <stdlib.h>
#include <string.h>
#include <C4SNet.h>

static void *stamp(void *hnd, c4snet_data_t *receipt, const char *mark)
{
    char *r = C4SNetGetString(receipt);
    size_t n = strlen(r) + strlen(mark);
    char *line = malloc(n + 1);
    strcpy(line, mark);
    strcat(line, r);
    C4SNetFree(receipt);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, n, line));
    free(line);
    free(r);
    return hnd;
}

/* box stamp_ok((receipt, <ok>) -> (line)) */
void *stamp_ok(void *hnd, c4snet_data_t *receipt, int ok)
{
    (void)ok;
    return stamp(hnd, receipt, "OK ");
}

/* box stamp_rej((receipt, <rej>) -> (line)) */
void *stamp_rej(void *hnd, c4snet_data_t *receipt, int rej)
{
    (void)rej;
    return stamp(hnd, receipt, "REFUSED ");
}
