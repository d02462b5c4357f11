import Synchronization

/// Whether a store's local state (`Local.nosync/`) is there: set when the store is opened,
/// and once its first write has made it (see `SurveyStore.hasLocalState`).
final class LocalStateFlag: Sendable {
    private let made: Atomic<Bool>

    init(_ made: Bool) {
        self.made = Atomic(made)
    }

    var isMade: Bool {
        get { made.load(ordering: .acquiring) }
        set { made.store(newValue, ordering: .releasing) }
    }
}
