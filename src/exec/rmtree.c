/* exec/rmtree.c — exec_rm_tree (rmtree.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "exec/rmtree.h"

#include <ftw.h>
#include <stdio.h>

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void exec_rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
