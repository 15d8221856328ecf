import CSystemShims
import Glibc
import Netlink
import SystemCalls

/// Puts capped runs' packets in their HTB class where runs have a cgroup v2 each
/// (``ShapingSupport/cgroupPriority``): one `cgroup_skb` egress program, loaded once and linked
/// for the daemon's life to the directory of run cgroups, sets the priority of each packet
/// whose socket's cgroup is in its map to that run's class id
/// (``csystem_run_priority_program_load``). A capped run costs a map update at its start and a
/// deletion at its end — not a program load, whose verifier was most of a capped run's added
/// CPU (issue #37). The link and the map close with the daemon (a daemon killed with SIGKILL
/// leaves neither behind).
final class RunPriorityClassifier: Sendable {
  private let map: Int32
  private let link: Int32

  /// Creates the map (a class slot each, ``TrafficShaper/slotCount``) and links the program to
  /// `runsDirectory`. Throws when the kernel refuses (no `CAP_BPF`, no cgroup BPF links).
  init(runsDirectory: String) throws(SystemCallError) {
    let map = try systemCall("bpf map create") {
      csystem_run_priority_map_create(TrafficShaper.slotCount)
    }
    do throws(SystemCallError) {
      link = try CgroupProgram.link(to: runsDirectory, ingress: false) {
        csystem_run_priority_program_load(map)
      }
    } catch {
      close(map)
      throw error
    }
    self.map = map
  }

  deinit {
    close(link)
    close(map)
  }

  /// Whether this kernel and this process may load the program: one loaded (not linked), or the
  /// error that says why not.
  static func probe() -> SystemCallError? {
    do throws(SystemCallError) {
      let map = try systemCall("bpf map create") { csystem_run_priority_map_create(1) }
      defer { close(map) }
      return CgroupProgram.probe { csystem_run_priority_program_load(map) }
    } catch {
      return error
    }
  }

  /// The packets of run cgroup `cgroup` (its id) go to class `classID` from now on.
  func classify(_ cgroup: UInt64, as classID: UInt32) throws(SystemCallError) {
    _ = try systemCall("bpf map update") { csystem_run_priority_set(map, cgroup, classID) }
  }

  /// The run of cgroup `cgroup` ended: its packets are no longer classified.
  func forget(_ cgroup: UInt64) {
    _ = csystem_run_priority_clear(map, cgroup)
  }
}
