import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure of the Syncthing harness, with what it was doing.
struct SyncthingError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One real Syncthing process sharing one store folder with its peers, on loopback only:
/// discovery, relays, NAT traversal, usage and crash reporting and upgrades off; the GUI,
/// the REST API and the sync protocol each on a 127.0.0.1 port of its own.
final class SyncthingInstance {
    static let folderID = "surveys"

    let name: String
    let executable: String
    let home: String
    let folder: String
    let guiPort: UInt16
    let listenPort: UInt16
    let apiKey: String
    let deviceID: String
    private var process: Process?

    /// Makes keys for a new instance in `home` (`syncthing generate`) and reads its device id.
    init(name: String, executable: String, home: String, folder: String) throws {
        self.name = name
        self.executable = executable
        self.home = home
        self.folder = folder
        guiPort = try Loopback.freePort()
        listenPort = try Loopback.freePort(avoiding: [guiPort])
        apiKey = "survey-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let generated = try Self.runTool(
            executable, ["generate", "--home", home, "--no-default-folder", "--skip-port-probing"])
        guard generated.status == 0 else {
            throw SyncthingError("syncthing generate failed: \(generated.output)")
        }
        let shown = try Self.runTool(executable, ["serve", "--home", home, "--device-id"])
        let id = shown.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard shown.status == 0, id.count == 63 else {
            throw SyncthingError("syncthing --device-id said: \(shown.output)")
        }
        deviceID = id
    }

    /// The environment Syncthing runs in: no default folder, no upgrades, no restarts, and
    /// none of the caller's `ST…` overrides. `STMONITORED` makes `serve` run as one process
    /// (Syncthing 1.19 otherwise starts a monitor process that runs it as a child, even
    /// with `--no-restart`), so that the id the watchdog records is Syncthing's own.
    static var environment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ST") }
            .merging(["STNODEFAULTFOLDER": "1", "STNOUPGRADE": "1", "STNORESTART": "1", "STMONITORED": "yes"])
        { _, new in new }
    }

    private static func runTool(_ executable: String, _ arguments: [String]) throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Replaces the generated `config.xml` with one that shares `folder` with `peers`
    /// (this instance included), each reached at its explicit loopback address. The
    /// folder gets its marker and a `.stignore` holding `*.nosync`. A `receiveLimit` (KiB/s,
    /// 0 for none) slows what this instance receives, loopback included; `ignoreDelete` sets
    /// the folder's option of that name (deletions made elsewhere are not applied here).
    func configure(peers: [SyncthingInstance], receiveLimit: Int = 0, ignoreDelete: Bool = false) throws {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let folderDevices = peers.map { "        <device id=\"\($0.deviceID)\" introducedBy=\"\"></device>" }
        let devices = peers.map {
            """
                <device id="\($0.deviceID)" name="\(escaped($0.name))" compression="metadata" introducer="false">
                    <address>tcp://127.0.0.1:\($0.listenPort)</address>
                    <autoAcceptFolders>false</autoAcceptFolders>
                </device>
            """
        }
        let config = """
            <configuration version="36">
                <folder id="\(Self.folderID)" label="Surveys" path="\(escaped(folder))" type="sendreceive" rescanIntervalS="3600" fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
                    <filesystemType>basic</filesystemType>
            \(folderDevices.joined(separator: "\n"))
                    <minDiskFree unit="%">0</minDiskFree>
                    <markerName>.stfolder</markerName>
                    <ignoreDelete>\(ignoreDelete)</ignoreDelete>
                </folder>
            \(devices.joined(separator: "\n"))
                <gui enabled="true" tls="false" debugging="false">
                    <address>127.0.0.1:\(guiPort)</address>
                    <apikey>\(apiKey)</apikey>
                </gui>
                <options>
                    <listenAddress>tcp://127.0.0.1:\(listenPort)</listenAddress>
                    <globalAnnounceEnabled>false</globalAnnounceEnabled>
                    <localAnnounceEnabled>false</localAnnounceEnabled>
                    <relaysEnabled>false</relaysEnabled>
                    <natEnabled>false</natEnabled>
                    <announceLANAddresses>false</announceLANAddresses>
                    <urAccepted>-1</urAccepted>
                    <crashReportingEnabled>false</crashReportingEnabled>
                    <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                    <startBrowser>false</startBrowser>
                    <reconnectionIntervalS>1</reconnectionIntervalS>
                    <minHomeDiskFree unit="%">0</minHomeDiskFree>
                    <setLowPriority>false</setLowPriority>
                    <maxRecvKbps>\(receiveLimit)</maxRecvKbps>
                    <limitBandwidthInLan>\(receiveLimit > 0)</limitBandwidthInLan>
                </options>
            </configuration>

            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: home + "/config.xml"))
        try FileManager.default.createDirectory(
            atPath: folder + "/.stfolder", withIntermediateDirectories: true)
        try Data("*.nosync\n".utf8).write(to: URL(fileURLWithPath: folder + "/.stignore"))
    }

    /// Starts `syncthing serve` and waits until its REST API answers.
    ///
    /// It runs under a small shell that ends it when the test process goes away, or after
    /// five minutes, so that a crashed test never leaves it behind.
    func start() throws {
        let watchdog = """
            "$0" serve --home "$1" --no-browser --no-restart --no-upgrade --logflags=3 & child=$!
            echo $child > "$1/syncthing.pid"
            trap 'kill $child 2>/dev/null; wait $child; exit 0' TERM INT
            i=0
            while kill -0 $child 2>/dev/null && kill -0 "$2" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.5; i=$((i+1)); done
            kill $child 2>/dev/null; wait $child
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", watchdog, executable, home, String(getpid())]
        process.environment = Self.environment
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? log.close()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while (try? request("GET", "/rest/system/ping"))?.status != 200 {
            guard process.isRunning else {
                throw SyncthingError("\(name): syncthing exited at start:\n\(logTail())")
            }
            guard Date() < deadline else {
                throw SyncthingError("\(name): no REST API within 30 s:\n\(logTail())")
            }
            usleep(100_000)
        }
    }

    /// Stops every instance in `instances` and waits for them: SIGTERM to all at once (a
    /// clean exit can take Syncthing ten seconds), then SIGKILL, by their ids, to any still
    /// running after 20 seconds.
    static func stop(_ instances: [SyncthingInstance]) {
        let running = instances.compactMap { instance in instance.process.map { (instance, $0) } }
        for (instance, process) in running {
            instance.process = nil
            if process.isRunning { process.terminate() }
        }
        let deadline = Date().addingTimeInterval(20)
        while running.contains(where: { $0.1.isRunning }) && Date() < deadline { usleep(50_000) }
        for (instance, process) in running where process.isRunning {
            // Syncthing first: the shell waits for it, then exits.
            if let pid = instance.syncthingPID { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
        }
        for (_, process) in running { process.waitUntilExit() }
    }

    /// The id of the Syncthing process itself, which the watchdog shell records.
    private var syncthingPID: pid_t? {
        guard let text = try? String(contentsOfFile: home + "/syncthing.pid", encoding: .utf8) else {
            return nil
        }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    var logPath: String { home + "/syncthing.log" }

    func logTail(_ lines: Int = 30) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    // MARK: REST API

    /// One request to this instance's REST API, with its API key.
    func request(_ method: String, _ path: String) throws -> (status: Int, body: Data) {
        try Loopback.http(method, port: guiPort, path: path, headers: ["X-API-Key": apiKey])
    }

    /// A JSON object from the REST API; throws unless the answer is 200.
    func json(_ path: String, method: String = "GET") throws -> [String: Any] {
        let (status, body) = try request(method, path)
        guard status == 200 else {
            throw SyncthingError(
                "\(name): \(method) \(path) answered \(status): \(String(decoding: body, as: UTF8.self))")
        }
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw SyncthingError("\(name): \(method) \(path) did not answer a JSON object")
        }
        return object
    }

    /// Scans the shared folder now; the REST call returns when the scan is done.
    func scan() throws {
        let (status, body) = try request("POST", "/rest/db/scan?folder=\(Self.folderID)")
        guard status == 200 else {
            throw SyncthingError("\(name): scan answered \(status): \(String(decoding: body, as: UTF8.self))")
        }
    }

    func isConnected(to other: SyncthingInstance) throws -> Bool {
        let connections = try json("/rest/system/connections")["connections"] as? [String: Any]
        return (connections?[other.deviceID] as? [String: Any])?["connected"] as? Bool == true
    }

    /// Pauses (or resumes) the connection to `other`: nothing is exchanged while paused.
    func pause(_ other: SyncthingInstance, _ paused: Bool = true) throws {
        let (status, body) = try request(
            "POST", "/rest/system/\(paused ? "pause" : "resume")?device=\(other.deviceID)")
        guard status == 200 else {
            throw SyncthingError(
                "\(name): pause answered \(status): \(String(decoding: body, as: UTF8.self))")
        }
    }

    /// What keeps this side from being in step with `other`, or nil when nothing does:
    /// the folder idle with nothing needed and no pull errors, and `other` complete as far
    /// as this side knows. With `ignoringDeletes` (for folders with `ignoreDelete`, which
    /// never apply the deletions made elsewhere, and so always need them), needed
    /// deletions do not count.
    func unsettled(with other: SyncthingInstance, ignoringDeletes: Bool = false) throws -> String? {
        guard try isConnected(to: other) else { return "\(name) is not connected to \(other.name)" }
        let status = try json("/rest/db/status?folder=\(Self.folderID)")
        let state = status["state"] as? String ?? "?"
        let need =
            (status["needTotalItems"] as? Int ?? -1)
            - (ignoringDeletes ? status["needDeletes"] as? Int ?? 0 : 0)
        let errors = status["pullErrors"] as? Int ?? -1
        guard state == "idle", need == 0, errors == 0 else {
            return "\(name): state \(state), needing \(need) items, pullErrors \(errors)"
        }
        let completion = try json("/rest/db/completion?folder=\(Self.folderID)&device=\(other.deviceID)")
        let percent = completion["completion"] as? Double ?? -1
        let needItems = completion["needItems"] as? Int ?? -1
        let needDeletes = completion["needDeletes"] as? Int ?? -1
        guard needItems == 0, ignoringDeletes || (percent == 100 && needDeletes == 0) else {
            return
                "\(name) sees \(other.name) at \(percent)% (needItems \(needItems), needDeletes \(needDeletes))"
        }
        return nil
    }
}

