import CSystemShims
import EventLoops
import Locking
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// A run's command as a process of the daemon's own making (issue #35: one `clone3` and one
/// `execve` per run, no wrapper shell, no stop handshake, no thread). ``spawn(_:)`` starts it
/// held before its exec (``csystem_spawn_gated``); the caller records it, sets its priority and
/// moves it into its cgroups, then ``release()``s it. Its output and its end are watched on an
/// ``EventLoop`` (``wait(on:output:)``); ``stop(signal:killAfter:on:)`` ends its process group.
///
/// The process is reaped through its pidfd, by this object only: the daemon never waits for
/// "any child" (``Subreaper``).
final class RunProcess: Sendable {
  /// How the process ended.
  enum Termination: Sendable, Equatable {
    case exited(Int32)
    case signaled(Int32)
    /// It never ran the command: a step before the exec, or the exec, failed with this errno.
    case failedToStart(Errno)
  }

  /// What to start.
  struct Command: Sendable {
    /// The program's path (resolved: no `PATH` search here).
    var path: String
    /// The argument vector, its first element the program's name.
    var arguments: [String]
    /// Exactly the environment the command gets.
    var environment: [String: String]
    var workingDirectory: String?
  }

  /// Which of the two output pipes.
  enum Stream: Sendable {
    case standardOutput, standardError
  }

  let pid: pid_t
  /// The pidfd (`CLONE_PIDFD`: Linux 5.2; reaped through it with `waitid(P_PIDFD)`: 5.4).
  private let pidfd: Int32
  /// The read ends of the command's stdout and stderr (non-blocking), and the read end of the
  /// pipe a failed exec writes its errno to.
  private let standardOutput: Int32
  private let standardError: Int32
  private let startError: Int32

  private struct State {
    /// The gate's write end, until ``release()`` or ``close()``.
    var gate: Int32
    /// Set on the loop's thread once the process is reaped: no signal goes to its group after.
    var termination: Termination?
    var registrations: [EventLoop.Registration] = []
    var killTimer: EventLoop.Timer?
    var waiter: CheckedContinuation<Termination, Never>?
  }

  private let state: Lock<State>

  /// What the child reads until its exec; freed once it is reaped.
  private let memory: ChildMemory

  private init(
    pid: pid_t, pidfd: Int32, gate: Int32, startError: Int32, standardOutput: Int32,
    standardError: Int32, memory: ChildMemory
  ) {
    self.memory = memory
    self.pid = pid
    self.pidfd = pidfd
    self.startError = startError
    self.standardOutput = standardOutput
    self.standardError = standardError
    state = Lock(State(gate: gate))
  }

  /// Starts `command` held before its exec: nothing of it runs until ``release()``.
  static func spawn(_ command: Command) throws(SystemCallError) -> RunProcess {
    var environment: [String] = []
    environment.reserveCapacity(command.environment.count)
    for (name, value) in command.environment
    where !name.isEmpty && !name.utf8.contains(UInt8(ascii: "=")) && !name.utf8.contains(0)
      && !value.utf8.contains(0)
    {
      environment.append(name + "=" + value)
    }
    // The child reads these until its exec, after this function returned: kept until it is
    // reaped.
    let memory = ChildMemory(
      path: command.path, arguments: command.arguments, environment: environment,
      workingDirectory: command.workingDirectory)
    var descriptors: (pidfd: Int32, gate: Int32, error: Int32, output: Int32, errorOutput: Int32) =
      (-1, -1, -1, -1, -1)
    var stack: UnsafeMutableRawPointer?
    let pid = csystem_spawn_gated(
      memory.path, memory.arguments, memory.environment, memory.workingDirectory,
      &descriptors.output, &descriptors.errorOutput, &descriptors.pidfd, &descriptors.gate,
      &descriptors.error, &stack)
    guard pid > 0 else {
      let error = SystemCallError.current("clone(\(command.path))")
      memory.free()
      throw error
    }
    memory.stack = stack
    return RunProcess(
      pid: pid, pidfd: descriptors.pidfd, gate: descriptors.gate, startError: descriptors.error,
      standardOutput: descriptors.output, standardError: descriptors.errorOutput, memory: memory)
  }

  /// Lets the held process exec its command.
  func release() {
    let gate = state.withLock { state -> Int32 in
      defer { state.gate = -1 }
      return state.gate
    }
    guard gate >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(gate, &byte, 1)
    close(gate)
  }

