#ifndef SPLIT_H
#define SPLIT_H

#include <C4SNet.h>

void *split(void *hnd, c4snet_data_t *text);

#endif
