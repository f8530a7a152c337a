# A file read through a memory map that shrinks while it is read (truncated or replaced in place by another
# process) makes the next access to a page past its new end raise SIGBUS, which kills the process without a word.
# The text parser reads regular files through a map (llsvm/textio.py, _Scanner._mapped_chunks), so it guards the
# map's address range while it parses:
# - `guard(address, length)` registers the range in a fixed table (16 slots) and, the first time, puts a SIGBUS
#   handler before the process's current one (Python's faulthandler, or the default action).
# - The handler, for a fault inside a guarded range, maps anonymous zero pages over the range from the faulting page
#   to its end (mmap MAP_FIXED, one system call; munmap of the whole map later removes them too), marks the slot and
#   returns: the access is repeated and reads zeros, which the parser refuses as malformed text at once, and the
#   caller, seeing `hit(slot)`, reports the file as changed while it was read (a DataFormatError naming it).
#   For any other SIGBUS the previous action is put back and the fault repeated (or the signal raised again for a
#   SIGBUS sent by kill), as if this handler had never been there.
# - `release(slot)` frees the slot before the map is closed.
# No kernel loop changes: the guard costs nothing until a fault.

cdef extern from *:
    """
    #include <signal.h>
    #include <stdint.h>
    #include <string.h>
    #include <sys/mman.h>
    #include <unistd.h>

    #define LLSVM_GUARDS 16
    static char* volatile llsvm_guard_base[LLSVM_GUARDS];
    static volatile size_t llsvm_guard_len[LLSVM_GUARDS];
    static volatile sig_atomic_t llsvm_guard_hit[LLSVM_GUARDS];
    static struct sigaction llsvm_guard_prev;
    static int llsvm_guard_installed = 0;
    static uintptr_t llsvm_guard_page = 4096;

    static void llsvm_on_sigbus(int sig, siginfo_t* info, void* ctx) {
        char* a = (char*)info->si_addr;
        int i;
        (void)ctx;
        if (info->si_code > 0) {            /* a fault, not a kill(2) */
            for (i = 0; i < LLSVM_GUARDS; i++) {
                char* b = llsvm_guard_base[i];
                size_t n = llsvm_guard_len[i];
                if (b != NULL && a >= b && a < b + n) {
                    char* pg = (char*)((uintptr_t)a & ~(llsvm_guard_page - 1));
                    if (mmap(pg, (size_t)(b + n - pg), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
                            != MAP_FAILED) {
                        llsvm_guard_hit[i] = 1;
                        return;
                    }
                }
            }
        }
        /* not ours: the previous action takes this signal (the fault repeats on return; a sent one is raised) */
        sigaction(SIGBUS, &llsvm_guard_prev, NULL);
        llsvm_guard_installed = 0;
        if (info->si_code <= 0) raise(sig);
    }

    static int llsvm_guard_install(void) {
        struct sigaction act;
        if (llsvm_guard_installed) return 1;
        llsvm_guard_page = (uintptr_t)sysconf(_SC_PAGESIZE);
        memset(&act, 0, sizeof(act));
        act.sa_sigaction = llsvm_on_sigbus;
        sigemptyset(&act.sa_mask);
        act.sa_flags = SA_SIGINFO;
        if (sigaction(SIGBUS, &act, &llsvm_guard_prev) != 0) return 0;
        llsvm_guard_installed = 1;
        return 1;
    }

    /* the slot guarding [address, address + length), or -1 (no free slot, or no handler) */
    static int llsvm_guard(uintptr_t address, size_t length) {
        int i;
        if (!llsvm_guard_install()) return -1;
        for (i = 0; i < LLSVM_GUARDS; i++) {
            if (llsvm_guard_base[i] == NULL) {
                llsvm_guard_hit[i] = 0;
                llsvm_guard_len[i] = length;
                llsvm_guard_base[i] = (char*)address;
                return i;
            }
        }
        return -1;
    }

    static void llsvm_guard_release(int slot) {
        if (slot >= 0 && slot < LLSVM_GUARDS) {
            llsvm_guard_base[slot] = NULL;
            llsvm_guard_len[slot] = 0;
        }
    }

    static int llsvm_guard_was_hit(int slot) {
        return slot >= 0 && slot < LLSVM_GUARDS && llsvm_guard_hit[slot];
    }
    """
    int llsvm_guard(size_t address, size_t length)
    void llsvm_guard_release(int slot)
    int llsvm_guard_was_hit(int slot)


def guard(size_t address, size_t length):
    """Guard the mapped range [address, address + length) against SIGBUS (see above); the slot, or -1 when no slot
    is free (the range is then read unguarded, as before)."""
    return llsvm_guard(address, length)


def release(int slot):
    """Stop guarding the slot's range (before its map is closed); -1 is ignored."""
    llsvm_guard_release(slot)


def hit(int slot):
    """Whether a fault in the slot's range was answered with zero pages: the file shrank while it was read."""
    return bool(llsvm_guard_was_hit(slot))
