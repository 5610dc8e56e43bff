#include <stdlib.h>
#include <string.h>

#include "count.h"
#include "util.h"

/* box count((word, <pos>) -> (word, <len>, <pos>)): the word in upper case. */
void *count(void *hnd, c4snet_data_t *word, int pos)
{
    char *s = C4SNetGetString(word);
    int len = (int)strlen(s);
    for (int i = 0; i < len; i++) {
        s[i] = to_upper(s[i]);
    }
    C4SNetFree(word);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, (size_t)len, s), len, pos);
    free(s);
    return hnd;
}
