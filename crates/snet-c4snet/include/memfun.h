/*
 * memfun.h -- minimal memory helpers of the classic S-Net runtime, for box sources that
 * include it. Defined inline, so they add no exported symbols.
 */
#ifndef SNET_MEMFUN_H
#define SNET_MEMFUN_H

#include <stdlib.h>

static inline void *SNetMemAlloc(size_t size)
{
    return malloc(size);
}

static inline void *SNetMemResize(void *ptr, size_t size)
{
    return realloc(ptr, size);
}

static inline void SNetMemFree(void *ptr)
{
    free(ptr);
}

#endif /* SNET_MEMFUN_H */
