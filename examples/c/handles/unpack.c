#include <stdlib.h>
#include <string.h>

#include "shape.h"

/* box unpack((h, ptr) -> (x, <same>)): x = perimeter; <same> = both handles agree. */
void *unpack(void *hnd, c4snet_data_t *h, c4snet_data_t *ptr)
{
    struct shape *s;
    memcpy(&s, C4SNetGetData(h), sizeof s);
    struct shape *t = *(struct shape **)C4SNetGetData(ptr);
    double x = s->sides * s->length;
    int same = s == t && C4SNetGetType(ptr) == CTYPE_pointer;
    free(s);
    C4SNetFree(h);
    C4SNetFree(ptr);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_double, 1, &x), same);
    return hnd;
}
