import Foundation

@testable import Versions

// libFuzzer entry point for the readers of a revision's metadata file, which every read
// of a store, every sync and the change feed run on files other machines wrote. Two
// readers read the same file: `CanonicalMetadata` takes the one form the store writes
// without the XML parser, and gives up on anything else, which the XML parser then reads.
// So on every input:
// - when the writer's-form reader reads it, the input is byte for byte what the writer
//   makes of the values read, the XML parser reads the same metadata, and the digest taken
//   around the revision id's entry is the one the writer's bytes give;
// - the whole read (`RevisionMetadata(plist:)`: ranges, parents, generation, digest)
//   refuses with an error or gives metadata that, written again, is read back unchanged
//   and, unless a text holds a control character, by the writer's-form reader.
// A crash, a hang, a memory error or a failed check is a finding. Build and run with
// `Fuzz/run metadata`.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadataReaders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    let parsed = try? RevisionMetadata.parsed(input, file: "fuzz")
    if let (fast, digest) = CanonicalMetadata.read(input) {
        precondition((try? fast.plistData()) == input, "the writer's-form reader took other bytes")
        precondition(parsed == fast, "the two readers read different metadata")
        precondition(
            digest == (try? fast.computedDigest()), "the digest around the id's entry is not the writer's")
    }
    guard let metadata = try? RevisionMetadata(plist: input, file: "fuzz") else { return 0 }
    precondition(parsed == metadata, "the whole read and the XML parser read different metadata")
    let written: Data
    do {
        written = try metadata.plistData()
    } catch {
        preconditionFailure("metadata that was read cannot be written again: \(error)")
    }
    precondition(
        (try? RevisionMetadata(plist: written)) == metadata, "metadata written again reads back differently")
    let texts = [metadata.device.id, metadata.device.name, metadata.contentDigest ?? ""]
    let hasControl = texts.contains { $0.utf8.contains { $0 < 0x20 } }
    precondition(
        (CanonicalMetadata.read(written) == nil) == hasControl,
        "the writer's-form reader does not read what the writer wrote")
    return 0
}
