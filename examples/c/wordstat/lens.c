#include <C4SNet.h>

/* box lens((line) -> (a)): histogram of word lengths (1..15, longer ones in bucket 15),
 * bucket 0 holds the number of words. */
void *lens(void *hnd, c4snet_data_t *line)
{
    int hist[16] = {0};
    const char *s = C4SNetGetData(line);
    size_t n = C4SNetArraySize(line);
    size_t i = 0;
    while (i < n) {
        while (i < n && s[i] == ' ') i++;
        size_t start = i;
        while (i < n && s[i] != ' ') i++;
        if (i > start) {
            size_t len = i - start;
            hist[0]++;
            hist[len > 15 ? 15 : len]++;
        }
    }
    C4SNetFree(line);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 16, hist));
    return hnd;
}