  /// Ends the held process before its exec (the gate closed without a byte).
  func abandon() {
    let gate = state.withLock { state -> Int32 in
      defer { state.gate = -1 }
      return state.gate
    }
    if gate >= 0 { close(gate) }
  }

  /// Waits until the process ended and is reaped; each chunk it writes to stdout or stderr goes
  /// to `output` (on the loop's thread, in order per stream). Once it ended, what its pipes
  /// hold is read; a descendant that still holds them is not waited for (the run's containment
  /// ends it). Call once.
  func wait(
    on loop: EventLoop, output: @escaping @Sendable (Stream, UnsafeRawBufferPointer) -> Void
  ) async -> Termination {
    await withCheckedContinuation { continuation in
      loop.execute { [self] in start(loop, continuation, output) }
    }
  }

  /// Sends `signal` to the process group, then SIGKILL after `killAfter` if the process is
  /// still there; nothing once it was reaped.
  func stop(signal: Int32, killAfter: Duration, on loop: EventLoop) {
    loop.execute { [self] in
      let running = state.withLock { $0.termination == nil && $0.killTimer == nil }
      guard running else { return }
      // Held at its gate, it has not run: it ends without running anything.
      abandon()
      Self.signal(group: pid, pidfd: pidfd, signal)
      let timer = loop.schedule(after: killAfter) { [self] in
        if state.withLock({ $0.termination == nil }) {
          Self.signal(group: pid, pidfd: pidfd, SIGKILL)
        }
      }
      state.withLock { $0.killTimer = timer }
    }
  }

  /// Sends `signal` to the process group that `leader` leads; when there is none yet — the
  /// child has not run its `setsid`: a stop right after the start, on a loaded machine, where
  /// both the stop and the SIGKILL were lost (`ESRCH`) and the run never ended — to the leader
  /// itself through `pidfd`: its mask holds the signal until its exec, so the command gets it.
  static func signal(group leader: pid_t, pidfd: Int32, _ signal: Int32) {
    do throws(SystemCallError) {
      _ = try systemCall("kill") { kill(-leader, signal) }
    } catch  where error.errno == .noSuchProcess {
      _ = csystem_pidfd_send_signal(pidfd, signal)
    } catch {}
  }

  // MARK: On the loop's thread

