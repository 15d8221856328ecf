import Backgrounder
import Foundation

/// Decides which failures get a desktop notice: one per failure episode, an episode running
/// from a job's first failure to its next success. A value type with no clock and no I/O.
///
/// Stale episodes come from ``AlertTracker`` already (its `began`); failures there are one per
/// failed run, which is right for `on-failure` hooks but too many for a person's desktop.
struct NoticeEpisodes: Sendable {
  /// The jobs whose failure was noticed, with their last success (nil: never) at that time.
  private var noticed: [TaskId: Date?] = [:]

  /// Whether a failure of `job`, whose last success ended at `lastSuccessAt`, begins a new
  /// episode (and so gets a notice); records it.
  mutating func failureBeginsEpisode(job: TaskId, lastSuccessAt: Date?) -> Bool {
    if let seen = noticed[job], seen == lastSuccessAt { return false }
    noticed[job] = .some(lastSuccessAt)
    return true
  }
}
