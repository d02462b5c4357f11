// The types the façade takes, returns and throws, so that `import SurveyStore` is all an
// app (or the `survey` command) imports. The layers' other types stay behind the façade:
// the file layer's error; property lists (the value, its errors, the dates written in
// them); the survey model with its interchange forms, merge and diff (the app's
// vocabulary, the whole module); revisions (ids, metadata, graph) and the store's errors
// and names.

@_exported import Surveys
@_exported import struct Packages.FileSystemError
@_exported import enum PropertyList.ISO8601Date
@_exported import enum PropertyList.PropertyList
@_exported import struct PropertyList.PropertyListError
@_exported import struct Versions.Device
@_exported import struct Versions.HybridTimestamp
@_exported import struct Versions.RevisionGraph
@_exported import struct Versions.RevisionID
@_exported import struct Versions.RevisionMetadata
@_exported import enum Versions.StoreError
@_exported import struct Versions.StoreIssue
@_exported import enum Versions.StoreLayout
@_exported import enum Versions.VersionsError
