// The types the façade takes, returns and throws, so that `import SurveyStore` is all an
// app (or the `survey` command) imports. The layers' other types stay behind the façade.

// The survey model, its interchange forms, merge and diff: the app's vocabulary.
@_exported import Surveys

// Revisions: their ids, metadata, graph and the store's errors and names.
@_exported import struct Versions.Device
@_exported import struct Versions.HybridTimestamp
@_exported import struct Versions.RevisionGraph
@_exported import struct Versions.RevisionID
@_exported import struct Versions.RevisionMetadata
@_exported import enum Versions.StoreError
@_exported import struct Versions.StoreIssue
@_exported import enum Versions.StoreLayout
@_exported import enum Versions.VersionsError

// Property lists: the value, its errors, and the dates written in them.
@_exported import enum PropertyList.ISO8601Date
@_exported import enum PropertyList.PropertyList
@_exported import struct PropertyList.PropertyListError

// The file layer's error.
@_exported import struct Packages.FileSystemError
