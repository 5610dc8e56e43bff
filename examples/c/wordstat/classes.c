#include <ctype.h>
#include <stdlib.h>
#include <C4SNet.h>

/* box classes((text, <n>) -> (b)): {n, letters, digits, spaces, other} as a long array. */
void *classes(void *hnd, c4snet_data_t *text, int n)
{
    long counts[5] = {n, 0, 0, 0, 0};
    char *s = C4SNetGetString(text);
    for (char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalpha(c)) counts[1]++;
        else if (isdigit(c)) counts[2]++;
        else if (c == ' ') counts[3]++;
        else counts[4]++;
    }
    free(s);
    C4SNetFree(text);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_long, 5, counts));
    return hnd;
}
