#include <C4SNet.h>

/* box line((view, <y>, <w>, <h>, <maxit>) -> (counts, <y>, <maxit>, <inside>)):
 * escape iteration counts of row y; <inside> counts points that never escaped. */
void *line(void *hnd, c4snet_data_t *view, int y, int w, int h, int maxit)
{
    const double *v = C4SNetGetData(view); /* x0, y0, x1, y1 */
    int *counts;
    c4snet_data_t *out = C4SNetAlloc(CTYPE_int, (size_t)w, (void **)&counts);
    double ci = v[1] + (v[3] - v[1]) * y / h;
    int inside = 0;
    for (int x = 0; x < w; x++) {
        double cr = v[0] + (v[2] - v[0]) * x / w;
        double zr = 0.0, zi = 0.0;
        int it = 0;
        while (it < maxit && zr * zr + zi * zi <= 4.0) {
            double t = zr * zr - zi * zi + cr;
            zi = 2.0 * zr * zi + ci;
            zr = t;
            it++;
        }
        counts[x] = it;
        if (it == maxit) inside++;
    }
    C4SNetFree(view);
    C4SNetOut(hnd, 1, out, y, maxit, inside);
    return hnd;
}
