import Backgrounder
import CSystemShims
import Foundation
import Locking
import Logging
import Netlink
import SystemCalls

/// How the kernel can put a run's packets in its HTB class (``TrafficShaper``), found once at
/// daemon start. Either way the packets' priority is set to the run's class id, and HTB takes a
/// priority naming one of its leaf classes as the class — no tc filter, so no `cls_cgroup`
/// module.
///
/// - ``cgroupPriority``, where runs get a cgroup v2 of their own: one `cgroup_skb` egress
///   program on the directory of run cgroups sets the priority of each packet of a capped run's
///   cgroup (``RunPriorityClassifier``).
/// - ``netPrio(directory:)``, elsewhere: a cgroup v1 `net_prio` hierarchy. Each capped run gets
///   a `net_prio` cgroup (`<mount>/backgrounder/<run id>`) whose `net_prio.ifpriomap` maps the
///   primary link to the run's class id.
package enum ShapingSupport: Sendable, Equatable {
  /// Runs have a cgroup v2 each, the daemon may load BPF programs and change qdiscs
  /// (`CAP_NET_ADMIN`).
  case cgroupPriority
  /// The `net_prio` hierarchy's directory for the daemon's run cgroups, and the daemon may
  /// change qdiscs (`CAP_NET_ADMIN`).
  case netPrio(directory: String)
  /// Caps cannot be enforced, and why.
  case unavailable(String)

  /// The reason caps cannot be enforced, or nil when they can.
  package var unavailableReason: String? {
    if case .unavailable(let reason) = self { return reason }
    return nil
  }
}

/// What to do about a run's bandwidth cap: the plan, made from the job's cap, the link the run
/// starts on and what the daemon can do; ``RunShaping`` carries it out.
package enum ShapingDecision: Sendable, Equatable {
  /// No cap applies (none set, or only `metered-bandwidth` on an unmetered link).
  case unshaped
  /// Cap the run's egress on `interface` at `bitsPerSecond`.
  case shape(interface: String, bitsPerSecond: UInt64)
  /// A cap applies but cannot be enforced; the run goes uncapped unless `required`.
  case unenforceable(reason: String, required: Bool)

  package static func decide(
    cap: BandwidthCap?, primaryLink: String?, metered: Bool, support: ShapingSupport
  ) -> ShapingDecision {
    guard let cap, let rate = cap.rate(metered: metered) else { return .unshaped }
    if let reason = support.unavailableReason {
      return .unenforceable(reason: reason, required: cap.required)
    }
    guard let primaryLink, !primaryLink.isEmpty else {
      return .unenforceable(reason: "no primary link to shape", required: cap.required)
    }
    return .shape(interface: primaryLink, bitsPerSecond: rate)
  }
}

/// The class slots of the runs capped now: slot → run id, lowest free slot first.
struct ShapingSlots: Sendable, Equatable {
  private(set) var owners: [UInt32: String] = [:]

  /// A free slot for `runID`, or nil when all ``TrafficShaper/slotCount`` are taken.
  mutating func assign(_ runID: String) -> UInt32? {
    guard let slot = (0..<TrafficShaper.slotCount).first(where: { owners[$0] == nil }) else {
      return nil
    }
    owners[slot] = runID
    return slot
  }

  mutating func release(_ slot: UInt32) {
    owners[slot] = nil
  }
}

/// A run being capped: its class, and its `net_prio` cgroup when classified by one.
package struct ShapedRun: Sendable {
  let runID: String
  let interface: String
  let slot: UInt32
  let bitsPerSecond: UInt64
  /// The run's `net_prio` cgroup directory (``ShapingSupport/netPrio(directory:)`` only).
  let netPrioCgroup: String?
  /// The id of the run's cgroup v2, in the classifier's map (``ShapingSupport/cgroupPriority``
  /// only).
  var classifiedCgroup: UInt64?
  /// The index of `interface` once the run's class was asked for (what removes it).
  var ifindex: Int32?
  var classID: UInt32 { TrafficShaper.classID(slot: slot) }
}

