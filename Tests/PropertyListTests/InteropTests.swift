import Foundation
import PropertyList
import TestSupport
import Testing

/// Interop with independent implementations: CPython's `plistlib` and libplist's
/// `plistutil`. Each reads what we write, and we read what each writes.
@Suite("Interop with plistlib and plistutil", .serialized)
struct InteropTests {
    /// Dates from 1901 to 2200: plistlib handles years 1…9999 only, and libplist 2.2
    /// misreads some dates before year 1000.
    static let portableDates: ClosedRange<Int64> = -2_174_000_000...7_258_000_000
    static let valueCount = 400

    static let script = #"""
        import base64, calendar, datetime, math, os, plistlib, sys

        def tag(v):
            if isinstance(v, bool): return {"boolean": v}
            if isinstance(v, int): return {"integer": str(v)}
            if isinstance(v, float): return {"real": v.hex() if math.isfinite(v) else repr(v)}
            if isinstance(v, str): return {"string": v}
            if isinstance(v, bytes): return {"data": base64.b64encode(v).decode()}
            if isinstance(v, datetime.datetime): return {"date": calendar.timegm(v.utctimetuple())}
            if isinstance(v, list): return {"array": [tag(x) for x in v]}
            if isinstance(v, dict): return {"dictionary": {k: tag(x) for k, x in v.items()}}
            raise TypeError(type(v))

