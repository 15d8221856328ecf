extension JobEnvironment {
  /// `BACKGROUNDER_REACHABLE=1` for a job with `requires-reachable` (a run starts only once a
  /// TCP connect to its destination succeeded on the current network); none for the others.
  package static func destinationVariables(_ job: JobDefinition) -> [String: String] {
    job.requiresReachable == nil ? [:] : ["BACKGROUNDER_REACHABLE": "1"]
  }
}
