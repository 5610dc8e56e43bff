/* Box code of where.snet: each box adds the node it runs on. */
#include "C4SNet.h"

extern int node_location;

void *where(void *hnd, int k)
{
    C4SNetOut(hnd, 1, k, node_location);
    return hnd;
}

void *report(void *hnd, int k, int ran_on)
{
    C4SNetOut(hnd, 1, k, ran_on, node_location);
    return hnd;
}
