import Foundation
import TestSupport
import Testing

/// Several real processes saving at once. CI runs the short form; set
/// SURVEYSTORE_LONG=1 for the design's 4 processes × 250 saves.
@Suite("Concurrent writers", .serialized)
struct ConcurrencyTests {
    static var savesPerProcess: Int {
        ProcessInfo.processInfo.environment["SURVEYSTORE_LONG"] == "1" ? 250 : 20
    }

    /// Runs `count` edits of `document` (or of a new document per process when `nil`)
    /// in a shell loop; returns the revisions the command acknowledged.
    static func writer(store: String, document: String, process: Int, count: Int) throws -> Process {
        let script = """
            for i in $(seq 1 \(count)); do
              "\(CommandRunner.binary.path)" edit "\(document)" --title "writer \(process) save $i" --store "\(store)" || echo "FAILED $i" >&2
            done
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        return shell
    }

    @Test(
        "4 processes saving one document at once: every acknowledged revision is there, the graph is consistent"
    )
    func oneDocument() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let id = try CommandRunner.run(["new", "--title", "shared", "--store", store]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let count = Self.savesPerProcess
        var outputs: [(Process, Pipe, Pipe)] = []
        for process in 0..<4 {
            let shell = try Self.writer(store: store, document: id, process: process, count: count)
            let out = Pipe(), err = Pipe()
            shell.standardOutput = out
            shell.standardError = err
            try shell.run()
            outputs.append((shell, out, err))
        }
        var acknowledged: [String] = []
        for (shell, out, err) in outputs {
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            shell.waitUntilExit()
            #expect(!stderr.contains("FAILED"), "\(stderr)")
            acknowledged += stdout.split(separator: "\n").map(String.init)
        }
        #expect(acknowledged.count == 4 * count)
        let versions =
            try JSONSerialization.jsonObject(
                with: Data(try CommandRunner.run(["versions", id, "--json", "--store", store]).stdout.utf8))
            as! [[String: Any]]
        let present = Set(versions.map { $0["revision"] as! String })
        #expect(versions.count == 1 + 4 * count, "every save is a revision")
        #expect(Set(acknowledged).isSubset(of: present), "no acknowledged save is lost")
        #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
    }

    @Test("4 processes saving different documents at once")
    func differentDocuments() throws {
        let directory = try CommandRunner.temporaryDirectory()
        let store = directory.appendingPathComponent("s").path
        #expect(try CommandRunner.run(["init", "--store", store]).status == 0)
        let ids = try (0..<4).map { _ in
            try CommandRunner.run(["new", "--title", "doc", "--store", store]).stdout.trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        let count = Self.savesPerProcess
        let shells = try ids.enumerated().map {
            try Self.writer(store: store, document: $1, process: $0, count: count)
        }
        for shell in shells {
            shell.standardOutput = FileHandle.nullDevice
            try shell.run()
        }
        for shell in shells { shell.waitUntilExit() }
        for id in ids {
            let versions =
                try JSONSerialization.jsonObject(
                    with: Data(
                        try CommandRunner.run(["versions", id, "--json", "--store", store]).stdout.utf8))
                as! [Any]
            #expect(versions.count == 1 + count)
        }
        #expect(try CommandRunner.run(["verify", "--store", store]).status == 0)
    }
}

extension ConcurrencyTests {
    /// Runs each of `commands` (arguments of `survey`) in a process of its own, all at once;
    /// returns their standard outputs, in order, once all have ended, each expected to
    /// have succeeded.
    static func atOnce(_ commands: [[String]]) throws -> [String] {
        let started = try commands.map(CommandRunner.start)
        return zip(commands, started).map { command, started in
            let (process, out) = started
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(command): exit \(process.terminationStatus)")
            return stdout
        }
    }

    /// The `DeviceID` a property list file records.
    static func deviceID(in file: String) throws -> String? {
        let plist = try PropertyListSerialization.propertyList(
            from: Data(contentsOf: URL(fileURLWithPath: file)), format: nil)
        return (plist as? [String: Any])?["DeviceID"] as? String
    }

    /// The `deviceID` a `--json` report prints.
    static func reportedDeviceID(_ stdout: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])?["deviceID"] as? String
    }

    @Test(
        "Processes that make or renew a store's device identity at once record one, and each saves under it and reports it: two inits of a new folder, an init and a first save in a store that came without Local.nosync/, two saves in a copied store (the later write replaced the first's identity: revisions named an id the store no longer had, init printed one it did not record)"
    )
    func oneIdentityAtOnce() throws {
        let directory = try CommandRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func device(_ store: String) throws -> String? {
            try Self.deviceID(in: store + "/Local.nosync/Device.plist")
        }
        /// The device ids the revisions of `store` name.
        func revisionDevices(_ store: String) throws -> Set<String> {
            let documents = store + "/Documents"
            var ids: Set<String> = []
            for document in try FileManager.default.contentsOfDirectory(atPath: documents) {
                for package in try FileManager.default.contentsOfDirectory(atPath: documents + "/" + document)
                {
                    let file = documents + "/" + document + "/" + package + "/DocumentMetadata.plist"
                    if let id = try Self.deviceID(in: file) { ids.insert(id) }
                }
            }
            return ids
        }
        let original = directory.appendingPathComponent("original").path
        #expect(try CommandRunner.run(["init", "--store", original]).status == 0)
        #expect(try CommandRunner.run(["new", "--title", "First", "--store", original]).status == 0)
        let originalDevice = try device(original)
        for round in 0..<12 {
            // Two inits of a new folder.
            let fresh = directory.appendingPathComponent("fresh\(round)").path
            let inits = try Self.atOnce([
                ["init", "--json", "--store", fresh], ["init", "--json", "--store", fresh],
            ])
            let recorded = try device(fresh)
            #expect(
                inits.map(Self.reportedDeviceID) == [recorded, recorded],
                "round \(round): \(inits), \(recorded ?? "none")")
            // A store without its local state: an init and a first save.
            let bare = directory.appendingPathComponent("bare\(round)").path
            try FileManager.default.createDirectory(atPath: bare, withIntermediateDirectories: false)
            for name in ["Store.plist", "Documents"] {
                try FileManager.default.copyItem(atPath: original + "/" + name, toPath: bare + "/" + name)
            }
            let made = try Self.atOnce([
                ["init", "--json", "--store", bare], ["new", "--title", "Second", "--store", bare],
            ])
            let bareDevice = try device(bare)
            #expect(Self.reportedDeviceID(made[0]) == bareDevice, "round \(round): \(made[0])")
            #expect(
                try revisionDevices(bare) == Set([originalDevice, bareDevice].compactMap { $0 }),
                "round \(round): the new revision names the recorded device")
            // A copy of the whole store: two first saves, each renewing the identity.
            let copy = directory.appendingPathComponent("copy\(round)").path
            _ = try ChildProcess.run("/bin/cp", ["-a", original, copy])
            _ = try Self.atOnce([
                ["new", "--title", "Third", "--store", copy], ["new", "--title", "Fourth", "--store", copy],
            ])
            let renewed = try device(copy)
            #expect(renewed != nil && renewed != originalDevice, "round \(round)")
            #expect(
                try revisionDevices(copy) == Set([originalDevice, renewed].compactMap { $0 }),
                "round \(round): both saves name the one renewed device")
        }
    }
}
