import ArgumentParser

/// The `ID` argument of the verbs that act on one job.
struct JobIdArgument: ParsableArguments {
  @Argument(
    help: ArgumentHelp("The job id (reverse-DNS, e.g. dev.example.photos-upload).", valueName: "id")
  )
  var id: String
}
