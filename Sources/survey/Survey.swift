import ArgumentParser

/// The `survey` command: survey documents, their revisions and their property lists.
@main
struct Survey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "survey",
        abstract: "Survey documents stored as revisions of XML property-list packages.",
        subcommands: [PlistCommand.self]
    )
}
