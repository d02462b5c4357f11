#define _GNU_SOURCE
#include "CSystemShims.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <sys/vfs.h>
#endif

int cshim_syncfs(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

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

int cshim_ofd_lock_held(int fd) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;
#ifdef F_OFD_GETLK
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
    return lock.l_type == F_UNLCK ? 0 : 1;
#else
    // F_GETLK does not see this process's own locks, and closing a descriptor of the
    // file would drop them: not asked.
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int cshim_path_only_flag(void) {
#ifdef O_PATH
    return O_PATH;
#else
    return O_RDONLY;
#endif
}

int cshim_openat(int dirfd, const char *path, int flags, mode_t mode) {
    return openat(dirfd, path, flags, mode);
}

// Walks `path` beneath `dirfd` one component at a time, refusing symbolic links.
static int open_by_walking(int dirfd, const char *path, int flags, mode_t mode) {
    size_t length = strlen(path);
    if (length == 0 || path[0] == '/') {
        errno = EINVAL;
        return -1;
    }
    char *copy = strdup(path);
    if (copy == NULL) return -1;
    int current = dirfd;
    char *component = copy;
    int result = -1;
    for (;;) {
        char *slash = strchr(component, '/');
        if (slash == NULL) {
            result = openat(current, component, flags | O_NOFOLLOW, mode);
            break;
        }
        *slash = '\0';
        if (strcmp(component, "..") == 0) {
            errno = EXDEV;
            break;
        }
        int next = *component == '\0' || strcmp(component, ".") == 0
                       ? dup(current)
                       : openat(current, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (current != dirfd) close(current);
        if (next < 0) {
            current = dirfd;
            break;
        }
        current = next;
        component = slash + 1;
    }
    int saved = errno;
    if (current != dirfd) close(current);
    free(copy);
    errno = saved;
    return result;
}

int cshim_openat_beneath(int dirfd, const char *path, int flags, mode_t mode) {
#if defined(__linux__) && defined(SYS_openat2)
    struct {
        uint64_t flags;
        uint64_t mode;
        uint64_t resolve;
    } how;
    how.flags = (uint64_t)(unsigned int)flags;
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = 0x04 /* RESOLVE_NO_SYMLINKS */ | 0x02 /* RESOLVE_NO_MAGICLINKS */;
    long result = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (result >= 0 || errno != ENOSYS) return (int)result;
    return open_by_walking(dirfd, path, flags, mode);
#elif defined(__APPLE__) && defined(O_NOFOLLOW_ANY)
    return openat(dirfd, path, flags | O_NOFOLLOW_ANY, mode);
#else
    return open_by_walking(dirfd, path, flags, mode);
#endif
}

static void fill(const struct stat *st, struct cshim_status *status) {
    switch (st->st_mode & S_IFMT) {
    case S_IFREG: status->kind = 0; break;
    case S_IFDIR: status->kind = 1; break;
    case S_IFLNK: status->kind = 2; break;
    default: status->kind = 3; break;
    }
    status->size = (long long)st->st_size;
    status->device = (unsigned long long)st->st_dev;
    status->inode = (unsigned long long)st->st_ino;
    status->links = (unsigned long long)st->st_nlink;
#if defined(__APPLE__)
    status->modified_seconds = (long long)st->st_mtimespec.tv_sec;
    status->modified_nanoseconds = (long long)st->st_mtimespec.tv_nsec;
    status->changed_seconds = (long long)st->st_ctimespec.tv_sec;
    status->changed_nanoseconds = (long long)st->st_ctimespec.tv_nsec;
#else
    status->modified_seconds = (long long)st->st_mtim.tv_sec;
    status->modified_nanoseconds = (long long)st->st_mtim.tv_nsec;
    status->changed_seconds = (long long)st->st_ctim.tv_sec;
    status->changed_nanoseconds = (long long)st->st_ctim.tv_nsec;
#endif
}

int cshim_fstatat_nofollow(int dirfd, const char *name, struct cshim_status *status) {
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
    fill(&st, status);
    return 0;
}

int cshim_fstat(int fd, struct cshim_status *status) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    fill(&st, status);
    return 0;
}

/// The kind `cshim_list_directory` reports for a directory entry's d_type.
static int entry_kind(unsigned char type) {
    switch (type) {
    case DT_REG: return 0;
    case DT_DIR: return 1;
    case DT_LNK: return 2;
    case DT_UNKNOWN: return 4;
    default: return 3;
    }
}

int cshim_list_directory(int fd, void *context, void (*visit)(void *context, const char *name, int kind)) {
#if defined(__linux__) && defined(SYS_getdents64)
    // getdents64 straight on the descriptor, from its beginning: no duplicate, no DIR
    // stream (which costs a dup, an fstat, an fcntl, a buffer and a close).
    if (lseek(fd, 0, SEEK_SET) < 0) return -1;
    char records[32768] __attribute__((aligned(8)));
    for (;;) {
        long count = syscall(SYS_getdents64, fd, records, sizeof records);
        if (count < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (count == 0) return 0;
        long offset = 0;
        while (offset < count) {
            unsigned short length;
            memcpy(&length, records + offset + 16, sizeof length);
            unsigned char type = (unsigned char)records[offset + 18];
            const char *name = records + offset + 19;
            offset += length;
            if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
            visit(context, name, entry_kind(type));
        }
    }
#else
    int copy = dup(fd);
    if (copy < 0) return -1;
    DIR *directory = fdopendir(copy);
    if (directory == NULL) {
        int saved = errno;
        close(copy);
        errno = saved;
        return -1;
    }
    // fdopendir shares the offset with `fd`: start from the beginning.
    rewinddir(directory);
    for (;;) {
        errno = 0;
        struct dirent *entry = readdir(directory);
        if (entry == NULL) break;
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
        visit(context, name, entry_kind(entry->d_type));
    }
    int saved = errno;
    closedir(directory);
    errno = saved;
    return saved == 0 ? 0 : -1;
#endif
}

int cshim_is_read_only(int fd) {
    struct statvfs info;
    if (fstatvfs(fd, &info) != 0) return -1;
    return (info.f_flag & ST_RDONLY) ? 1 : 0;
}

static void fill_stamp(const struct stat *st, struct cshim_stamp *stamp) {
    stamp->device = (unsigned long long)st->st_dev;
    stamp->inode = (unsigned long long)st->st_ino;
    stamp->mode = (unsigned int)st->st_mode;
    stamp->links = (unsigned int)st->st_nlink;
    stamp->size = (long long)st->st_size;
#if defined(__APPLE__)
    stamp->modified = (long long)st->st_mtimespec.tv_sec * 1000000000LL + st->st_mtimespec.tv_nsec;
    stamp->changed = (long long)st->st_ctimespec.tv_sec * 1000000000LL + st->st_ctimespec.tv_nsec;
#else
    stamp->modified = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
    stamp->changed = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
#endif
}

int cshim_stamp_at(int dirfd, const char *path, struct cshim_stamp *stamp) {
    struct stat st;
    if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
    fill_stamp(&st, stamp);
    return 0;
}

int cshim_stamp_fd(int fd, struct cshim_stamp *stamp) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    fill_stamp(&st, stamp);
    return 0;
}

long cshim_listing(int fd, char *buffer, unsigned long capacity) {
#if defined(__linux__) && defined(SYS_getdents64)
    char records[32768] __attribute__((aligned(8)));
    unsigned long used = 0;
    for (;;) {
        long count = syscall(SYS_getdents64, fd, records, sizeof records);
        if (count < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (count == 0) return (long)used;
        long offset = 0;
        while (offset < count) {
            unsigned short length;
            unsigned char type;
            memcpy(&length, records + offset + 16, sizeof length);
            type = (unsigned char)records[offset + 18];
            const char *name = records + offset + 19;
            offset += length;
            if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
            size_t size = strlen(name);
            if (used + size + 2 > capacity) {
                errno = ERANGE;
                return -1;
            }
            char kind = 'u';
            switch (type) {
            case DT_REG: kind = 'r'; break;
            case DT_DIR: kind = 'd'; break;
            case DT_LNK: kind = 'l'; break;
            case DT_FIFO: case DT_SOCK: case DT_CHR: case DT_BLK: kind = 's'; break;
            default: break;
            }
            buffer[used++] = kind;
            memcpy(buffer + used, name, size + 1);
            used += size + 1;
        }
    }
#else
    (void)fd; (void)buffer; (void)capacity;
    errno = ENOSYS;
    return -1;
#endif
}

long long cshim_file_system_type(int fd) {
#if defined(__linux__)
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return -1;
    return (long long)(unsigned long)info.f_type;
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

long long cshim_open_file_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
    return (long long)limit.rlim_cur;
}

void cshim_clocks(long long *coarse, long long *realtime, long long *boottime) {
    struct timespec ts;
#if defined(CLOCK_REALTIME_COARSE)
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
#else
    clock_gettime(CLOCK_REALTIME, &ts);
#endif
    *coarse = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    clock_gettime(CLOCK_REALTIME, &ts);
    *realtime = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
#if defined(CLOCK_BOOTTIME)
    clock_gettime(CLOCK_BOOTTIME, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    *boottime = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int cshim_flush_stdout(void) {
    if (fflush(stdout) != 0) {
        return errno != 0 ? errno : -1;
    }
    return ferror(stdout) ? -1 : 0;
}
