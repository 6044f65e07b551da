/* store/map_guard.c — mapped files cut short by another program: no SIGBUS.
 *
 * A file mapped for reading (store_map) raises SIGBUS where it is accessed
 * past its end, and another program may truncate it at any moment (a
 * writer rewriting a chunk in place, `truncate`, a careless copy). zcube
 * cannot lock files others write, so it makes such a fault harmless instead:
 *
 *   - every live mapping is registered here (map_guard_add) in a fixed table
 *     of slots: start, length, and a `faulted` flag;
 *   - a SIGBUS handler, installed on the first registration (chaining to the
 *     handler that was there before), looks the faulting address up; inside
 *     a registered mapping it maps a page of zeros over the faulting page
 *     (MAP_FIXED, anonymous, read-only), sets the slot's flag and returns, so
 *     the interrupted code goes on reading zeros;
 *   - readers check the flag (store_map_check) once they are done with the
 *     bytes, before trusting what they decoded, and fail with ZC_EIO naming
 *     the file. The store's table of kept mappings never hands out a
 *     faulted one again.
 *
 * Nothing is jumped over (no siglongjmp out of a decoder holding locks or
 * memory) and reading a mapping costs nothing more. Decoders are hardened
 * against arbitrary bytes (fuzzed), so zeros in place of the lost bytes give
 * an error or garbage that the flag then rejects. A fault outside every
 * registered mapping goes to the previous handler (the default one: the
 * process dies of SIGBUS as it would have).
 *
 * The handler only does async-signal-safe work: atomic loads and stores,
 * mmap (the raw system call) and, for a fault that is not ours, sigaction/raise.
 * ZC_STORE_MAP=0 maps nothing, so no handler is installed. */
#include "store/map_guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
    _Atomic uintptr_t start;  /* first byte of the mapping; 0 = free slot */
    _Atomic size_t len;       /* its length in bytes */
    atomic_bool faulted;      /* a page of it was replaced by zeros */
} guard_slot;

static guard_slot slots[MAP_GUARD_SLOTS];
static atomic_uint hint;          /* where the next search for a free slot starts */
static atomic_uint faults;        /* faults turned into zero pages (for tests) */
static struct sigaction previous; /* the SIGBUS action before ours */
static uintptr_t page_mask;       /* ~(page size - 1), read before the handler exists */
static int installed;             /* 1 if our handler is in place */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* A page of zeros over the faulting page. The system call itself, not
 * mmap(): ThreadSanitizer's mmap interceptor records the range as written by
 * this thread, so other threads still decoding the same chunk would be
 * reported as racing with the kernel's replacement (and a report raised from
 * inside a signal handler can hang the process). */
static void *zero_page(void *page)
{
    size_t len = ~page_mask + 1;
    int prot = PROT_READ, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
#ifdef SYS_mmap
    long r = syscall(SYS_mmap, page, len, prot, flags, -1, 0L);
    return r == -1 ? MAP_FAILED : (void *)r;
#else
    return mmap(page, len, prot, flags, -1, 0);
#endif
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno; /* the interrupted code's, whatever mmap sets */
    uintptr_t a = (uintptr_t)si->si_addr;
    if (si->si_code > 0) /* raised by a fault, not sent */
        for (size_t i = 0; i < MAP_GUARD_SLOTS; i++) {
            uintptr_t s = atomic_load_explicit(&slots[i].start, memory_order_acquire);
            if (!s || a < s || a - s >= atomic_load_explicit(&slots[i].len, memory_order_relaxed)) continue;
            void *page = (void *)(a & page_mask);
            if (zero_page(page) == MAP_FAILED) break;
            atomic_store(&slots[i].faulted, true);
            atomic_fetch_add(&faults, 1);
            errno = saved_errno;
            return; /* the access is made again, and reads zeros */
        }
    /* not ours: what would have happened without us */
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, si, uc);
    } else if (previous.sa_handler != SIG_IGN && previous.sa_handler != SIG_DFL) {
        previous.sa_handler(sig);
    } else if (previous.sa_handler == SIG_DFL) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGBUS, &dfl, NULL);
        if (si->si_code <= 0) raise(SIGBUS); /* sent: deliver it again; a fault recurs by itself */
    }
}

static void install(void)
{
    long psz = sysconf(_SC_PAGESIZE);
    page_mask = ~((uintptr_t)(psz > 0 ? psz : 4096) - 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    installed = sigaction(SIGBUS, &sa, &previous) == 0;
}

int map_guard_add(const void *addr, size_t len)
{
    pthread_once(&once, install);
    if (!installed) return -1;
    unsigned h = atomic_fetch_add_explicit(&hint, 1, memory_order_relaxed);
    for (size_t k = 0; k < MAP_GUARD_SLOTS; k++) {
        size_t i = (h + k) % MAP_GUARD_SLOTS;
        uintptr_t free_start = 0;
        if (atomic_load_explicit(&slots[i].start, memory_order_relaxed)) continue;
        /* claim with a placeholder, fill in, then publish the real start */
        if (!atomic_compare_exchange_strong(&slots[i].start, &free_start, UINTPTR_MAX)) continue;
        atomic_store(&slots[i].faulted, false);
        atomic_store_explicit(&slots[i].len, len, memory_order_relaxed);
        atomic_store_explicit(&slots[i].start, (uintptr_t)addr, memory_order_release);
        return (int)i;
    }
    return -1;
}

void map_guard_remove(int slot)
{
    if (slot < 0) return;
    atomic_store_explicit(&slots[slot].start, 0, memory_order_release);
}

const atomic_bool *map_guard_flag(int slot) { return slot < 0 ? NULL : &slots[slot].faulted; }

unsigned map_guard_faults(void) { return atomic_load(&faults); }
