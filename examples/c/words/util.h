#ifndef UTIL_H
#define UTIL_H

#include <bool.h>

bool is_blank(char c);
char to_upper(char c);

#endif
