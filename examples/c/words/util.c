#include "util.h"

bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

char to_upper(char c)
{
    return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
}
