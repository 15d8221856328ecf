import Foundation

extension TaskRow {
  /// The relaxation as JSON (the `relaxation` column).
  static func encode(_ relaxation: ConstraintRelaxation) -> String {
    let data = (try? JSONEncoder().encode(relaxation)) ?? Data()
    return String(decoding: data, as: UTF8.self)
  }

  /// The relaxation `text` holds, nil if it is not valid.
  /// (Read for `status` only for a task that waits: ``TaskStatus/relaxesAt``.)
  static func decodeRelaxation(_ text: String) -> ConstraintRelaxation? {
    try? JSONDecoder().decode(ConstraintRelaxation.self, from: Data(text.utf8))
  }
}

extension TaskStatus {
  /// When a task waiting since `waitingSince` relaxes under `relaxation`; nil when it does not
  /// wait, has none, or is finished.
  static func relaxDate(
    waitingSince: WallInstant?, relaxation: ConstraintRelaxation?, state: TaskState
  ) -> Date? {
    guard let waitingSince, let relaxation, !state.isFinished else { return nil }
    return waitingSince.advanced(by: relaxation.after).date
  }
}
