//! Symmetric stack switching: the one piece of the task layer written in assembly.
//!
//! A task's execution context is its stack plus one saved stack pointer. [`switch`]
//! saves the callee-saved registers of the running context on its own stack, stores
//! its stack pointer, loads another context's stack pointer and restores that
//! context's registers: any context can switch to any other (task → task, task →
//! worker, worker → task), unlike a coroutine library's resume/suspend pair, where a
//! suspension always returns to the resumer. A task that blocks can therefore switch
//! straight to the next ready task of its worker — one switch per hand-over instead
//! of two, and no pass through the worker loop (seed 001's ring: send, switch,
//! receive).
//!
//! Every context that is switched away from is suspended inside [`switch`], so a
//! switch always "returns" to the instruction after the `call` of another
//! suspended `switch` — the same return address in the common case of tasks that
//! block in the same place, which keeps the CPU's return-address prediction right
//! (a resume/suspend pair returns across contexts twice per hand-over, and both
//! returns mispredict).
//!
//! A new context starts in [`trampoline`], which calls the entry function with the
//! value passed to the first switch and the data pointer given to [`init`]. The
//! entry function must never return: a finished context switches away for the last
//! time, and its stack is then free.
//!
//! Only the registers the C ABI makes callee-saved are kept (x86-64 System V: rbx,
//! rbp, r12–r15; AArch64: x19–x29, the link register, d8–d15). The floating-point
//! control words (MXCSR, x87 control word, FPCR) are not switched: tasks share the
//! worker thread's, as they did with the coroutine library this replaces.

#[cfg(not(any(
    all(target_arch = "x86_64", not(windows)),
    all(target_arch = "aarch64", not(windows))
)))]
compile_error!("snet-lpel's stack switch is written for x86-64 and AArch64 (not Windows)");

/// Bytes of the initial frame [`init`] writes below a stack's top.
#[cfg(target_arch = "x86_64")]
const INIT_FRAME: usize = 72;
#[cfg(target_arch = "aarch64")]
const INIT_FRAME: usize = 176;

/// Saves the running context's callee-saved registers on its stack and its stack
/// pointer in `*save`, then resumes the context whose saved stack pointer is `to`;
/// `arg` becomes the return value of the `switch` call the resumed context is
/// suspended in (or the first argument of its entry function, if it is new). Returns
/// when some context switches back to the one that called it, with that switch's
/// `arg`.
///
/// # Safety
///
/// `to` is the stack pointer saved by a switch away from a context that has not been
/// resumed since (or one made by [`init`] and never resumed); that context's stack
/// is alive, and nothing else runs on it. `save` is valid for a write. Rust frames
/// on the suspended stack stay borrowed: the context must eventually be resumed, or
/// its stack abandoned only when it holds nothing that needs dropping.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub(crate) unsafe extern "C" fn switch(save: *mut *mut u8, to: *mut u8, arg: usize) -> usize {
    core::arch::naked_asm!(
        "push rbp",
        "push rbx",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "mov [rdi], rsp",
        "mov rsp, rsi",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        "mov rax, rdx",
        "ret",
    )
}

/// First code of a new context (x86-64): `init` left the entry function in r12 and
/// its data pointer in r13; the first switch's `arg` arrives in rax. The stack is
/// 16-byte aligned here, as a call requires. `.cfi_undefined rip` ends backtraces
/// and unwinding at this frame.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn trampoline() -> ! {
    core::arch::naked_asm!(
        ".cfi_startproc",
        ".cfi_undefined rip",
        "mov rdi, rax",
        "mov rsi, r13",
        "call r12",
        "ud2",
        ".cfi_endproc",
    )
}

/// See the x86-64 [`switch`].
///
/// # Safety
///
/// As for the x86-64 [`switch`].
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
pub(crate) unsafe extern "C" fn switch(save: *mut *mut u8, to: *mut u8, arg: usize) -> usize {
    core::arch::naked_asm!(
        "sub sp, sp, #176",
        "stp x29, x30, [sp, #0]",
        "stp x19, x20, [sp, #16]",
        "stp x21, x22, [sp, #32]",
        "stp x23, x24, [sp, #48]",
        "stp x25, x26, [sp, #64]",
        "stp x27, x28, [sp, #80]",
        "stp d8, d9, [sp, #96]",
        "stp d10, d11, [sp, #112]",
        "stp d12, d13, [sp, #128]",
        "stp d14, d15, [sp, #144]",
        "mov x9, sp",
        "str x9, [x0]",
        "mov sp, x1",
        "ldp x29, x30, [sp, #0]",
        "ldp x19, x20, [sp, #16]",
        "ldp x21, x22, [sp, #32]",
        "ldp x23, x24, [sp, #48]",
        "ldp x25, x26, [sp, #64]",
        "ldp x27, x28, [sp, #80]",
        "ldp d8, d9, [sp, #96]",
        "ldp d10, d11, [sp, #112]",
        "ldp d12, d13, [sp, #128]",
        "ldp d14, d15, [sp, #144]",
        "add sp, sp, #176",
        "mov x0, x2",
        "ret",
    )
}

