import CSystemShims
import Glibc
import SystemCalls

/// Linking the daemon's `cgroup_skb` programs to the directory of run cgroups for the daemon's
/// life: the runs' byte counters (``RunByteCounters``) and the capped runs' classifier
/// (``RunPriorityClassifier``).
enum CgroupProgram {
  /// Loads a program with `load` and links it to cgroup `cgroup` at its ingress (`ingress`) or
  /// egress hook; returns the link's descriptor: the program runs until it is closed.
  static func link(
    to cgroup: String, ingress: Bool, _ load: () -> Int32
  ) throws(SystemCallError) -> Int32 {
    let directory = try systemCall("open", path: cgroup) {
      open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }
    defer { close(directory) }
    let program = try systemCall("bpf prog load", load)
    defer { close(program) }
    return try systemCall("bpf link create", path: cgroup) {
      csystem_cgroup_program_link(program, directory, ingress ? 1 : 0)
    }
  }

  /// Whether this kernel and this process may load the daemon's programs: one loaded (not
  /// attached) by `load`, or the error that says why not.
  static func probe(_ load: () -> Int32) -> SystemCallError? {
    do throws(SystemCallError) {
      close(try systemCall("bpf prog load", load))
      return nil
    } catch {
      return error
    }
  }
}
