/* exec/rmtree.h — removing a folder of the work directory with all it holds. */
#ifndef ZC_EXEC_RMTREE_H
#define ZC_EXEC_RMTREE_H

/* Remove path and everything under it (best effort; symlinks are not followed). */
void exec_rm_tree(const char *path);

#endif
