extension Doctor {
  /// Whether desktop notices (`[notify] desktop = true`) can be delivered: a notification
  /// server answers on the session bus. Notices never stop a job, so a missing one is a note.
  func checkDesktopNotices() -> DoctorFinding {
    do {
      let server = try DesktopNoticeCall.serverInformation(timeout: .seconds(2))
      return .init(.ok, "notify", "desktop notices go to \(server) on the session bus")
    } catch {
      return .init(
        .note, "notify",
        (error.isAbsent
          ? "no desktop notification server on the session bus"
          : "the desktop notification server does not answer")
          + ": notices of failures and stale jobs are not shown (\(error))")
    }
  }
}
