#define _GNU_SOURCE
#include "CSystemShims.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

int cshim_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#elif defined(__APPLE__)
    // renameatx_np with RENAME_EXCL is macOS's equivalent of RENAME_NOREPLACE.
    extern int renameatx_np(int, const char *, int, const char *, unsigned int);
    return renameatx_np(olddirfd, oldpath, newdirfd, newpath, flags ? 0x00000004 : 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cshim_ofd_lock(int fd, int mode, int wait) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = mode == 0 ? F_UNLCK : (mode == 1 ? F_RDLCK : F_WRLCK);
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;
#ifdef F_OFD_SETLK
    return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
#else
    return fcntl(fd, wait ? F_SETLKW : F_SETLK, &lock);
#endif
}

int cshim_openat(int dirfd, const char *path, int flags, mode_t mode) {
    return openat(dirfd, path, flags, mode);
}
