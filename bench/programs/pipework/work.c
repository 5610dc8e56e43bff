/* pipework: an identity box that first spins for about 1 us (issue 26: pipeline
 * parallelism of 10 such boxes in a row). */
#include <C4SNet.h>
#include <time.h>

void *work(void *hnd, c4snet_data_t *a)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000);
    C4SNetOut(hnd, 1, a);
    return hnd;
}
