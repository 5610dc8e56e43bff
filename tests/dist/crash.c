/* Crashes (SIGSEGV) when it runs on node 2: a fault on one node of a run. */
#include "C4SNet.h"
#include <signal.h>
extern int node_location;
void *crash(void *hnd, int k)
{
    if (node_location == 2)
        raise(SIGSEGV);
    C4SNetOut(hnd, 1, k);
    return hnd;
}
