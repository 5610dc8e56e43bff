/*
 * memfun.h -- minimal memory helpers of the classic S-Net runtime, for box sources that
 * include it. Defined inline, so they add no exported symbols.
 */
#ifndef SNET_MEMFUN_H
#define SNET_MEMFUN_H

#include <stdlib.h>

#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define SNET_MEMFUN_INLINE static inline
#else
#define SNET_MEMFUN_INLINE static __inline__
#endif

SNET_MEMFUN_INLINE void *SNetMemAlloc(size_t size)
{
    return malloc(size);
}

SNET_MEMFUN_INLINE void *SNetMemResize(void *ptr, size_t size)
{
    return realloc(ptr, size);
}

SNET_MEMFUN_INLINE void SNetMemFree(void *ptr)
{
    free(ptr);
}

#endif /* SNET_MEMFUN_H */
