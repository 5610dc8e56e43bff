#include <string.h>
#include <C4SNet.h>

#define SCAN(T) \
    do { \
        T *a = data, *lo = a, *hi = a; \
        for (size_t i = 1; i < n; i++) { \
            if (a[i] < *lo) lo = &a[i]; \
            if (a[i] > *hi) hi = &a[i]; \
        } \
        lop = lo; \
        hip = hi; \
    } while (0)

/* box stats((dst) -> (lo, hi, <n>, <sz>, <ty>)) */
void *stats(void *hnd, c4snet_data_t *dst)
{
    c4snet_type_t t = C4SNetGetType(dst);
    size_t n = C4SNetArraySize(dst);
    void *data = C4SNetGetData(dst);
    void *lop = data, *hip = data;
    switch (t) {
    case CTYPE_uchar: SCAN(unsigned char); break;
    case CTYPE_char: SCAN(signed char); break;
    case CTYPE_ushort: SCAN(unsigned short); break;
    case CTYPE_short: SCAN(short); break;
    case CTYPE_uint: SCAN(unsigned int); break;
    case CTYPE_int: SCAN(int); break;
    case CTYPE_ulong: SCAN(unsigned long); break;
    case CTYPE_long: SCAN(long); break;
    case CTYPE_float: SCAN(float); break;
    case CTYPE_double: SCAN(double); break;
    default: break;
    }
    c4snet_data_t *lo = C4SNetCreate(t, 1, lop);
    c4snet_data_t *hi = C4SNetCreate(t, 1, hip);
    int sz = C4SNetSizeof(dst);
    C4SNetFree(dst);
    C4SNetOut(hnd, 1, lo, hi, (int)n, sz, (int)t);
    return hnd;
}

/* box rev((keep) -> (keep)): the input is shared with orig, so reverse a copy */
void *rev(void *hnd, c4snet_data_t *keep)
{
    c4snet_data_t *copy = C4SNetDeepCopy(keep);
    size_t n = C4SNetArraySize(copy), sz = (size_t)C4SNetSizeof(copy);
    unsigned char *p = C4SNetGetData(copy), tmp[16];
    for (size_t i = 0; i < n / 2; i++) {
        memcpy(tmp, p + i * sz, sz);
        memcpy(p + i * sz, p + (n - 1 - i) * sz, sz);
        memcpy(p + (n - 1 - i) * sz, tmp, sz);
    }
    C4SNetFree(keep);
    C4SNetOut(hnd, 1, copy);
    return hnd;
}
