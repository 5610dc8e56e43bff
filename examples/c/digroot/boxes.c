#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <C4SNet.h>

/* box dsum((<num>, <acc>, <base>=, name=) -> (<num>, <acc>) | (<sum>, name))
 * One digit of num in base base goes into acc; at num == 0 the sum is acc, and the
 * name comes back in upper case as an unsigned char array. base and name are
 * pass-through: variant 1 gets them back from the runtime, so the box releases its
 * reference to name. */
void *dsum(void *hnd, int num, int acc, int base, c4snet_data_t *name)
{
    if (num == 0) {
        char *s = C4SNetGetString(name);
        for (char *p = s; *p; p++)
            *p = (char)toupper((unsigned char)*p);
        C4SNetFree(name);
        C4SNetOut(hnd, 2, acc, C4SNetCreate(CTYPE_uchar, strlen(s), s));
        free(s);
    } else {
        C4SNetFree(name);
        C4SNetOut(hnd, 1, num / base, acc + num % base);
    }
    return hnd;
}

/* box hello( -> (greet)) */
void *hello(void *hnd)
{
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, 5, "hello"));
    return hnd;
}
