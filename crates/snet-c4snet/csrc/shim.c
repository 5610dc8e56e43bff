/*
 * The C4SNet shim: the C entry points box code calls, forwarding to the Rust runtime
 * through a table of function pointers installed after the library is loaded (so the
 * library needs no symbols from the executable), and the variadic C4SNetOut, decoded
 * with the label kinds of the chosen output variant.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "snet_c4snet_internal.h"

/* The compute node id of distributed S-Net; always 0 here. Some boxes declare it; box
 * code written for the classic runtime's non-distributed build (which does not define
 * it) may define it itself, so this definition is weak and gives way to theirs. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((weak))
#endif
int node_location = 0;

static snet_c4snet_api snet_c4snet_rt;

int snet_c4snet_install(const snet_c4snet_api *api)
{
    if (api->version != SNET_C4SNET_API_VERSION) {
        return -1;
    }
    snet_c4snet_rt = *api;
    return 0;
}

c4snet_data_t *C4SNetAlloc(c4snet_type_t type, size_t size, void **data)
{
    return snet_c4snet_rt.alloc((int)type, size, data);
}

c4snet_data_t *C4SNetCreate(c4snet_type_t type, size_t size, const void *data)
{
    return snet_c4snet_rt.create((int)type, size, data);
}

/* Whether `p` (not NULL) looks like a value: its header holds a type and a scalar flag a
 * value can have. A best-effort check of what box code hands back as a value; a pointer
 * into unmapped memory faults here, inside the box's call, where the crash handler
 * still names the box. */
static int snet_c4snet_is_value(const void *p)
{
    const snet_c4snet_value_header *h = (const snet_c4snet_value_header *)p;
    return h->type < snet_c4snet_rt.ntypes && h->scalar <= 1;
}

void C4SNetFree(c4snet_data_t *ptr)
{
    if (ptr != NULL && !snet_c4snet_is_value(ptr)) {
        snet_c4snet_rt.bad_free(ptr);
        return;
    }
    snet_c4snet_rt.release(ptr);
}

c4snet_data_t *C4SNetShallowCopy(c4snet_data_t *ptr)
{
    return snet_c4snet_rt.shallow_copy(ptr);
}

c4snet_data_t *C4SNetDeepCopy(c4snet_data_t *ptr)
{
    return snet_c4snet_rt.deep_copy(ptr);
}

int C4SNetSizeof(c4snet_data_t *data)
{
    return snet_c4snet_rt.size_of(data);
}

size_t C4SNetArraySize(c4snet_data_t *data)
{
    return snet_c4snet_rt.array_size(data);
}

void *C4SNetGetData(c4snet_data_t *ptr)
{
    return snet_c4snet_rt.get_data(ptr);
}

c4snet_type_t C4SNetGetType(c4snet_data_t *data)
{
    return (c4snet_type_t)snet_c4snet_rt.get_type(data);
}

char *C4SNetGetString(c4snet_data_t *data)
{
    return snet_c4snet_rt.get_string(data);
}

void C4SNetInit(int id, snet_distrib_t distImpl)
{
    (void)id;
    (void)distImpl;
}

/* Values of up to this many labels are collected on the stack. (The shim is C89, so
 * that any dialect the user selects with --cflags compiles it.) */
#define SNET_C4SNET_STACK_SLOTS 32

/* C4SNetOut's body; returns `hnd`. */
static void *snet_c4snet_out(void *hnd, int variant, va_list ap)
{
    const snet_c4snet_box *box;
    const snet_c4snet_variant *v;
    snet_c4snet_slot stack_slots[SNET_C4SNET_STACK_SLOTS];
    snet_c4snet_slot *slots = stack_slots;
    int i;

    /* Spec 12.4: only the running invocation's handle, on the thread running it (a
     * handle kept from an earlier call points to memory that is gone). Checked before
     * the handle is read. */
    if (hnd != snet_c4snet_rt.current()) {
        snet_c4snet_rt.bad_handle(hnd);
        return hnd;
    }
    box = ((const snet_c4snet_invocation *)hnd)->box;
    if (variant < 1 || variant > box->nvariants) {
        snet_c4snet_rt.bad_variant(hnd, variant);
        return hnd;
    }
    v = &box->variants[variant - 1];
    if (v->nlabels > SNET_C4SNET_STACK_SLOTS) {
        slots = malloc((size_t)v->nlabels * sizeof *slots);
        if (slots == NULL) {
            abort();
        }
    }
    ((snet_c4snet_invocation *)hnd)->checking = 1;
    for (i = 0; i < v->nlabels; i++) {
        if (v->kinds[i] == SNET_C4SNET_FIELD) {
            slots[i].field = va_arg(ap, c4snet_data_t *);
            if (slots[i].field != NULL && !snet_c4snet_is_value(slots[i].field)) {
                ((snet_c4snet_invocation *)hnd)->checking = 0;
                snet_c4snet_rt.bad_value(hnd, variant, i + 1, slots[i].field);
                if (slots != stack_slots) {
                    free(slots);
                }
                return hnd;
            }
        } else {
            slots[i].tag = va_arg(ap, int);
        }
    }
    ((snet_c4snet_invocation *)hnd)->checking = 0;
    snet_c4snet_rt.emit(hnd, variant, v->nlabels, slots);
    if (slots != stack_slots) {
        free(slots);
    }
    return hnd;
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__) && defined(__x86_64__)
/* C4SNetOut is declared void; old box code that forgets `return hnd;` after its last
 * C4SNetOut returns whatever C4SNetOut left in the return register. So this function
 * returns `hnd`, and C4SNetOut is an assembler alias of it (a C alias between a void
 * and a void * function draws a compiler warning). A box that returns NULL is an error
 * (spec 12.3), reported by the runtime. */
void *snet_c4snet_out_returning_hnd(void *hnd, int variant, ...);
void *snet_c4snet_out_returning_hnd(void *hnd, int variant, ...)
{
    va_list ap;
    void *r;

    va_start(ap, variant);
    r = snet_c4snet_out(hnd, variant, ap);
    va_end(ap);
    return r;
}
__asm__(".globl C4SNetOut\n"
        ".type C4SNetOut, @function\n"
        ".set C4SNetOut, snet_c4snet_out_returning_hnd\n");
#else
void C4SNetOut(void *hnd, int variant, ...)
{
    va_list ap;

    va_start(ap, variant);
    (void)snet_c4snet_out(hnd, variant, ap);
    va_end(ap);
}
#endif
