import BackgrounderLinux
import Foundation

extension Doctor {
  /// The `requires-mount` path of `job`, against this process's mount table (the daemon's
  /// when `doctor` runs in its mount namespace): a symbolic link never counts as mounted (a
  /// problem); a path that does not exist is a note (a mounter such as udisks creates its
  /// directory when it mounts, or the path has a typo).
  func checkMount(of job: JobDefinition, mountInfo: String = "/proc/self/mountinfo")
    -> [DoctorFinding]
  {
    guard let path = job.requiresMount else { return [] }
    let subject = "job \(job.id)"
    if (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil {
      return [
        .init(
          .problem, subject,
          "requires-mount \(path) is a symbolic link: never a mount point, the job would wait "
            + "forever; name the mount point itself")
      ]
    }
    guard FileManager.default.fileExists(atPath: path) else {
      return [
        .init(
          .note, subject,
          "requires-mount \(path) does not exist: the job waits until something is mounted "
            + "there (a mounter such as udisks creates it; otherwise check the path)")
      ]
    }
    guard let table = FileManager.default.contents(atPath: mountInfo) else {
      return [.init(.note, subject, "cannot read \(mountInfo) to check requires-mount \(path)")]
    }
    let mounted = MountInfo.mountPoints(table).contains(path)
    return [
      .init(
        .ok, subject,
        mounted
          ? "requires-mount \(path) is mounted"
          : "requires-mount \(path) is not mounted now: the job waits until it is")
    ]
  }
}
