#ifndef CSYSTEMSHIMS_H
#define CSYSTEMSHIMS_H

#include <sys/types.h>

// Flags for cshim_renameat2; the kernel's values, which Swift cannot import from
// <linux/fs.h> without pulling in kernel headers.
#define CSHIM_RENAME_NOREPLACE 1

/// renameat2(2) with flags. glibc before 2.28 has no wrapper, and Swift cannot see the
/// flag macros, so the call goes through syscall(2). On systems without renameat2 it
/// returns -1 with errno ENOSYS.
int cshim_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// Takes or releases an open-file-description lock (F_OFD_SETLK / F_OFD_SETLKW) on the
/// whole file. These locks belong to the open file, not the process, so they exclude
/// other threads of the same process too; Swift cannot import the F_OFD_* constants.
/// `mode` is 0 to unlock, 1 for a shared lock, 2 for an exclusive one.
int cshim_ofd_lock(int fd, int mode, int wait);

/// open(2) and openat(2) with a mode: the C functions are variadic, which Swift cannot call.
int cshim_openat(int dirfd, const char *path, int flags, mode_t mode);

#endif
