/*
 * capi.c -- every function of C4SNet.h (spec 12.2) as classic boxes call it.
 */
#include <C4SNet.h>
#include <stdlib.h>
#include <string.h>

/* Emits its input object twice: first as variant 2 with a second reference
 * (C4SNetShallowCopy), then as variant 1 with the tag negated. Variants in any order. */
void *twice(void *hnd, c4snet_data_t *x, int t)
{
    C4SNetOut(hnd, 2, C4SNetShallowCopy(x));
    C4SNetOut(hnd, 1, x, -t);
    return hnd;
}

/* Releases its input and emits nothing. */
void *drop(void *hnd, c4snet_data_t *z)
{
    C4SNetFree(z);
    return hnd;
}

/* n records; the binding tag is passed as an int like a tag. */
void *many(void *hnd, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        C4SNetOut(hnd, 1, i, -i);
    }
    return hnd;
}

/* Objects made with C4SNetCreate and C4SNetAlloc: scalars (size 1) and arrays. */
void *mk(void *hnd, int k)
{
    int ints[3] = {7, -8, 9};
    c4snet_data_t *a = NULL;
    switch (k) {
    case 0:
        a = C4SNetCreate(CTYPE_int, 0, NULL);
        break;
    case 1:
        a = C4SNetCreate(CTYPE_int, 1, ints);
        break;
    case 2:
        a = C4SNetCreate(CTYPE_int, 3, ints);
        break;
    case 3: {
        double *d;
        a = C4SNetAlloc(CTYPE_double, 2, (void **)&d);
        d[0] = -0.125;
        d[1] = 1048576.0;
        break;
    }
    case 4:
        a = C4SNetCreate(CTYPE_char, strlen("a<b&c,d"), "a<b&c,d");
        break;
    case 5: {
        unsigned long u = (unsigned long)-1;
        a = C4SNetCreate(CTYPE_ulong, 1, &u);
        break;
    }
    case 6: {
        float f = -3.25f;
        a = C4SNetCreate(CTYPE_float, 1, &f);
        break;
    }
    case 7: {
        long double l = -0.375L;
        a = C4SNetCreate(CTYPE_ldouble, 1, &l);
        break;
    }
    case 8: {
        void *p = NULL;
        a = C4SNetCreate(CTYPE_pointer, 1, &p);
        break;
    }
    case 9: {
        unsigned char c = 'Z';
        a = C4SNetCreate(CTYPE_uchar, 1, &c);
        break;
    }
    case 10: {
        char c = '&';
        a = C4SNetCreate(CTYPE_char, 1, &c);
        break;
    }
    case 11: {
        short s[2] = {-32768, 32767};
        a = C4SNetCreate(CTYPE_short, 2, s);
        break;
    }
    case 12: {
        unsigned int *u;
        a = C4SNetAlloc(CTYPE_uint, 1, (void **)&u);
        *u = 4294967295u;
        break;
    }
    case 13: {
        long l[1];
        l[0] = -9223372036854775807L - 1;
        a = C4SNetCreate(CTYPE_long, 1, l);
        break;
    }
    case 14: {
        unsigned short *u;
        a = C4SNetAlloc(CTYPE_ushort, 0, (void **)&u);
        break;
    }
    default:
        return hnd;
    }
    C4SNetOut(hnd, 1, a);
    return hnd;
}

/* Type, element size and element count of its input, which it replaces by a deep copy. */
void *info(void *hnd, c4snet_data_t *w)
{
    c4snet_data_t *copy = C4SNetDeepCopy(w);
    int ty = (int)C4SNetGetType(w);
    int sz = C4SNetSizeof(w);
    int len = (int)C4SNetArraySize(w);
    C4SNetFree(w);
    C4SNetOut(hnd, 1, ty, sz, len, copy);
    return hnd;
}

/* The length of a char or unsigned char object read with C4SNetGetString. */
void *str(void *hnd, c4snet_data_t *s)
{
    char *text = C4SNetGetString(s);
    int n = (int)strlen(text);
    free(text);
    C4SNetOut(hnd, 1, s, n);
    return hnd;
}

/* 17 inputs and 34 outputs: more arguments than fit in the runtime's fixed-size
 * argument buffers. */
void *wide(void *hnd, int i0, int i1, int i2, int i3, int i4, int i5, int i6, int i7, int i8, int i9, int i10, int i11, int i12, int i13, int i14, int i15, int i16)
{
    C4SNetOut(hnd, 1, i0 + 0, i1 + 1, i2 + 2, i3 + 3, i4 + 4, i5 + 5, i6 + 6, i7 + 7, i8 + 8, i9 + 9, i10 + 10, i11 + 11, i12 + 12, i13 + 13, i14 + 14, i15 + 15, i16 + 16, i0 + 17, i1 + 18, i2 + 19, i3 + 20, i4 + 21, i5 + 22, i6 + 23, i7 + 24, i8 + 25, i9 + 26, i10 + 27, i11 + 28, i12 + 29, i13 + 30, i14 + 31, i15 + 32, i16 + 33);
    return hnd;
}
