import Diagnostics

extension StoreError: CategorizedError {
    /// The case's name, such as `noSuchDocument` or `notCurrent` (`damagedStore` for
    /// ``StoreError/tornLayout(_:_:)`` too).
    public var errorCode: String {
        switch self {
        case .noSuchStore: "noSuchStore"
        case .storeGone: "storeGone"
        case .noSuchDocument: "noSuchDocument"
        case .noSuchRevision: "noSuchRevision"
        case .noContent: "noContent"
        case .deletion: "deletion"
        case .notCurrent: "notCurrent"
        case .unreadableWinner: "unreadableWinner"
        case .unseenRevisions: "unseenRevisions"
        case .unseenForMerge: "unseenForMerge"
        case .unseenForMigration: "unseenForMigration"
        case .noReadableRevision: "noReadableRevision"
        case .unreadableRevision: "unreadableRevision"
        case .readOnly: "readOnly"
        case .newerLayout: "newerLayout"
        case .damagedStore, .tornLayout: "damagedStore"
        case .newerFormat: "newerFormat"
        case .noSuchPackage: "noSuchPackage"
        case .unimportablePackage: "unimportablePackage"
        case .documentsFolderBlocked: "documentsFolderBlocked"
        case .documentExists: "documentExists"
        case .revisionTooLarge: "revisionTooLarge"
        case .insideStore: "insideStore"
        }
    }

    /// What kind of failure the case is.
    public var category: ErrorCategory {
        switch self {
        case .noSuchStore, .storeGone, .noSuchDocument, .noSuchRevision, .noSuchPackage, .noContent,
            .deletion:
            .notFound
        case .notCurrent, .documentExists: .refused
        case .newerLayout, .newerFormat, .damagedStore, .tornLayout, .noReadableRevision,
            .unreadableRevision, .unimportablePackage,
            .documentsFolderBlocked, .revisionTooLarge:
            .invalidData
        case .unreadableWinner, .unseenRevisions, .unseenForMerge, .unseenForMigration, .readOnly: .failure
        case .insideStore: .usage
        }
    }
}

extension VersionsError: CategorizedError {
    /// `invalidRevision`.
    public var errorCode: String { "invalidRevision" }
    /// `ErrorCategory/invalidData`.
    public var category: ErrorCategory { .invalidData }
}
