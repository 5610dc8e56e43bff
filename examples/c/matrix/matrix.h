#ifndef MATRIX_H
#define MATRIX_H

#include <C4SNet.h>

void *gen(void *hnd, int n);
void *transpose(void *hnd, c4snet_data_t *a, int n);
void *mult(void *hnd, c4snet_data_t *a, c4snet_data_t *b, int n);
void *trace(void *hnd, c4snet_data_t *c, int n);

#endif
