import Backgrounder
import Broadcasting
import EventLoops
import Locking
import Logging
import ServiceLifecycle
import SystemCalls

#if canImport(Glibc)
  import Glibc
#endif

/// The mount points of the daemon's mount namespace, for `requiresMount`: `/proc/self/mountinfo`
/// read once, then again each time the kernel marks it changed. The descriptor is watched by an
/// ``EventLoop`` with no interest but errors: the kernel reports a change of the mount table as
/// `POLLERR | POLLPRI` on it (proc(5)), and epoll always reports `EPOLLERR`; it is never readable
/// "for nothing" that way, so an unchanged table costs no wake-up and nothing is polled.
///
/// Unknown is not permission: until the first read (or after the monitor ended), the
/// conditions are ``MountConditions/unconfigured`` and no path counts as mounted.
public final class MountTableMonitor: MountConditionSource, Service, Sendable {
  private let path: String
  private let logger: Logger
  private let eventLoop: EventLoop?
  private let state = Lock(Broadcaster<MountConditions>(latest: .unconfigured))

  /// Watches `path` (the default: this process's mount table) on `eventLoop` (a host's loop),
  /// or on the process's shared one (`EventLoop.shared()`).
  public init(
    path: String = "/proc/self/mountinfo", logger: Logger, eventLoop: EventLoop? = nil
  ) {
    self.path = path
    self.logger = logger
    self.eventLoop = eventLoop
  }

  public var current: MountConditions { state.withLock { $0.latest } ?? .unconfigured }

  public func updates() -> AsyncStream<MountConditions> {
    state.withLock { state in
      state.subscribe { [weak self] id in self?.state.withLock { $0.unsubscribe(id) } }
    }
  }

  /// Watches the mount table until cancelled or a graceful shutdown. Throws when it cannot be
  /// opened or read.
  public func run() async throws {
    defer {
      let streams = state.withLock { state in
        _ = state.publish(.unconfigured)
        return state.finish()
      }
      for stream in streams { stream.finish() }
    }
    let descriptor = try systemCall("open(\(path))") { open(path, O_RDONLY | O_CLOEXEC) }
    defer { close(descriptor) }
    let loop = try eventLoop ?? EventLoop.shared()
    let serving = LoopServing()
    let handler: EventLoop.Handler = { [self] _ in
      do throws(SystemCallError) {
        try reread(descriptor)
      } catch {
        serving.fail(error)
      }
    }
    // Registered and read on the loop, so that no change falls between the two.
    let registered = await loop.submit {
      [self] () -> Result<EventLoop.Registration, SystemCallError> in
      do throws(SystemCallError) {
        let registration = try loop.register(descriptor, interest: [], handler)
        do throws(SystemCallError) {
          try reread(descriptor)
        } catch {
          loop.deregister(registration)
          return .failure(error)
        }
        return .success(registration)
      } catch {
        return .failure(error)
      }
    }
    let registration = try registered.get()
    try await serving.wait(thenDeregister: registration, from: loop)
  }

  /// Reads the whole table again from its start and publishes it when it changed (on the loop).
  private func reread(_ descriptor: Int32) throws(SystemCallError) {
    _ = try systemCall("lseek(\(path))") { lseek(descriptor, 0, SEEK_SET) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = try systemCall("read(\(path))") {
        chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      }
      if count == 0 { break }
      bytes += chunk[..<count]
    }
    let conditions = MountConditions(mountPoints: Set(MountInfo.mountPoints(bytes)))
    let recipients = state.withLock { state -> [Broadcaster<MountConditions>.Recipient] in
      guard state.latest != conditions else { return [] }
      return state.publish(conditions)
    }
    if !recipients.isEmpty {
      logger.debug(
        "mount table changed", metadata: ["mountPoints": "\(conditions.mountPoints.count)"])
    }
    for recipient in recipients { recipient.deliver(conditions) }
  }
}