/// Caps runs' egress (`bandwidth`, `metered-bandwidth`): an HTB class per capped run on the
/// primary link the run starts on, its packets classified by the program on the run cgroups
/// (``RunPriorityClassifier``) or by its `net_prio` cgroup (``ShapingSupport``). Ingress is not shaped. Classes go when the run ends, and at daemon
/// start (``prepare(logger:)``) whatever a killed daemon left behind.
package final class RunShaping: Sendable {
  package let support: ShapingSupport
  let logger: Logger
  private let slots = Lock(ShapingSlots())
  /// The links' qdiscs and classes, changed under this lock: a run's class added while
  /// another run's removal takes the qdisc away would find no parent. Nil until the first
  /// change when ``prepare(runsDirectory:logger:)`` could not open it.
  private let shaper: Lock<TrafficShaper?>
  /// The configured jobs with a cap, and whether each requires it (for ``problems()``).
  private let cappedJobs = Lock<[(id: String, required: Bool)]>([])

  /// The health problem kind of caps that cannot be enforced.
  static let problemKind = HealthProblem.Kind(rawValue: "bandwidthUnenforced")

  /// Classifies capped runs' packets (``ShapingSupport/cgroupPriority`` only).
  private let classifier: RunPriorityClassifier?

  init(
    support: ShapingSupport, logger: Logger, classifier: RunPriorityClassifier? = nil,
    shaper: consuming sending TrafficShaper? = nil
  ) {
    self.support = support
    self.logger = logger
    self.classifier = classifier
    self.shaper = Lock(shaper)
  }

  /// `CAP_NET_ADMIN` from `<linux/capability.h>`.
  static let capabilityNetAdmin = 12
  /// `CGROUP_SUPER_MAGIC` (cgroup v1) from `<linux/magic.h>`.
  static let cgroupMagic = 0x27e0eb
  /// The directory of the daemon's `net_prio` cgroups under the hierarchy's mount point.
  static let directoryName = "backgrounder"

  /// Finds what the daemon can do (``detect(mountinfo:hasNetAdmin:creating:runCgroups:)``;
  /// `runsDirectory`: the directory of run cgroups, when runs get a cgroup v2 each, where the
  /// classifier is linked) and removes what a previous daemon left: its HTB qdiscs on every link
  /// and its empty `net_prio` cgroups.
  package static func prepare(runsDirectory: String?, logger: Logger) -> RunShaping {
    // The classifier itself is the probe (one program load at start, not two); refused, the
    // net_prio hierarchy is tried as in `doctor`.
    var classifier: RunPriorityClassifier?
    let support = detect(runCgroups: runsDirectory != nil) {
      guard let runsDirectory else { return nil }
      do throws(SystemCallError) {
        classifier = try RunPriorityClassifier(runsDirectory: runsDirectory)
        return nil
      } catch {
        return error
      }
    }
    var shaper: TrafficShaper?
    if support.unavailableReason == nil {
      do {
        let opened = try TrafficShaper()
        shaper = opened
        for link in try opened.removeAll() {
          logger.notice(
            "removed the bandwidth classes a previous daemon left", metadata: ["link": "\(link)"])
        }
      } catch {
        logger.warning("cannot remove leftover bandwidth classes", metadata: ["error": "\(error)"])
      }
    }
    if case .netPrio(let directory) = support {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
      for name in names where RunCgroups.isCgroup(directory + "/" + name) {
        RunCgroups.remove(directory + "/" + name)
      }
    }
    if let reason = support.unavailableReason {
      logger.info("bandwidth caps cannot be enforced", metadata: ["reason": "\(reason)"])
    }
    return RunShaping(support: support, logger: logger, classifier: classifier, shaper: shaper)
  }

  /// Takes the jobs of `configuration` that have a cap (at start and at each reload).
  func configure(_ configuration: DaemonConfiguration) {
    let capped = configuration.jobs.compactMap { job in
      job.bandwidth.map { (id: job.id, required: $0.required) }
    }
    cappedJobs.withLock { $0 = capped }
  }

  /// `status`'s word when jobs have caps the daemon cannot enforce: which run uncapped and which
  /// do not start.
  func problems() -> [HealthProblem] {
    guard let reason = support.unavailableReason else { return [] }
    let capped = cappedJobs.withLock { $0 }
    guard !capped.isEmpty else { return [] }
    let uncapped = capped.filter { !$0.required }.map(\.id)
    let held = capped.filter(\.required).map(\.id)
    var consequences: [String] = []
    if !uncapped.isEmpty { consequences.append("\(uncapped.joined(separator: ", ")) run uncapped") }
    if !held.isEmpty {
      consequences.append("\(held.joined(separator: ", ")) do not start (bandwidth-required)")
    }
    return [
      HealthProblem(
        kind: Self.problemKind, detectedAt: nil,
        message: "bandwidth caps cannot be enforced: \(reason); "
          + consequences.joined(separator: "; "))
    ]
  }

  /// Whether caps can be enforced here: `CAP_NET_ADMIN`, and either runs with a cgroup v2 each
  /// (`runCgroups`) and BPF programs allowed (`loadsPrograms`), or a mounted cgroup v1 hierarchy
  /// with the `net_prio` controller (its `backgrounder` directory created when missing, unless
  /// not `creating`: what `doctor` asks).
  package static func detect(
    mountinfo: String? = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8),
    hasNetAdmin: Bool = Doctor.hasCapability(capabilityNetAdmin), creating: Bool = true,
    runCgroups: Bool = false,
    loadsPrograms: () -> SystemCallError? = RunPriorityClassifier.probe
  ) -> ShapingSupport {
    guard hasNetAdmin else {
      return .unavailable("the daemon has no CAP_NET_ADMIN (needed to add tc classes)")
    }
    var refused: SystemCallError?
    if runCgroups {
      refused = loadsPrograms()
      if refused == nil { return .cgroupPriority }
    }
    guard let mount = netPrioMount(mountinfo ?? "") else {
      let cgroup2 =
        if let refused {
          "the kernel refused the classifier on run cgroups (\(refused))"
        } else {
          "runs have no cgroup v2 of their own (a delegated cgroup: Delegate=yes)"
        }
      return .unavailable(
        "\(cgroup2), and no cgroup v1 net_prio hierarchy is mounted (mount -t cgroup -o "
          + "net_prio none /sys/fs/cgroup/net_prio)")
    }
    do {
      let root = try TrustedDirectory.open(mount, creating: false, owners: .ownUser)
      let type = try systemCall("statfs") { csystem_filesystem_type(root.descriptor) }
      guard type == cgroupMagic else {
        return .unavailable("\(mount) is not a cgroup v1 file system")
      }
      guard creating else { return .netPrio(directory: mount + "/" + directoryName) }
      return .netPrio(directory: try root.subdirectory(directoryName, mode: 0o755).path)
    } catch {
      return .unavailable("cannot use the net_prio hierarchy \(mount): \(error)")
    }
  }

  /// The mount point of the cgroup v1 hierarchy with the `net_prio` controller, from
  /// `/proc/self/mountinfo` text ("ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS… - cgroup SOURCE
  /// SUPER-OPTIONS"); only a mount of the hierarchy's root.
  static func netPrioMount(_ mountinfo: String) -> String? {
    for line in mountinfo.split(separator: "\n") {
      let halves = line.components(separatedBy: " - ")
      guard halves.count == 2 else { continue }
      let fields = halves[0].split(separator: " ")
      let tail = halves[1].split(separator: " ")
      guard fields.count >= 5, tail.count >= 3, tail[0] == "cgroup", fields[3] == "/",
        tail[2].split(separator: ",").contains("net_prio")
      else { continue }
      return String(fields[4])
    }
    return nil
  }

  /// Carries out `decision` for run `runID` of `jobID` before it starts: the class, and what
  /// puts the run's packets in it — the classifier on the run's cgroup v2 `cgroup`, or a
  /// `net_prio` cgroup mapping the link to the class. Nil when the run goes uncapped (logged).
  func begin(runID: String, jobID: String, decision: ShapingDecision, cgroup: String?)
    -> ShapedRun?
  {
    let metadata: Logger.Metadata = ["job": "\(jobID)", "run": "\(runID)"]
    switch decision {
    case .unshaped:
      return nil
    case .unenforceable(let reason, _):
      logger.warning(
        "bandwidth cap not enforced: the run goes uncapped",
        metadata: metadata.merging(["reason": "\(reason)"]) { $1 })
      return nil
    case .shape(let interface, let bits):
      let netPrioCgroup: String?
      switch support {
      case .unavailable: return nil
      case .netPrio(let directory): netPrioCgroup = directory + "/" + runID
      case .cgroupPriority:
        guard cgroup != nil, classifier != nil else {
          logger.warning(
            "bandwidth cap not enforced: the run has no cgroup of its own", metadata: metadata)
          return nil
        }
        netPrioCgroup = nil
      }
      guard let slot = slots.withLock({ $0.assign(runID) }) else {
        logger.warning("bandwidth cap not enforced: every class slot is taken", metadata: metadata)
        return nil
      }
      var run = ShapedRun(
        runID: runID, interface: interface, slot: slot, bitsPerSecond: bits,
        netPrioCgroup: netPrioCgroup)
      do {
        if let netPrioCgroup {
          _ = try systemCall("mkdir", path: netPrioCgroup) { mkdir(netPrioCgroup, 0o755) }
          try RunCgroups.write(
            "\(interface) \(run.classID)", to: netPrioCgroup + "/net_prio.ifpriomap")
        } else if let cgroup, let classifier {
          guard let id = RunByteCounters.cgroupID(cgroup) else {
            throw SystemCallError.current("stat", path: cgroup)
          }
          try classifier.classify(id, as: run.classID)
          run.classifiedCgroup = id
        }
        run.ifindex = try shaper.withLock { shaper in
          let opened = try shaper ?? TrafficShaper()
          shaper = opened
          return try opened.addClass(
            interface: interface, classID: run.classID, bitsPerSecond: bits)
        }
      } catch {
        logger.warning(
          "bandwidth cap not enforced: the run goes uncapped",
          metadata: metadata.merging(["error": "\(error)"]) { $1 })
        end(run)
        return nil
      }
      logger.info(
        "run's egress capped",
        metadata: metadata.merging([
          "link": "\(interface)", "rate": "\(BandwidthCap.format(bits))",
          "class": "\(TrafficShaper.format(run.classID))",
        ]) { $1 })
      return run
    }
  }

  /// Moves process `pid` (the run's process, held before it execs the job) into the run's
  /// `net_prio` cgroup, when it has one; its children and their sockets inherit it.
  func join(_ pid: pid_t, _ run: ShapedRun) throws {
    guard let netPrioCgroup = run.netPrioCgroup else { return }
    try RunCgroups.write("\(pid)", to: netPrioCgroup + "/cgroup.procs")
  }

  /// Removes the run's class (and the HTB qdisc with the link's last one) and its cgroup.
  func end(_ run: ShapedRun) {
    do {
      try shaper.withLock { shaper in
        guard let ifindex = run.ifindex, let shaper else { return }
        try shaper.removeClass(ifindex: ifindex, classID: run.classID)
      }
    } catch {
      logger.warning(
        "cannot remove the run's bandwidth class",
        metadata: ["run": "\(run.runID)", "error": "\(error)"])
    }
    if let netPrioCgroup = run.netPrioCgroup { RunCgroups.remove(netPrioCgroup) }
    if let id = run.classifiedCgroup { classifier?.forget(id) }
    slots.withLock { $0.release(run.slot) }
  }
}
