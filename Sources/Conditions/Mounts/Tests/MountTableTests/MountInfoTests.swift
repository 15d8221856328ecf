import Backgrounder
import Foundation
import Logging
import MountTable
import Testing

/// `/proc/self/mountinfo` parsing (pure), and the monitor on this process's real mount table.
@Suite(.timeLimit(.minutes(3)))
struct MountInfoTests {
  static let sample = """
    22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
    28 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro
    95 28 8:17 / /media/My\\040Backup rw,nosuid,nodev,relatime shared:50 - vfat /dev/sdb1 rw
    96 28 8:2 /srv/data /mnt/tab\\011and\\012newline\\134back rw,relatime shared:1 - ext4 /dev/sda2 rw
    97 28 0:50 / /mnt/not\\09escape rw - tmpfs tmpfs rw
    98 28 0:51 / /mnt/caf\\303\\251 rw - tmpfs tmpfs rw
    short line
    """

  @Test func readsMountPointsAndUnescapesOctal() {
    #expect(
      MountInfo.mountPoints(Array(Self.sample.utf8)) == [
        "/proc", "/", "/media/My Backup", "/mnt/tab\tand\nnewline\\back", "/mnt/not\\09escape",
        "/mnt/café",
      ])
    #expect(MountInfo.mountPoints([UInt8]()) == [])
  }

  @Test("the monitor reads this process's mount table and is unknown before and after")
  func monitorReadsTheRealTable() async throws {
    let monitor = MountTableMonitor(logger: Logger(label: "test"))
    #expect(monitor.current == .unconfigured)
    let updates = monitor.updates()
    let run = Task { try await monitor.run() }
    var known: MountConditions?
    for await conditions in updates where conditions.isKnown {
      known = conditions
      break
    }
    #expect(known?.isMounted("/") == true)
    #expect(known?.isMounted("/proc") == true)
    #expect(known?.isMounted("/proc/") == false)
    run.cancel()
    try await run.value
    #expect(monitor.current == .unconfigured)
  }
}
