#include <C4SNet.h>
#include <string.h>

/* box cut: an empty canvas (variant 1) first, then one tile per row band (variant 2). */
void *cut(void *hnd, c4snet_data_t *img, int w, int h, int t)
{
    const double *a = C4SNetGetData(img);
    double *c;
    c4snet_data_t *canvas = C4SNetAlloc(CTYPE_double, (size_t)w * h, (void **)&c);
    memset(c, 0, sizeof(double) * (size_t)w * h);
    C4SNetOut(hnd, 1, canvas, t, w);
    for (int k = 0; k < t; k++) {
        int y0 = h * k / t, y1 = h * (k + 1) / t;
        C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_double, (size_t)(y1 - y0) * w, a + (size_t)y0 * w), y0, y1 - y0, w);
    }
    C4SNetFree(img);
    return hnd;
}

/* box blur: one horizontal 3-point average, clamped at the row ends. */
void *blur(void *hnd, c4snet_data_t *tile, int rows, int w)
{
    c4snet_data_t *o = C4SNetDeepCopy(tile);
    const double *a = C4SNetGetData(tile);
    double *b = C4SNetGetData(o);
    for (int r = 0; r < rows; r++)
        for (int x = 0; x < w; x++) {
            double l = a[r * w + (x > 0 ? x - 1 : 0)], m = a[r * w + x], q = a[r * w + (x < w - 1 ? x + 1 : w - 1)];
            b[r * w + x] = (l + m + q) / 3.0;
        }
    C4SNetFree(tile);
    C4SNetOut(hnd, 1, o, rows, w);
    return hnd;
}

/* box paste: copies a tile into the canvas; the last tile lets the image out. */
void *paste(void *hnd, c4snet_data_t *canvas, int left, int w, c4snet_data_t *tile, int y0, int rows)
{
    double *c = C4SNetGetData(canvas);   /* updated in place: the canvas is not shared */
    memcpy(c + (size_t)y0 * w, C4SNetGetData(tile), sizeof(double) * (size_t)rows * w);
    C4SNetFree(tile);
    if (left == 1) C4SNetOut(hnd, 2, canvas, w);
    else C4SNetOut(hnd, 1, canvas, left - 1, w);
    return hnd;
}
