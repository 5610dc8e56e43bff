#include <stdio.h>
#include <string.h>
#include <C4SNet.h>

/* Read element i of an integral or floating array as long / double. */
static int is_float(c4snet_type_t t)
{
    return t == CTYPE_float || t == CTYPE_double;
}

static long get_l(c4snet_data_t *d, size_t i)
{
    void *p = C4SNetGetData(d);
    switch (C4SNetGetType(d)) {
    case CTYPE_uchar: return ((unsigned char *)p)[i];
    case CTYPE_char: return ((signed char *)p)[i];
    case CTYPE_ushort: return ((unsigned short *)p)[i];
    case CTYPE_short: return ((short *)p)[i];
    case CTYPE_uint: return ((unsigned int *)p)[i];
    case CTYPE_int: return ((int *)p)[i];
    case CTYPE_ulong: return (long)((unsigned long *)p)[i];
    case CTYPE_long: return ((long *)p)[i];
    default: return 0;
    }
}

static double get_d(c4snet_data_t *d, size_t i)
{
    void *p = C4SNetGetData(d);
    if (C4SNetGetType(d) == CTYPE_float)
        return ((float *)p)[i];
    return ((double *)p)[i];
}

#define PUT(T) \
    do { \
        T *q = buf; \
        q[i] = fl ? (T)get_d(src, i) : (T)get_l(src, i); \
    } while (0)

/* box conv((src, <to>) -> (dst, keep, orig) | (bad)) */
void *conv(void *hnd, c4snet_data_t *src, int to)
{
    if (to < (int)CTYPE_uchar || to > (int)CTYPE_double) {
        char msg[64];
        int n = snprintf(msg, sizeof msg, "no conversion to type %d", to);
        C4SNetFree(src);
        C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_char, (size_t)n, msg));
        return hnd;
    }
    size_t n = C4SNetArraySize(src);
    int fl = is_float(C4SNetGetType(src));
    union { unsigned long l[64]; double d[64]; } store;
    void *buf = &store;
    for (size_t i = 0; i < n && i < 64; i++) {
        switch ((c4snet_type_t)to) {
        case CTYPE_uchar: PUT(unsigned char); break;
        case CTYPE_char: PUT(signed char); break;
        case CTYPE_ushort: PUT(unsigned short); break;
        case CTYPE_short: PUT(short); break;
        case CTYPE_uint: PUT(unsigned int); break;
        case CTYPE_int: PUT(int); break;
        case CTYPE_ulong: PUT(unsigned long); break;
        case CTYPE_long: PUT(long); break;
        case CTYPE_float: PUT(float); break;
        default: PUT(double); break;
        }
    }
    c4snet_data_t *dst = C4SNetCreate((c4snet_type_t)to, n, buf);
    C4SNetOut(hnd, 1, dst, C4SNetShallowCopy(src), src);
    return hnd;
}
