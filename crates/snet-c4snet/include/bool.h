/*
 * bool.h -- the classic S-Net runtime's boolean header: `bool` as `int`, `true` = 1,
 * `false` = 0, unless <stdbool.h> (or C23, where they are keywords) already provides them.
 */
#ifndef SNET_BOOL_H
#define SNET_BOOL_H

#if !defined(__cplusplus) && !defined(__bool_true_false_are_defined) \
    && !(defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L)
#ifndef bool
#define bool int
#endif
#ifndef true
#define true 1
#endif
#ifndef false
#define false 0
#endif
#endif

#endif /* SNET_BOOL_H */
