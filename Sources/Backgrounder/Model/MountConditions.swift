/// What the dispatcher knows about the mount points of the process's mount namespace
/// (`requiresMount`). Unknown is not permission: while ``isKnown`` is false, no path counts as
/// mounted.
public struct MountConditions: Hashable, Sendable, Codable {
  /// The mount points, as absolute paths written the way the kernel lists them
  /// (`/proc/self/mountinfo`: no symbolic link resolved).
  public var mountPoints: Set<String>
  /// The source has answered.
  public var isKnown: Bool

  /// Creates mount conditions.
  public init(mountPoints: Set<String>, isKnown: Bool = true) {
    self.mountPoints = mountPoints
    self.isKnown = isKnown
  }

  /// No mount source configured (or none read yet): nothing is mounted as far as work knows.
  public static let unconfigured = MountConditions(mountPoints: [], isKnown: false)

  /// Whether `path` is a mount point now (and that is known).
  public func isMounted(_ path: String) -> Bool {
    isKnown && mountPoints.contains(path)
  }
}

/// A source of mount conditions (on Linux, `/proc/self/mountinfo` watched by the daemon's
/// event loop).
public protocol MountConditionSource: Sendable {
  /// The conditions right now.
  var current: MountConditions { get }
  /// What ``updates()`` returns: any sequence that never throws, consumed where it is
  /// iterated (a source maps its own stream lazily rather than re-yielding it from a task).
  associatedtype Updates: AsyncSequence<MountConditions, Never> & Sendable
  /// An independent subscription per call: yields the current conditions first, then each change.
  func updates() -> Updates
}

/// The mount source of a configuration that names none: nothing is known, so work that
/// requires a mount is held.
public struct UnconfiguredMounts: MountConditionSource {
  /// Creates the source.
  public init() {}
  /// Always ``MountConditions/unconfigured``.
  public var current: MountConditions { .unconfigured }
  /// Yields ``MountConditions/unconfigured`` once and never finishes.
  public func updates() -> AsyncStream<MountConditions> {
    AsyncStream { $0.yield(.unconfigured) }
  }
}

extension WorkConstraints {
  /// The mount predicate `mounts` leaves unmet (also while they are not known).
  func unmetMount(_ mounts: MountConditions) -> [PendingPredicate] {
    guard let path = requiredMount, !mounts.isMounted(path) else { return [] }
    return [.mounted(path: path)]
  }
}
