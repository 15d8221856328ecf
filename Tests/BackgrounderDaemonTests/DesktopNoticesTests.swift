import Backgrounder
import Foundation
import Locking
import Logging
import Testing

@testable import BackgrounderDaemon

/// `[notify] desktop`: the config key, the failure episodes, and the notices' words and
/// delivery (a fake sender; the real session bus is in IntegrationTests' DaemonNoticesTests).
@Suite struct DesktopNoticesTests {
  private let t0 = Date(timeIntervalSince1970: 1_700_000_000)
  private let id = try! TaskId("dev.example.backup")
  private let other = try! TaskId("dev.example.sync")

  @Test func theNotifyTableIsOptInAndCheckedByKey() throws {
    let off = try ConfigurationLoader.parse("", path: "n.toml")
    #expect(!off.desktopNotices)
    let on = try ConfigurationLoader.parse("[notify]\ndesktop = true\n", path: "n.toml")
    #expect(on.desktopNotices)

    for (text, key) in [
      ("[notify]\n\ndesktop = \"yes\"\n", "notify.desktop"),
      ("[notify]\ndesktop = true\nsound = true\n", "notify.sound"),
    ] {
      var problem: ConfigurationError?
      do {
        _ = try ConfigurationLoader.parse(text, path: "n.toml")
      } catch {
        problem = error
      }
      #expect(problem?.file == "n.toml")
      #expect(problem?.key == key, "\(String(describing: problem))")
      #expect(problem?.line == 3, "\(String(describing: problem))")
    }
  }

  @Test func oneFailureNoticePerEpisodeUntilASuccess() {
    var episodes = NoticeEpisodes()
    let success = t0.addingTimeInterval(60)
    let failures: [(TaskId, Date?)] = [
      (id, nil), (id, nil), (other, nil), (id, success), (id, success),
    ]
    let begins = failures.map {
      episodes.failureBeginsEpisode(job: $0.0, lastSuccessAt: $0.1)
    }
    // The first failure, not the next; another job's; the first after a success, not the next.
    #expect(begins == [true, false, true, true, false])
  }

  @Test func deliversOnePerEpisodeWithTheJobAndReasonAndLogsAMissingServerOnce() async {
    let sent = Lock<[DesktopNotices.Notice]>([])
    let absent = Lock(true)
    let notices = DesktopNotices(logger: Logger(label: "test")) { notice, _ throws(NoticeRefusal) in
      if absent.withLock({ $0 }) {
        throw NoticeRefusal(isAbsent: true, description: "Notify: ServiceUnknown")
      }
      sent.withLock { $0.append(notice) }
    }
    let running = Task { await notices.run() }
    notices.failed(job: id, reason: "exit status 3: disk full\nmore", lastSuccessAt: nil)
    notices.failed(job: id, reason: "exit status 3: disk full", lastSuccessAt: nil)
    notices.finish()
    await running.value
    #expect(sent.withLock { $0 }.isEmpty)
    #expect(notices.availability == .absent("Notify: ServiceUnknown"))

    absent.withLock { $0 = false }
    let again = DesktopNotices(logger: Logger(label: "test")) { notice, _ throws(NoticeRefusal) in
      sent.withLock { $0.append(notice) }
    }
    let second = Task { await again.run() }
    again.failed(job: id, reason: "exit status 3: disk full\nmore", lastSuccessAt: nil)
    again.failed(job: id, reason: "exit status 3: disk full", lastSuccessAt: nil)
    again.stale(job: id, message: "no success for 3 d: failing with exit status 3")
    again.failed(job: id, reason: "exit status 4", lastSuccessAt: t0)
    again.finish()
    await second.value
    #expect(
      sent.withLock { $0 } == [
        .init(job: id, summary: "Job failed: \(id)", body: "\(id): exit status 3: disk full"),
        .init(
          job: id, summary: "Job is stale: \(id)",
          body: "\(id): no success for 3 d: failing with exit status 3"),
        .init(job: id, summary: "Job failed: \(id)", body: "\(id): exit status 4"),
      ])
    #expect(again.availability == .delivered)
  }
}
