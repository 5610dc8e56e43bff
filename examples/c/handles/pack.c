#include <stdlib.h>

#include "shape.h"

/* box pack((<k>) -> (h, ptr)): a regular k-gon of side 0.5. */
void *pack(void *hnd, int k)
{
    struct shape *s = malloc(sizeof *s);
    s->sides = k;
    s->length = 0.5;
    c4snet_data_t *h = C4SNetCreate(CTYPE_char, sizeof(void *), &s);
    c4snet_data_t *ptr = C4SNetCreate(CTYPE_pointer, 1, &s);
    C4SNetOut(hnd, 1, h, ptr);
    return hnd;
}
