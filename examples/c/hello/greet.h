#ifndef GREET_H
#define GREET_H

#include <C4SNet.h>

void *greet(void *hnd, c4snet_data_t *name);

#endif