        import json
        mode = sys.argv[1]
        if mode == "golden":
            # The XML that Apple's CoreFoundation wrote for CPython's own tests.
            import test.test_plistlib as golden
            data = golden.TESTDATA[plistlib.FMT_XML]
            sys.stdout.write(json.dumps({"xml": base64.b64encode(data).decode(),
                                         "value": tag(plistlib.loads(data))}))
        elif mode == "roundtrip":
            directory = sys.argv[2]
            for name in sorted(os.listdir(directory)):
                if not name.endswith(".ours.plist"):
                    continue
                stem = os.path.join(directory, name[: -len(".ours.plist")])
                try:
                    with open(os.path.join(directory, name), "rb") as f:
                        value = plistlib.load(f)
                except Exception as error:
                    # Refused: say why, in place of the value.
                    with open(stem + ".python.json", "w") as f:
                        json.dump({"refused": "%s: %s" % (type(error).__name__, error)}, f)
                    continue
                with open(stem + ".python.json", "w") as f:
                    json.dump(tag(value), f)
                with open(stem + ".python.plist", "wb") as f:
                    plistlib.dump(value, f, fmt=plistlib.FMT_XML)
        elif mode == "normal-forms":
            # Keys that are the same text in NFC and NFD: two keys to plistlib.
            sys.stdout.buffer.write(plistlib.dumps({"": 0, "\u00e9": 1, "e\u0301": 2}))
        """#

    static func python() -> String? { ExternalTool.require("python3") }

    static func runPython(_ arguments: [String]) throws -> Data {
        let directory = try ExternalTool.temporaryDirectory()
        let scriptURL = directory.appendingPathComponent("interop.py")
        try Data(script.utf8).write(to: scriptURL)
        let output = try ExternalTool.run(python()!, [scriptURL.path] + arguments)
        try? FileManager.default.removeItem(at: directory)
        #expect(output.status == 0, "python failed: \(output.stderr)")
        return output.stdout
    }

    /// Reads plistlib's tagged JSON description of a value.
    static func untag(_ object: Any) throws -> PropertyList {
        guard let tagged = object as? [String: Any], tagged.count == 1, let (tag, payload) = tagged.first
        else {
            throw FoundationBridge.Unsupported(description: "bad tagged value \(object)")
        }
        switch (tag, payload) {
        case ("boolean", let flag as Bool): return .boolean(flag)
        case ("integer", let text as String):
            if let signed = Int64(text) { return .integer(PropertyList.Integer(signed)) }
            if let unsigned = UInt64(text) { return .integer(PropertyList.Integer(unsigned)) }
        case ("real", let text as String):
            switch text {
            case "nan": return .real(.nan)
            case "inf": return .real(.infinity)
            case "-inf": return .real(-.infinity)
            default: if let real = Double(text) { return .real(real) }
            }
        case ("string", let text as String): return .string(text)
        case ("data", let text as String): if let data = Data(base64Encoded: text) { return .data(data) }
        case ("date", let seconds as NSNumber): return .date(Date(timeIntervalSince1970: seconds.doubleValue))
        case ("array", let elements as [Any]): return .array(try elements.map(untag))
        case ("dictionary", let entries as [String: Any]): return .dictionary(try entries.mapValues(untag))
        default: break
        }
        throw FoundationBridge.Unsupported(description: "bad tagged value \(object)")
    }

    @Test(
        "Apple's golden XML from CPython's plistlib tests: we read the same value and write the same bytes",
        ExternalTool.needs("python3"))
    func appleGoldenXML() throws {
        guard Self.python() != nil else { return }
        let reply = try JSONSerialization.jsonObject(with: try Self.runPython(["golden"])) as! [String: Any]
        let xml = try #require(Data(base64Encoded: reply["xml"] as! String))
        let expected = try Self.untag(reply["value"]!)
        let ours = try PropertyList(xml: xml, file: "test_plistlib golden XML")
        #expect(ours == expected)
        #expect(try ours.xmlData() == xml, "our writer differs from the Apple-generated bytes")
    }

    @Test("plistlib reads what we write, and we read what plistlib writes", ExternalTool.needs("python3"))
    func plistlibRoundTrip() throws {
        guard Self.python() != nil else { return }
        let directory = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let seed = SeededRandom.seed(fallback: 0xB17_11B)
        var random = RandomPropertyList(seed: seed)
        random.dateRange = Self.portableDates
        var values: [PropertyList] = []
        for index in 0..<Self.valueCount {
            let value = PropertyList.dictionary(["value": random.value()])
            values.append(value)
            try value.xmlData().write(
                to: directory.appendingPathComponent(String(format: "%04d.ours.plist", index)))
        }
        _ = try Self.runPython(["roundtrip", directory.path])
        for (index, value) in values.enumerated() {
            let stem = directory.appendingPathComponent(String(format: "%04d", index)).path
            let seen = try Self.untag(
                JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: stem + ".python.json"))))
            #expect(
                seen == value,
                "plistlib read value \(index) differently (seed \(seed); replay with SURVEYSTORE_SEED=\(seed))"
            )
            let pythonXML = try Data(contentsOf: URL(fileURLWithPath: stem + ".python.plist"))
            #expect(
                try PropertyList(xml: pythonXML, file: stem + ".python.plist") == value,
                "we read plistlib's XML of value \(index) differently (seed \(seed); replay with SURVEYSTORE_SEED=\(seed))"
            )
        }
    }

    static let awkwardCount = 300

    /// The awkward values of ``ConformanceTests/awkwardValues()`` through `plistlib`: it
    /// reads what we write to the value our bytes carry, and we read what it writes of
    /// that to the same value, bit for bit. The documented rule where the two part: a
    /// date outside the years 1 to 9999 (year 0, BC years, five-digit years), which
    /// plistlib refuses. What our writer refuses is checked against Foundation there.
    @Test(
        "Awkward values through plistlib both ways, or its documented refusal", ExternalTool.needs("python3"))
    func plistlibAwkward() throws {
        guard Self.python() != nil else { return }
        let seed = SeededRandom.seed(fallback: 0xB17_A3C)
        let directory = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = RandomPropertyList(seed: seed)
        random.awkward = true
        random.fractionalDates = true
        var written: [(index: Int, value: PropertyList)] = []
        var failures: [String] = []
        for index in 0..<Self.awkwardCount {
            let value = random.value()
            do {
                try value.xmlData().write(
                    to: directory.appendingPathComponent(String(format: "%04d.ours.plist", index)))
                written.append((index, value))
            } catch let error as PropertyListError {
                if !AwkwardRules.writerRefusals(value).contains(error.code) {
                    failures.append("value \(index): refused with \(error), which no rule explains")
                }
            }
        }
        _ = try Self.runPython(["roundtrip", directory.path])
        var refusedByPlistlib = 0
        for (index, value) in written {
            let expected = value.writtenForm
            let stem = directory.appendingPathComponent(String(format: "%04d", index)).path
            let reply = try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: stem + ".python.json")))
            let outsidePlistlibYears = AwkwardRules.dates(expected).contains {
                !AwkwardRules.plistlibReads($0)
            }
            if let refused = (reply as? [String: Any])?["refused"] as? String {
                refusedByPlistlib += 1
                if !outsidePlistlibYears {
                    failures.append("value \(index): plistlib refuses our bytes: \(refused)")
                }
                continue
            }
            if outsidePlistlibYears {
                failures.append("value \(index): plistlib read a date outside the years 1 to 9999")
            }
            let seen = try Self.untag(reply)
            if !seen.isIdentical(to: expected) {
                failures.append("value \(index): plistlib read \(seen.shown), expected \(expected.shown)")
            }
            let pythonXML = try Data(contentsOf: URL(fileURLWithPath: stem + ".python.plist"))
            switch Result(catching: { try PropertyList(xml: pythonXML, file: stem + ".python.plist") }) {
            case .success(let read) where read.isIdentical(to: expected): break
            case .success(let read):
                failures.append(
                    "value \(index): we read plistlib's XML as \(read.shown), expected \(expected.shown)")
            case .failure(let error):
                failures.append("value \(index): we refuse plistlib's XML: \(error)")
            }
            if failures.count >= 5 { break }
        }
        #expect(refusedByPlistlib > 0, "no value had a date plistlib refuses: the generator is off")
        #expect(
            failures.isEmpty,
            "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)\n\(failures.joined(separator: "\n\n"))")
    }

    @Test(
        "Keys plistlib writes as two that are the same text in NFC and NFD are refused as duplicates, at the second",
        ExternalTool.needs("python3"))
    func plistlibNormalForms() throws {
        guard Self.python() != nil else { return }
        let xml = try Self.runPython(["normal-forms"])
        let error = #expect(throws: PropertyListError.self) { try PropertyList(xml: xml, file: "nf.plist") }
        #expect(error?.code == .invalidStructure)
        #expect(
            error?.message.contains("different Unicode normal forms") == true, "\(String(describing: error))")
        // plistlib sorts them by code point: "", "e\u{301}", then "\u{E9}" on line 9, the duplicate.
        #expect(error?.line == 9 && error?.column == 7, "\(String(describing: error))")
    }

    @Test(
        "plistutil reads what we write (to binary and back to its own XML), and we read its XML",
        ExternalTool.needs("plistutil"))
    func plistutilRoundTrip() throws {
        guard let plistutil = ExternalTool.require("plistutil") else { return }
        let directory = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let seed = SeededRandom.seed(fallback: 0x1_1B_9115)
        let replay = "seed \(seed); replay with SURVEYSTORE_SEED=\(seed)"
        var random = RandomPropertyList(seed: seed)
        random.dateRange = Self.portableDates
        for index in 0..<Self.valueCount / 2 {
            let value = PropertyList.dictionary(["value": random.value()])
            let ours = directory.appendingPathComponent("\(index).plist").path
            let binary = directory.appendingPathComponent("\(index).bplist").path
            let theirs = directory.appendingPathComponent("\(index).theirs.plist").path
            try value.xmlData().write(to: URL(fileURLWithPath: ours))
            let toBinary = try ExternalTool.run(plistutil, ["-i", ours, "-o", binary, "-f", "bin"])
            #expect(
                toBinary.status == 0,
                "plistutil could not read value \(index) (\(replay)): \(toBinary.stderr)")
            let toXML = try ExternalTool.run(plistutil, ["-i", binary, "-o", theirs, "-f", "xml"])
            #expect(
                toXML.status == 0, "plistutil could not write value \(index) (\(replay)): \(toXML.stderr)")
            let back = try PropertyList(xml: Data(contentsOf: URL(fileURLWithPath: theirs)), file: theirs)
            #expect(back == value, "value \(index) changed through plistutil (\(replay))")
        }
    }
}
