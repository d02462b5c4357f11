import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A finished child: what it printed and its peak resident memory.
struct ChildResult {
    var timings: Timings
    /// The child's own peak resident memory, in bytes (`VmHWM` where the system has it,
    /// else `ru_maxrss` from `wait4`).
    var peakBytes: Int
}

/// Runs `arguments` as a child process and collects its output and peak memory.
///
/// The corresponding C functions are `posix_spawn` and `wait4`; `wait4` fills in the
/// child's own `rusage`, so each case's peak memory is measured apart from the others.
func runChild(_ arguments: [String]) throws -> ChildResult {
    let pipe = Pipe()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipe.fileHandleForWriting.fileDescriptor, 1)
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let status = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
    guard status == 0 else {
        throw BenchmarkError("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
    }
    try pipe.fileHandleForWriting.close()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    var usage = rusage()
    var exitStatus: Int32 = 0
    while wait4(pid, &exitStatus, 0, &usage) < 0 && errno == EINTR {}
    guard exitStatus == 0 else {
        throw BenchmarkError("\(arguments.joined(separator: " ")) failed with status \(exitStatus)")
    }
    let line = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    let timings = try JSONDecoder().decode(Timings.self, from: Data(line.utf8))
    return ChildResult(timings: timings, peakBytes: timings.peakBytes ?? Int(usage.ru_maxrss) * 1024)
}
