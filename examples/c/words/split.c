#include <C4SNet.h>
#include <bool.h>
#include "memfun.h"

#include "split.h"
#include "util.h"

extern int node_location;

/* box split((text) -> (word, <pos>) | (<nwords>)) */
void *split(void *hnd, c4snet_data_t *text)
{
    const char *s = C4SNetGetData(text);
    int n = (int)C4SNetArraySize(text);
    int words = 0;
    int i = 0;
    while (i < n) {
        while (i < n && is_blank(s[i])) {
            i++;
        }
        int start = i;
        while (i < n && !is_blank(s[i])) {
            i++;
        }
        if (i > start) {
            char *w = SNetMemAlloc((size_t)(i - start));
            for (int j = start; j < i; j++) {
                w[j - start] = s[j];
            }
            C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, (size_t)(i - start), w),
                      words + node_location);
            SNetMemFree(w);
            words++;
        }
    }
    C4SNetFree(text);
    C4SNetOut(hnd, 2, words);
    return hnd;
}