  private func start(
    _ loop: EventLoop, _ continuation: CheckedContinuation<Termination, Never>,
    _ output: @escaping @Sendable (Stream, UnsafeRawBufferPointer) -> Void
  ) {
    state.withLock { $0.waiter = continuation }
    for (descriptor, stream) in [
      (standardOutput, Stream.standardOutput), (standardError, Stream.standardError),
    ] {
      if let registration = try? loop.register(
        descriptor, interest: .readable,
        { [self] _ in
          if !Self.drain(descriptor, stream, output) { stopWatching(descriptor, loop) }
        })
      {
        state.withLock { $0.registrations.append(registration) }
      }
    }
    if let registration = try? loop.register(
      pidfd, interest: .readable,
      { [self] _ in
        ended(loop, output)
      })
    {
      state.withLock { $0.registrations.append(registration) }
      return
    }
    // The pidfd could not be watched (epoll_ctl failed): a thread waits for the end without
    // reaping.
    let pid = self.pid
    do throws(SystemCallError) {
      try SystemThread.detach(name: "bg-run-wait") { [self] in
        var info = siginfo_t()
        _ = try? systemCall("waitid") { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
        loop.execute { [self] in ended(loop, output) }
      }
    } catch {
      // Nothing can tell the end: reaped when it comes, blocking this loop (never expected).
      ended(loop, output)
    }
  }

  /// How many reads of 64 KiB one wake-up of the loop makes from one pipe: a job that writes
  /// without pause (`yes`) must not keep the loop, which the control socket and every other run
  /// share, from everything else. The loop is level-triggered: what is left wakes it again.
  static let readsPerWakeUp = 16

  /// Reads what `descriptor` holds now, to `EAGAIN` or at most `reads` reads; false at end of
  /// file or on an error.
  private static func drain(
    _ descriptor: Int32, _ stream: Stream,
    _ output: @Sendable (Stream, UnsafeRawBufferPointer) -> Void, reads: Int = readsPerWakeUp
  ) -> Bool {
    withUnsafeTemporaryAllocation(byteCount: 65_536, alignment: 1) { buffer in
      for _ in 0..<reads {
        let count: Int?
        do {
          count = try nonBlockingSystemCall("read") {
            read(descriptor, buffer.baseAddress, buffer.count)
          }
        } catch {
          return false
        }
        // Nothing more now (`EAGAIN`): the pipe stays watched.
        guard let count else { return true }
        if count == 0 { return false }
        output(stream, UnsafeRawBufferPointer(rebasing: buffer[..<count]))
      }
      return true
    }
  }

  private func stopWatching(_ descriptor: Int32, _ loop: EventLoop) {
    let registration = state.withLock { state -> EventLoop.Registration? in
      guard let index = state.registrations.firstIndex(where: { $0.descriptor == descriptor })
      else { return nil }
      return state.registrations.remove(at: index)
    }
    if let registration { loop.deregister(registration) }
  }

  /// The process ended (its pidfd is readable): reaps it, reads what its pipes hold, closes
  /// everything and hands the end to the waiter.
  private func ended(
    _ loop: EventLoop, _ output: @Sendable (Stream, UnsafeRawBufferPointer) -> Void
  ) {
    guard state.withLock({ $0.termination == nil }) else { return }
    var info = siginfo_t()
    // P_PIDFD (3; Linux 5.4): this process's own child, reaped by no one else.
    let result =
      (try? systemCall("waitid") {
        waitid(idtype_t(rawValue: 3), id_t(pidfd), &info, WEXITED | WNOHANG)
      }) ?? -1
    // Not ended after all (a spurious wake-up): the pidfd stays registered.
    if result == 0 && info._sifields._sigchld.si_pid == 0 { return }
    var termination: Termination =
      switch Int(info.si_code) {
      case Int(CLD_KILLED), Int(CLD_DUMPED): .signaled(info._sifields._sigchld.si_status)
      default: .exited(info._sifields._sigchld.si_status)
      }
    if result < 0 { termination = .exited(-1) }
    // A step before the exec, or the exec, failed: its errno is in the pipe.
    var number: Int32 = 0
    if read(startError, &number, MemoryLayout<Int32>.size) == MemoryLayout<Int32>.size {
      termination = .failedToStart(Errno(rawValue: number))
    }
    _ = Self.drain(standardOutput, .standardOutput, output)
    _ = Self.drain(standardError, .standardError, output)
    let (registrations, timer, waiter) = state.withLock {
      state -> (
        [EventLoop.Registration], EventLoop.Timer?, CheckedContinuation<Termination, Never>?
      )
      in
      state.termination = termination
      defer {
        state.registrations = []
        state.killTimer = nil
        state.waiter = nil
      }
      return (state.registrations, state.killTimer, state.waiter)
    }
    for registration in registrations { loop.deregister(registration) }
    if let timer { loop.cancel(timer) }
    abandon()
    for descriptor in [standardOutput, standardError, startError, pidfd] {
      close(descriptor)
    }
    // Reaped: the child exec'd (a new address space) or ended; nothing reads this any more.
    memory.free()
    waiter?.resume(returning: termination)
  }
}

/// The strings and the stack a held child reads until its exec (``csystem_spawn_gated``: it
/// shares the daemon's memory), in C memory of their own until ``free()``.
private final class ChildMemory: @unchecked Sendable {
  let path: UnsafeMutablePointer<CChar>
  let workingDirectory: UnsafeMutablePointer<CChar>?
  let arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
  let environment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
  private let counts: (arguments: Int, environment: Int)
  /// Set once after the spawn, read once in ``free()`` (both on one path of ``RunProcess``).
  var stack: UnsafeMutableRawPointer?
  private var freed = false

  init(path: String, arguments: [String], environment: [String], workingDirectory: String?) {
    self.path = strdup(path)
    self.workingDirectory = workingDirectory.map { strdup($0) }
    self.arguments = Self.vector(arguments)
    self.environment = Self.vector(environment)
    counts = (arguments.count, environment.count)
  }

  private static func vector(_ strings: [String]) -> UnsafeMutablePointer<
    UnsafeMutablePointer<CChar>?
  > {
    let vector = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(
      capacity: strings.count + 1)
    for (index, string) in strings.enumerated() { vector[index] = strdup(string) }
    vector[strings.count] = nil
    return vector
  }

  func free() {
    guard !freed else { return }
    freed = true
    Glibc.free(path)
    Glibc.free(workingDirectory)
    for index in 0..<counts.arguments { Glibc.free(arguments[index]) }
    for index in 0..<counts.environment { Glibc.free(environment[index]) }
    arguments.deallocate()
    environment.deallocate()
    csystem_spawn_release_stack(stack)
  }
}
