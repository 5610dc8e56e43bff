#ifndef COUNT_H
#define COUNT_H

#include "C4SNet.h"

void *count(void *hnd, c4snet_data_t *word, int pos);

#endif
