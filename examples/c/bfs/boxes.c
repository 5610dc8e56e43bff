#include <stdio.h>
#include <C4SNet.h>

/* box expand((<n>, <d>, <p>) -> (<n>, <d>, <p>) | (leaf, <d>)):
 * above 1 and above depth 5, n splits into n / 2 (path 2p) and n - n / 2 (path 2p + 1),
 * a multiple of 3 also leaves a leaf of its own first; otherwise n is a leaf. */
void *expand(void *hnd, int n, int d, int p)
{
    if (n > 1 && d < 5) {
        if (n % 3 == 0) {
            int v = -n;
            C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_int, 1, &v), d);
        }
        C4SNetOut(hnd, 1, n / 2, d + 1, 2 * p);
        C4SNetOut(hnd, 1, n - n / 2, d + 1, 2 * p + 1);
    } else {
        int v = p * 100 + n;
        C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_int, 1, &v), d);
    }
    return hnd;
}

/* box label((leaf, <even>) -> (txt)) */
void *label(void *hnd, c4snet_data_t *leaf, int even)
{
    char buf[40];
    int n = snprintf(buf, sizeof buf, "leaf %d", *(int *)C4SNetGetData(leaf));
    (void)even;
    C4SNetFree(leaf);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, (size_t)n, buf));
    return hnd;
}
