/*
 * Internal interface between the C shim, the generated per-box wrappers and the Rust
 * runtime. Not for box authors. Every name is prefixed `snet_c4snet_` so that it cannot
 * clash with box function names.
 */
#ifndef SNET_C4SNET_INTERNAL_H
#define SNET_C4SNET_INTERNAL_H

#include "C4SNet.h"

/* Label kinds in an output variant (must match Rust `SlotKind`). */
#define SNET_C4SNET_FIELD 0
#define SNET_C4SNET_TAG 1

/* One box argument or emitted value: a field (object pointer, may be NULL) or a tag. */
typedef union {
    c4snet_data_t *field;
    int tag;
} snet_c4snet_slot;

/* One output variant: its labels' kinds in written order. */
typedef struct {
    int nlabels;
    const unsigned char *kinds;
} snet_c4snet_variant;

/* Calls the user's box function with unpacked arguments; returns what it returned
 * (spec 12.3: its handle `hnd`). */
typedef void *(*snet_c4snet_call_fn)(void *hnd, const snet_c4snet_slot *args);

/* One box: its name, wrapper, the user's function (NULL if no symbol was found), its
 * input label kinds and output variants. */
typedef struct {
    const char *name;
    snet_c4snet_call_fn call;
    void (*user_fn)(void);
    int ninputs;
    const unsigned char *input_kinds;
    int nvariants;
    const snet_c4snet_variant *variants;
} snet_c4snet_box;

/* The invocation handle `hnd`: Rust's invocation context starts with this header.
 * `checking` is set while C4SNetOut checks the values it was given (the crash handler
 * then says where a fault came from). */
typedef struct {
    const snet_c4snet_box *box;
    int checking;
} snet_c4snet_invocation;

/* The first bytes of every value (Rust's `Object`, `repr(C)`): its element type (one of
 * the runtime's `ntypes` `c4snet_type_t` values) and its scalar flag (0 or 1). What
 * C4SNetOut and C4SNetFree check of a value they are given: a stray pointer, or a value
 * missing from C4SNetOut's arguments, is refused with the box named, or faults while the
 * box is still named. */
typedef struct {
    unsigned int type;
    unsigned char scalar;
} snet_c4snet_value_header;

/* Entry points implemented in Rust, installed after the library is loaded. */
typedef struct {
    unsigned int version;
    /* The number of value types: a value's header holds a type below it. */
    unsigned int ntypes;
    c4snet_data_t *(*alloc)(int type, size_t size, void **data);
    c4snet_data_t *(*create)(int type, size_t size, const void *data);
    void (*release)(c4snet_data_t *ptr);
    c4snet_data_t *(*shallow_copy)(c4snet_data_t *ptr);
    c4snet_data_t *(*deep_copy)(c4snet_data_t *ptr);
    int (*size_of)(c4snet_data_t *ptr);
    size_t (*array_size)(c4snet_data_t *ptr);
    void *(*get_data)(c4snet_data_t *ptr);
    int (*get_type)(c4snet_data_t *ptr);
    char *(*get_string)(c4snet_data_t *ptr);
    void (*emit)(void *hnd, int variant, int n, const snet_c4snet_slot *values);
    void (*bad_variant)(void *hnd, int variant);
    /* The handle of the invocation this thread is running (NULL: none). */
    void *(*current)(void);
    /* C4SNetOut with a handle that is not the running invocation's. */
    void (*bad_handle)(void *hnd);
    /* C4SNetOut given a field (value `index`, from 1) that is not a value. */
    void (*bad_value)(void *hnd, int variant, int index, const void *ptr);
    /* C4SNetFree given a pointer that is not a value. */
    void (*bad_free)(const void *ptr);
} snet_c4snet_api;

#define SNET_C4SNET_API_VERSION 5u

/* Defined by the shim. */
int snet_c4snet_install(const snet_c4snet_api *api);

/* Defined by the generated wrapper file. */
extern const snet_c4snet_box snet_c4snet_boxes[];
extern const int snet_c4snet_nboxes;

#endif /* SNET_C4SNET_INTERNAL_H */
