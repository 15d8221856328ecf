import Backgrounder
import EventLoops
import Logind
import ServiceLifecycle
import SystemCalls

extension LinuxConditionSources {
  /// Stops `runtime`'s work before the system suspends or shuts down, as the daemon does. On
  /// systemd-logind's `PrepareForSleep(true)` or `PrepareForShutdown(true)` nothing new starts
  /// (``Backgrounder/systemSleeping(_:stopping:)``) and the runs that hold a `delay` lock through
  /// ``holdingInhibitors(from:_:)`` are stopped: their workers are cancelled with
  /// ``StopReason/systemSuspending``, and each run is recorded as a retry that uses no attempt.
  /// Runs under a `block` lock (or none) go on. On `false` (back from sleep, or the shutdown
  /// cancelled) dispatch resumes and due times are re-evaluated at once.
  ///
  /// The watch connects on a thread of its own (without a system bus or logind it logs so and
  /// nothing is stopped) and is served on the sources' event loop. It is a `Service`: put it
  /// in the runtime's `ServiceGroup` after the runtime (it stops first on graceful shutdown),
  /// or call ``SystemSleepFollower/stop()`` before the runtime shuts down.
  public func followSystemSleep(of runtime: Backgrounder) throws(SystemCallError)
    -> SystemSleepFollower
  {
    try followSystemSleep(of: runtime) { _, _, _ in }
  }

  /// ``followSystemSleep(of:)``, calling `before` first with the jobs whose runs are about to
  /// be stopped (none on `false`) and logind's `InhibitDelayMaxUSec` (the daemon kills what is
  /// still running when that delay ends).
  package func followSystemSleep(
    of runtime: Backgrounder,
    before:
      @escaping @Sendable (_ sleeping: Bool, _ stopping: [String], _ delay: Duration?) ->
      Void
  ) throws(SystemCallError) -> SystemSleepFollower {
    let loop: EventLoop
    if let eventLoop { loop = eventLoop } else { loop = try EventLoop.shared() }
    let inhibitor = self.inhibitor
    let watch = LogindSleepWatch(eventLoop: loop, address: logindBusAddress, logger: logger) {
      sleeping, inhibitDelayMax in
      let jobIDs = sleeping ? inhibitor.runningJobs(mode: .delay) : []
      before(sleeping, jobIDs, inhibitDelayMax)
      runtime.systemSleeping(sleeping, stopping: jobIDs.compactMap { try? TaskId($0) })
    }
    watch.start()
    return SystemSleepFollower(watch: watch)
  }
}

/// systemd-logind's sleep and shutdown signals, followed for a runtime
/// (``LinuxConditionSources/followSystemSleep(of:)``) from when it is made until ``stop()``, or
/// as a `Service` until graceful shutdown.
public final class SystemSleepFollower: Service, Sendable {
  private let watch: LogindSleepWatch

  init(watch: LogindSleepWatch) {
    self.watch = watch
  }

  /// A follower let go of without ``stop()`` stops too: its connection, served by the event
  /// loop, would otherwise outlive it and keep stopping the runtime's runs before every sleep.
  deinit {
    watch.stopSoon()
  }

  /// Stops following the signals (the connection is closed on the event loop, soon; one still
  /// being made is closed when it is made).
  public func stop() {
    watch.stopSoon()
  }

  /// Follows the signals (from when the follower was made) until graceful shutdown or
  /// cancellation, then stops.
  public func run() async throws {
    try? await gracefulShutdown()
    stop()
  }
}
