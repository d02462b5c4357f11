import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `--fresh-file-systems` cannot run here: not root, or a tool it needs is missing, or a
/// loop mount fails. The command exits with ``FreshFileSystems/unavailableExitCode``.
struct FreshFileSystemsUnavailable: Error, CustomStringConvertible {
    var description: String
}

/// Freshly made, journaled ext4 file systems, each on a sparse image file of its own
/// mounted through a loop device (`mkfs.ext4 -q -F`, `mount -o loop`), so that a timed
/// command writes into a file system that has no history: no trees deleted from it
/// before, no inodes freed next to where it allocates.
///
/// Every file system made is unmounted and its image deleted by ``removeAll()``, which
/// also runs on SIGINT, SIGTERM and SIGHUP, after the running command is killed, before
/// the process exits.
final class FreshFileSystems: @unchecked Sendable {
    /// The exit status of the command when fresh file systems cannot be made
    /// (`EX_UNAVAILABLE` of `sysexits.h`).
    static let unavailableExitCode: Int32 = 69

    /// The size of each image: sparse, so only the blocks written take room. A store of
    /// 10,000 documents of 3 revisions (about 100,000 inodes, each file and folder at
    /// most one 4 KiB block: under 400 MB) fits several times over.
    static let imageBytes = 4 << 30
    /// One inode per 8 KiB: 524,288 inodes in each image.
    static let bytesPerInode = 8_192

    private let folder: String
    private let mkfs: String
    private let mount: String
    private let umount: String
    private let lock = NSLock()
    /// Held for the whole of each removal, so that the main thread, when a command it
    /// waited for is killed by the signal handler, waits for the handler's unmounting
    /// (which ends in `exit`) instead of returning while the file systems are mounted.
    private let removal = NSLock()
    private var mounted: [(image: String, mountPoint: String)] = []
    private var serial = 0
    private var signalSources: [DispatchSourceSignal] = []

    /// Checks that the process is root and that `mkfs.ext4`, `mount` and `umount` are
    /// present, then makes, mounts and removes one small file system under `folder` to
    /// check that loop mounts work.
    ///
    /// - Throws: `FreshFileSystemsUnavailable` when any of it fails.
    init(folder: String) throws {
        guard geteuid() == 0 else {
            throw FreshFileSystemsUnavailable(
                description:
                    "--fresh-file-systems mounts loop devices and must run as root (euid is \(geteuid()))")
        }
        let search = { (name: String) -> String? in
            findExecutable(name)
                ?? ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map { $0 + "/" + name }.first {
                    FileManager.default.isExecutableFile(atPath: $0)
                }
        }
        var tools: [String] = []
        for name in ["mkfs.ext4", "mount", "umount"] {
            guard let path = search(name) else {
                throw FreshFileSystemsUnavailable(
                    description:
                        "--fresh-file-systems needs \(name), which is not installed (apt-get install e2fsprogs mount)"
                )
            }
            tools.append(path)
        }
        (mkfs, mount, umount) = (tools[0], tools[1], tools[2])
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        installSignalHandlers()
        let probe = try make("probe", bytes: 64 << 20)
        try remove(mountPoint: probe)
    }

    /// Makes a fresh file system and mounts it at a new folder named after `name`.
    ///
    /// - Returns: The mount point (an empty file system but for `lost+found`).
    /// - Throws: `FreshFileSystemsUnavailable` when `mkfs.ext4` or `mount` fails.
    func make(_ name: String, bytes: Int = FreshFileSystems.imageBytes) throws -> String {
        let base = lock.withLock {
            serial += 1
            return folder + "/\(name)-\(serial)"
        }
        let image = base + ".img", mountPoint = base
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, off_t(bytes)) == 0
        else {
            throw FreshFileSystemsUnavailable(
                description: "cannot make the sparse image \(image): \(String(cString: strerror(errno)))")
        }
        // Inode tables and journal are written now rather than by the kernel's lazy
        // initialisation thread while a command is timed.
        let format = [
            mkfs, "-q", "-F", "-j", "-i", String(Self.bytesPerInode), "-E",
            "lazy_itable_init=0,lazy_journal_init=0", image,
        ]
        guard try runQuietly(format) == 0 else {
            unlink(image)
            throw FreshFileSystemsUnavailable(description: "\(format.joined(separator: " ")) failed")
        }
        try StoreTrees.makeDirectory(mountPoint)
        guard try runQuietly([mount, "-t", "ext4", "-o", "loop", image, mountPoint]) == 0 else {
            rmdir(mountPoint)
            unlink(image)
            throw FreshFileSystemsUnavailable(
                description: "mount -t ext4 -o loop \(image) \(mountPoint) failed (no loop devices?)")
        }
        lock.withLock { mounted.append((image, mountPoint)) }
        return mountPoint
    }

    /// Unmounts the file system at `mountPoint` (made by ``make(_:bytes:)``) and deletes
    /// its image.
    ///
    /// - Throws: `BenchmarkError` when it cannot be unmounted.
    func remove(mountPoint: String) throws {
        removal.lock()
        defer { removal.unlock() }
        let entry = lock.withLock { () -> (image: String, mountPoint: String)? in
            guard let index = mounted.firstIndex(where: { $0.mountPoint == mountPoint }) else { return nil }
            return mounted.remove(at: index)
        }
        guard let entry else { return }
        guard unmount(entry) else { throw BenchmarkError("cannot unmount \(mountPoint)") }
    }

    /// Unmounts every file system still mounted and deletes the images; failures are
    /// reported on the standard error.
    func removeAll() {
        removal.lock()
        defer { removal.unlock() }
        unmountAll()
    }

    /// ``removeAll()`` with `removal` already held.
    private func unmountAll() {
        let entries = lock.withLock {
            defer { mounted.removeAll() }
            return mounted
        }
        for entry in entries.reversed() where !unmount(entry) {
            FileHandle.standardError.write(Data("cannot unmount \(entry.mountPoint)\n".utf8))
        }
    }

    /// `umount` (tried five times, 0.2 s apart), else a lazy `umount -l`, then the image
    /// and the mount point deleted.
    private func unmount(_ entry: (image: String, mountPoint: String)) -> Bool {
        var unmounted = false
        // A command killed a moment ago may still hold files open in it.
        for attempt in 0..<5 where !unmounted {
            if attempt > 0 { usleep(200_000) }
            unmounted = (try? runQuietly([umount, entry.mountPoint])) == 0
        }
        unmounted = unmounted || (try? runQuietly([umount, "-l", entry.mountPoint])) == 0
        if unmounted { rmdir(entry.mountPoint) }
        unlink(entry.image)
        return unmounted
    }

    /// On SIGINT, SIGTERM or SIGHUP: unmount everything, then exit with 128 + the signal.
    private func installSignalHandlers() {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardError.write(
                    Data("signal \(number): unmounting the fresh file systems…\n".utf8))
                // Held until `exit`: the main thread, woken by its command's death,
                // must not return meanwhile.
                removal.lock()
                // Children still writing into a mount would keep it busy.
                for pid in runningChildren.withLock({ $0 }) { kill(pid, SIGKILL) }
                unmountAll()
                exit(128 + number)
            }
            source.resume()
            signalSources.append(source)
        }
    }
}
