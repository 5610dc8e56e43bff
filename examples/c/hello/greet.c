#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "greet.h"

/* box greet((name) -> (msg)): msg = "Hello, <name>!" as a char array (no NUL). */
void *greet(void *hnd, c4snet_data_t *name)
{
    char *who = C4SNetGetString(name);
    size_t n = strlen(who) + sizeof("Hello, !");
    char *text = malloc(n);
    int len = snprintf(text, n, "Hello, %s!", who);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, (size_t)len, text));
    free(text);
    free(who);
    C4SNetFree(name);
    return hnd;
}
