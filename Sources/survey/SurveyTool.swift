import ArgumentParser

/// The `survey` command: survey documents, their revisions and their property lists.
@main
struct SurveyTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "survey",
        abstract: "Survey documents stored as revisions of XML property-list packages.",
        subcommands: [
            InitCommand.self, NewCommand.self, ListCommand.self, ShowCommand.self, EditCommand.self, SaveCommand.self,
            DeleteCommand.self, ExportCommand.self, ImportCommand.self, VersionsCommand.self, ConflictsCommand.self, DiffCommand.self, ResolveCommand.self,
            PruneCommand.self, VerifyCommand.self, SyncCommand.self, CheckCommand.self, MigrateCommand.self, DemoCommand.self, PlistCommand.self,
        ]
    )
}
