import CSystemShims
import Glibc
import SystemCalls

/// Attaching the daemon's `cgroup_skb` programs to a run's cgroup v2: the run's byte counter
/// (``CgroupByteCounter``) and its bandwidth class (``RunShaping``). An attachment lasts as long
/// as the cgroup: nothing to detach when the run ends.
enum CgroupProgram {
  /// Loads a program with `load` (a `csystem_…_program_load` call) and attaches it to cgroup
  /// `cgroup` at its ingress (`ingress`) or egress hook.
  static func attach(
    to cgroup: String, ingress: Bool, _ load: () -> Int32
  ) throws(SystemCallError) {
    let directory = try systemCall("open", path: cgroup) {
      open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }
    defer { close(directory) }
    let program = try systemCall("bpf prog load", load)
    defer { close(program) }
    _ = try systemCall("bpf prog attach", path: cgroup) {
      csystem_cgroup_program_attach(program, directory, ingress ? 1 : 0)
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
