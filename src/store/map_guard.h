/* store/map_guard.h — turning SIGBUS on a mapped file that another program
 * cut short into a flag the reader checks (how and why: map_guard.c). */
#ifndef ZC_STORE_MAP_GUARD_H
#define ZC_STORE_MAP_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define MAP_GUARD_SLOTS 8192 /* live guarded mappings (the fs store maps at most this many) */

/* Register a live mapping; installs the SIGBUS handler on first use. Returns
 * its slot, or -1 (no free slot, or no handler): then do not map. */
int map_guard_add(const void *addr, size_t len);
/* Forget a slot (before the mapping is unmapped); -1 is a no-op. */
void map_guard_remove(int slot);
/* The slot's flag: true once a fault inside the mapping was turned into zeros. */
const atomic_bool *map_guard_flag(int slot);
/* Faults turned into zero pages so far, process-wide (for tests). */
unsigned map_guard_faults(void);

#endif
