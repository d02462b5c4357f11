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

/// syncfs(2): flushes the whole file system that holds fd. glibc declares it only with
/// _GNU_SOURCE, which Swift's import does not set. Fails with ENOSYS where it does not exist.
int cshim_syncfs(int fd);

/// Takes or releases an open-file-description lock (F_OFD_SETLK / F_OFD_SETLKW) on the
/// whole file. These locks belong to the open file, not the process, so they exclude
/// other threads of the same process too; Swift cannot import the F_OFD_* constants.
/// `mode` is 0 to unlock, 1 for a shared lock, 2 for an exclusive one.
int cshim_ofd_lock(int fd, int mode, int wait);
/// Whether a lock that an exclusive lock on the whole file would conflict with is held
/// on it through another open file description (`F_OFD_GETLK`): 1 when one is, 0 when
/// none is, -1 with `errno` set on failure (`ENOSYS` where there are no such locks to
/// ask about, as on macOS). Needs no write access.
int cshim_ofd_lock_held(int fd);

/// `O_PATH` where there is one (a descriptor that only names a file, opened without
/// permission to read it), else `O_RDONLY`.
int cshim_path_only_flag(void);

/// open(2) and openat(2) with a mode: the C functions are variadic, which Swift cannot call.
int cshim_openat(int dirfd, const char *path, int flags, mode_t mode);

/// openat(2) of `path` beneath the directory `dirfd` that never passes through a symbolic
/// link, in any component, the last one included (it fails with ELOOP instead).
///
/// On Linux this is openat2(2) with RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, which
/// glibc does not wrap and whose structure Swift cannot import; on kernels before 5.6 and
/// elsewhere the path is walked one component at a time with O_NOFOLLOW (on macOS,
/// O_NOFOLLOW_ANY does the same in one call).
int cshim_openat_beneath(int dirfd, const char *path, int flags, mode_t mode);

/// What fstat(2) or fstatat(2) with AT_SYMLINK_NOFOLLOW tells of a file, in the
/// kinds the file layer distinguishes. `kind`: 0 regular file, 1 directory,
/// 2 symbolic link, 3 anything else (FIFO, socket, device).
struct cshim_status {
    int kind;
    long long size;
    unsigned long long device;
    unsigned long long inode;
    unsigned long long links;
    long long modified_seconds;
    long long modified_nanoseconds;
    long long changed_seconds;
    long long changed_nanoseconds;
};

/// fstatat(2) of `name` in `dirfd`, never following a symbolic link.
int cshim_fstatat_nofollow(int dirfd, const char *name, struct cshim_status *status);

/// fstat(2) of an open descriptor.
int cshim_fstat(int fd, struct cshim_status *status);

/// The entries of the open directory `fd`, from its beginning (it is left open; on Linux
/// it is rewound with lseek(2) and read with getdents64(2), elsewhere a duplicate is read
/// with readdir(3)). For each entry other than `.` and `..`, `visit` is called with its
/// name and kind as above (4 when the file system does not say). Returns 0, or -1 with errno.
int cshim_list_directory(int fd, void *context, void (*visit)(void *context, const char *name, int kind));

/// The device numbers of a file system: whether it is mounted read-only (statvfs(2)).
/// Returns 1 when read-only, 0 when writable, -1 with errno on failure.
int cshim_is_read_only(int fd);

/// What the summary cache compares of a file to know it unchanged: its identity, type
/// and permissions, size, and both times in nanoseconds since 1970. The change time
/// (`st_ctim`) is set by the kernel on every change and cannot be set by anyone.
struct cshim_stamp {
    unsigned long long device;
    unsigned long long inode;
    unsigned int mode;
    unsigned int links;
    long long size;
    long long modified;
    long long changed;
};

/// fstatat(2) of `path` (which may name a file inside a subfolder of `dirfd`) with
/// AT_SYMLINK_NOFOLLOW, as a stamp. Returns 0, or -1 with errno.
int cshim_stamp_at(int dirfd, const char *path, struct cshim_stamp *stamp);

/// fstat(2) of an open descriptor, as a stamp. Returns 0, or -1 with errno.
int cshim_stamp_fd(int fd, struct cshim_stamp *stamp);

/// The entries of the open directory `fd`, read with getdents64(2) from its current
/// offset, written into `buffer` as one record per entry other than `.` and `..`: a kind
/// byte ('r' regular, 'd' directory, 'l' link, 's' special, 'u' unknown), the name, and
/// a NUL. Returns the bytes written, or -1 with errno (ERANGE when `capacity` is too
/// small). On systems without getdents64 it returns -1 with ENOSYS.
long cshim_listing(int fd, char *buffer, unsigned long capacity);

/// The type of the file system that holds `fd` (fstatfs(2)'s `f_type`, a magic number
/// such as 0xEF53 for ext2/3/4). Returns -1 with errno on failure, and with ENOSYS on
/// systems without fstatfs.
long long cshim_file_system_type(int fd);

/// The soft limit of open file descriptors (getrlimit(2)'s RLIMIT_NOFILE), or -1 when it
/// cannot be read or is unlimited.
long long cshim_open_file_limit(void);

/// The kernel's clocks, in nanoseconds: CLOCK_REALTIME_COARSE (the clock that stamps
/// files), CLOCK_REALTIME and CLOCK_BOOTTIME (CLOCK_MONOTONIC where there is none).
void cshim_clocks(long long *coarse, long long *realtime, long long *boottime);

/// Flushes the C library's standard output stream, which Swift's `print` writes through
/// (Swift 6 cannot name `stdout` outside the main actor). Returns 0 when everything written
/// to it has reached the descriptor; else the errno of the write that failed now, or -1
/// when an earlier write failed.
int cshim_flush_stdout(void);

#endif
