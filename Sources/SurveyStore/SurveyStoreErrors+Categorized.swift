import Diagnostics

extension LookupError: CategorizedError {
    /// `noSuchDocument`, or `ambiguous` for a prefix that names several.
    public var errorCode: String {
        switch self {
        case .noSuchDocument, .blockedDocument: "noSuchDocument"
        case .ambiguousDocument, .ambiguousRevision: "ambiguous"
        }
    }
    /// `ErrorCategory/notFound` or `ErrorCategory/usage`.
    public var category: ErrorCategory {
        switch self {
        case .noSuchDocument, .blockedDocument: .notFound
        case .ambiguousDocument, .ambiguousRevision: .usage
        }
    }
}

extension ExportError: CategorizedError {
    /// `noSuchFolder`, `danglingLink`, or `exists` for a destination that is in the way.
    public var errorCode: String {
        switch self {
        case .noSuchFolder: "noSuchFolder"
        case .danglingLink: "danglingLink"
        case .exists, .isFolder: "exists"
        }
    }
    /// `ErrorCategory/notFound` or `ErrorCategory/failure`.
    public var category: ErrorCategory {
        switch self {
        case .noSuchFolder, .danglingLink: .notFound
        case .exists, .isFolder: .failure
        }
    }
}

extension DeviceNameError: CategorizedError {
    /// `invalidDeviceName`.
    public var errorCode: String { "invalidDeviceName" }
    /// `ErrorCategory/usage`.
    public var category: ErrorCategory { .usage }
}

extension DocumentDeletedError: CategorizedError {
    /// `deleted`.
    public var errorCode: String { "deleted" }
    /// `ErrorCategory/notFound`: the document's content is gone until restored.
    public var category: ErrorCategory { .notFound }
}

extension SurveyStore.MergeRefusal: CategorizedError {
    /// `contested`.
    public var errorCode: String { "contested" }
    /// `ErrorCategory/refused`: nothing was written.
    public var category: ErrorCategory { .refused }
}

extension SyncError: CategorizedError {
    /// `sameStore`.
    public var errorCode: String { "sameStore" }
    /// `ErrorCategory/usage`: a sync needs two stores.
    public var category: ErrorCategory { .usage }
}
