import Foundation
import PropertyList

// libFuzzer entry point for the property-list reader: every input must either read or
// be refused with a PropertyListError; a crash, a hang or a memory error is a finding.
// Build and run with Fuzz/run (see Fuzz/README.md).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let value = try? PropertyList(xmlBytes: bytes, file: "fuzz") {
        // Whatever reads must also write, and read back to the same value.
        if let written = try? value.xmlData() {
            let again = try? PropertyList(xml: written)
            precondition(again == value, "a value read from input did not survive its own round trip")
        }
    }
    _ = try? PlistDecoder().decode([String: String].self, from: Data(bytes))
    return 0
}
