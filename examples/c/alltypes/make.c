#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <C4SNet.h>

#define SCALAR(type, ctype, expr) \
    do { type v_ = (expr); out[n++] = C4SNetCreate(ctype, 1, &v_); } while (0)

#define PAIR(type, ctype, x, y) \
    do { \
        type *p_; \
        out[n] = C4SNetAlloc(ctype, 2, (void **)&p_); \
        p_[0] = (x); \
        p_[1] = (y); \
        n++; \
    } while (0)

/* box make((<k>) -> (uc, c, us, s, ui, i, ul, l, f, d, ld, p)
 *                 | (a_uc, a_c, a_us, a_s, a_ui, a_i, a_ul, a_l, a_f, a_d, a_ld, a_p)) */
void *make(void *hnd, int k)
{
    c4snet_data_t *out[12];
    int n = 0;

    SCALAR(unsigned char, CTYPE_uchar, (unsigned char)('a' + k));
    SCALAR(signed char, CTYPE_char, (signed char)('A' + k));
    SCALAR(unsigned short, CTYPE_ushort, (unsigned short)(USHRT_MAX - k));
    SCALAR(short, CTYPE_short, (short)(SHRT_MIN + k));
    SCALAR(unsigned int, CTYPE_uint, UINT_MAX - (unsigned int)k);
    SCALAR(int, CTYPE_int, -42 * k);
    SCALAR(unsigned long, CTYPE_ulong, ULONG_MAX - (unsigned long)k);
    SCALAR(long, CTYPE_long, -9000000000L * k);
    SCALAR(float, CTYPE_float, 1.5f * (float)k);
    SCALAR(double, CTYPE_double, 0.1 * k);
    SCALAR(long double, CTYPE_ldouble, 0.375L * k);
    SCALAR(void *, CTYPE_pointer, (void *)(uintptr_t)(0x1000u * (unsigned int)k));
    C4SNetOut(hnd, 1, out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
              out[8], out[9], out[10], out[11]);

    n = 0;
    PAIR(unsigned char, CTYPE_uchar, '<', '&');
    PAIR(signed char, CTYPE_char, (signed char)('0' + k), ',');
    PAIR(unsigned short, CTYPE_ushort, 0, USHRT_MAX);
    PAIR(short, CTYPE_short, -1, 1);
    PAIR(unsigned int, CTYPE_uint, 0u, UINT_MAX);
    PAIR(int, CTYPE_int, k, -k);
    PAIR(unsigned long, CTYPE_ulong, 0ul, ULONG_MAX);
    PAIR(long, CTYPE_long, LONG_MIN, LONG_MAX);
    PAIR(float, CTYPE_float, 0.25f, -2.0f);
    PAIR(double, CTYPE_double, 1e100, -0.0);
    PAIR(long double, CTYPE_ldouble, -1.5L, 1024.0L);
    PAIR(void *, CTYPE_pointer, (void *)(uintptr_t)0x10, (void *)(uintptr_t)0xdeadbeef);
    C4SNetOut(hnd, 2, out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
              out[8], out[9], out[10], out[11]);
    return hnd;
}