/// First code of a new context (AArch64): `init` left the entry function in x19 and
/// its data pointer in x20; the first switch's `arg` is already in x0.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
unsafe extern "C" fn trampoline() -> ! {
    core::arch::naked_asm!(
        ".cfi_startproc",
        ".cfi_undefined x30",
        "mov x1, x20",
        "blr x19",
        "brk #1",
        ".cfi_endproc",
    )
}

/// The entry function of a context: receives the first switch's `arg` and the data
/// pointer given to [`init`]; must never return (it ends with a switch away).
pub(crate) type Entry = unsafe extern "C" fn(arg: usize, data: *mut u8) -> !;

/// Writes the initial frame of a new context below `top` (the highest address of
/// its stack) and returns its stack pointer, to be passed to [`switch`].
///
/// # Safety
///
/// `top` is 16-byte aligned and at least [`INIT_FRAME`] bytes of writable stack lie
/// below it, which nothing else uses.
pub(crate) unsafe fn init(top: *mut u8, entry: Entry, data: *mut u8) -> *mut u8 {
    debug_assert_eq!(top as usize % 16, 0);
    let sp = top.wrapping_sub(INIT_FRAME).cast::<usize>();
    #[cfg(target_arch = "x86_64")]
    let words: [usize; 9] = [
        0,                                // r15
        0,                                // r14
        data as usize,                    // r13
        entry as *const () as usize,      // r12
        0,                                // rbx
        0,                                // rbp (ends frame-pointer chains)
        trampoline as *const () as usize, // return address of the first switch
        0,                                // padding: rsp ≡ 0 (mod 16) in the trampoline
        0,
    ];
    #[cfg(target_arch = "aarch64")]
    let words: [usize; 22] = {
        let mut w = [0usize; 22];
        w[1] = trampoline as *const () as usize; // x30: where the first switch's `ret` goes
        w[2] = entry as *const () as usize; // x19
        w[3] = data as usize; // x20
        w
    };
    // SAFETY: caller contract: the frame lies in the stack below `top`, aligned
    // (`top - INIT_FRAME` is 8-byte aligned on x86-64, 16-byte on AArch64).
    unsafe { sp.copy_from_nonoverlapping(words.as_ptr(), words.len()) };
    sp.cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bare context on a heap buffer: switches in and out of it and checks that
    /// values pass both ways and that locals on both stacks survive the switches.
    #[test]
    fn contexts_switch_both_ways_and_keep_their_state() {
        struct Shared {
            main_sp: *mut u8,
            ctx_sp: *mut u8,
            seen: Vec<usize>,
        }
        unsafe extern "C" fn entry(arg: usize, data: *mut u8) -> ! {
            let sh = data.cast::<Shared>();
            let mut acc = arg;
            for i in 0..5usize {
                // SAFETY: `sh` outlives the context; main is suspended while we run.
                unsafe {
                    (*sh).seen.push(acc);
                    let got = switch(&mut (*sh).ctx_sp, (*sh).main_sp, acc * 10 + i);
                    acc = got + i;
                }
            }
            // SAFETY: as above; this is the last switch away.
            unsafe {
                switch(&mut (*sh).ctx_sp, (*sh).main_sp, usize::MAX);
            }
            unreachable!("a finished context was resumed");
        }
        let mut stack = vec![0u128; 4096]; // 64 KiB, 16-byte aligned
        let top = stack.as_mut_ptr_range().end.cast::<u8>();
        let mut sh = Shared {
            main_sp: std::ptr::null_mut(),
            ctx_sp: std::ptr::null_mut(),
            seen: Vec::new(),
        };
        let shp: *mut Shared = &mut sh;
        // SAFETY: the buffer is ours, aligned and large; the context ends before the
        // buffer is freed.
        unsafe {
            (*shp).ctx_sp = init(top, entry, shp.cast());
        }
        let mut outs = Vec::new();
        let mut v = 7usize;
        loop {
            // SAFETY: the context is suspended (or new) and its stack alive.
            let r = unsafe { switch(&mut (*shp).main_sp, (*shp).ctx_sp, v) };
            if r == usize::MAX {
                break;
            }
            outs.push(r);
            v = r + 1;
        }
        // seen: 7, then (r+1)+i for each round; outs: acc*10+i.
        assert_eq!(sh.seen, vec![7, 71, 713, 7135, 71357]);
        assert_eq!(outs, vec![70, 711, 7132, 71353, 713574]);
        drop(stack);
    }
}