/// Plain sockets on 127.0.0.1: a free port, and HTTP/1.0 requests (no URLSession, so the
/// tests need no libcurl).
enum Loopback {
    private static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private static func socketDescriptor() throws -> Int32 {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SyncthingError("socket: errno \(errno)") }
        return fd
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice), other
    /// than those in `avoiding`.
    static func freePort(avoiding: Set<UInt16> = []) throws -> UInt16 {
        for _ in 0..<20 {
            let fd = try socketDescriptor()
            defer { close(fd) }
            var bound = address(port: 0)
            let result = withUnsafePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else { throw SyncthingError("bind: errno \(errno)") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            let port = UInt16(bigEndian: bound.sin_port)
            if !avoiding.contains(port) { return port }
        }
        throw SyncthingError("no free port on 127.0.0.1")
    }

    /// One HTTP/1.0 request to 127.0.0.1:`port`; returns the status and the body.
    static func http(_ method: String, port: UInt16, path: String, headers: [String: String]) throws -> (
        status: Int, body: Data
    ) {
        let fd = try socketDescriptor()
        defer { close(fd) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var target = address(port: port)
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw SyncthingError("connect to 127.0.0.1:\(port): errno \(errno)") }
        var request = "\(method) \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        var bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw SyncthingError("send to 127.0.0.1:\(port): errno \(errno)") }
            sent += count
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw SyncthingError("recv from 127.0.0.1:\(port): errno \(errno)") }
            if count == 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        guard let split = response.range(of: Data("\r\n\r\n".utf8)) else {
            throw SyncthingError("127.0.0.1:\(port) \(path): no HTTP header in the answer")
        }
        let header = String(decoding: response[..<split.lowerBound], as: UTF8.self)
        let statusLine = header.split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw SyncthingError("127.0.0.1:\(port) \(path): bad status line \(statusLine)")
        }
        return (status, Data(response[split.upperBound...]))
    }
}
