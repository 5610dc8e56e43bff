/* fan: spin for about 50 microseconds, then pass the value on. */
#include <C4SNet.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void *work(void *hnd, c4snet_data_t *a)
{
    double end = now_us() + 50.0;
    volatile unsigned long x = 0;
    while (now_us() < end) {
        x++;
    }
    C4SNetOut(hnd, 1, a);
    return hnd;
}
