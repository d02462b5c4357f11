// The types the façade takes, returns and throws, so that `import SurveyStore` is all an
// app (or the `survey` command) imports. The layers' other types stay behind the façade.
// Whole modules: the one error shape (`CategorizedError`), the property-list codec (the value, its reader and writer, Codable, its
// errors) and the survey model with its interchange forms, merge and diff (the app's
// vocabulary). Single types: the file layer's error; revisions (ids, metadata, graph,
// timestamps and the clock that flags them) and the store's errors and names.

@_exported import Diagnostics
@_exported import PropertyList
@_exported import Surveys

@_exported import struct Packages.FileSystemError
@_exported import class Packages.FolderWatcher
@_exported import struct Versions.Device
@_exported import struct Versions.HybridClock
@_exported import struct Versions.HybridTimestamp
@_exported import enum Versions.Remedy
@_exported import struct Versions.RevisionGraph
@_exported import struct Versions.RevisionID
@_exported import struct Versions.RevisionMetadata
@_exported import enum Versions.StoreError
@_exported import struct Versions.StoreIssue
@_exported import enum Versions.StoreLayout
@_exported import enum Versions.VersionsError
