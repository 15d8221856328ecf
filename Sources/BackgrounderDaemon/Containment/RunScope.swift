import Foundation

/// One run's containment: its id, cgroup (when cgroups are in use) and process group.
struct RunScope: Sendable {
  let runID: String
  let jobID: String
  let cgroup: String?
  var leader: ProcStat?
}
