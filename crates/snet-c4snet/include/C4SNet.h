/*
 * C4SNet.h -- the C box language interface of S-Net (snet implementation).
 *
 * Source compatible with the classic runtime's header: box code written against it
 * compiles unchanged. See SNET-LANGUAGE.md section 12.
 *
 * A box `box NAME ((l1, ..., ln) -> ...)` is the C function
 *
 *     void *NAME(void *hnd, T1 a1, ..., Tn an);
 *
 * with one parameter per input label in written order (`c4snet_data_t *` for fields,
 * `int` for tags and binding tags). It emits records with C4SNetOut(hnd, variant, ...)
 * and returns `hnd`.
 *
 * What box authors may assume about concurrency:
 *  - A box function may run on several worker threads at once (different records of
 *    the same box included). Globals the box writes must be protected by the box.
 *  - `hnd` is valid only during the call it was passed to, and only on that thread:
 *    call C4SNetOut from the thread running the box, before the box returns.
 *  - C4SNetFree and C4SNetShallowCopy are atomic: objects may be shared between
 *    threads and released from any thread. All other functions below are thread-safe
 *    as long as no other thread writes the same object's contents.
 *  - Objects received as arguments may be shared with other records that are being
 *    processed concurrently: modify an object in place only if you know it is not
 *    shared (for example, one you created yourself).
 */
#ifndef C4SNET_H
#define C4SNET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque, reference-counted data object. */
typedef struct cdata c4snet_data_t;

/* Element types; the enumerator values are part of the ABI. */
typedef enum {
    CTYPE_uchar,    /*  0  unsigned char  */
    CTYPE_char,     /*  1  signed char    */
    CTYPE_ushort,   /*  2  unsigned short */
    CTYPE_short,    /*  3  short          */
    CTYPE_uint,     /*  4  unsigned int   */
    CTYPE_int,      /*  5  int            */
    CTYPE_ulong,    /*  6  unsigned long  */
    CTYPE_long,     /*  7  long           */
    CTYPE_float,    /*  8  float          */
    CTYPE_double,   /*  9  double         */
    CTYPE_ldouble,  /* 10  long double    */
    CTYPE_pointer   /* 11  void *         */
} c4snet_type_t;

/* Distribution layers of the classic runtime (kept for source compatibility only). */
typedef enum {
    nodist = 0,
    mpi,
    scc,
    zmq
} snet_distrib_t;

/* New object with reference count 1 and `size` elements (size == 1: a scalar); `*data`
 * receives a pointer to the element storage. */
c4snet_data_t *C4SNetAlloc(c4snet_type_t type, size_t size, void **data);
/* As C4SNetAlloc, then copies size * sizeof(type) bytes from `data`. */
c4snet_data_t *C4SNetCreate(c4snet_type_t type, size_t size, const void *data);
/* Releases one reference (atomic); the storage is freed with the last one. */
void           C4SNetFree(c4snet_data_t *ptr);
/* Adds one reference (atomic) and returns `ptr`. */
c4snet_data_t *C4SNetShallowCopy(c4snet_data_t *ptr);
/* New object (count 1) with a copy of the contents; scalars stay scalars. */
c4snet_data_t *C4SNetDeepCopy(c4snet_data_t *ptr);
/* Size in bytes of one element. */
int            C4SNetSizeof(c4snet_data_t *data);
/* Number of elements (1 for a scalar). */
size_t         C4SNetArraySize(c4snet_data_t *data);
/* Pointer to the element storage, valid while the caller holds a reference. */
void          *C4SNetGetData(c4snet_data_t *ptr);
/* Element type. */
c4snet_type_t  C4SNetGetType(c4snet_data_t *data);
/* char/uchar objects only: a malloc'ed, NUL-terminated copy; release it with free(). */
char          *C4SNetGetString(c4snet_data_t *data);
/* Emits a record of output variant `variant` (1-based) with one argument per label of
 * that variant in written order; takes over one reference per field argument. */
void           C4SNetOut(void *hnd, int variant, ...);

/* Runtime-internal registration in the classic runtime; a no-op here. */
void           C4SNetInit(int id, snet_distrib_t distImpl);

#ifdef __cplusplus
}
#endif

#endif /* C4SNET_H */
