/* exec/spawn.h — running a command (sbatch, squeue) and keeping what it printed. */
#ifndef ZC_EXEC_SPAWN_H
#define ZC_EXEC_SPAWN_H

#include <stddef.h>

/* Run argv (searched in PATH) with stdout and stderr into out (NUL-terminated,
 * cut at size - 1). Returns its exit status (>= 0), or < 0 if it could not run. */
int exec_spawn(const char *const *argv, char *out, size_t size);

#endif
