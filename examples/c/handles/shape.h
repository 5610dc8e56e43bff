#ifndef SHAPE_H
#define SHAPE_H

#include <C4SNet.h>

struct shape {
    int sides;
    double length;
};

void *pack(void *hnd, int k);
void *unpack(void *hnd, c4snet_data_t *h, c4snet_data_t *ptr);

#endif
