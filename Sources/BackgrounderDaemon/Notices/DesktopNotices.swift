import Backgrounder
import Foundation
import Locking
import Logging
import SystemCalls

/// Freedesktop desktop notices of failures and stale jobs (`[notify] desktop = true`): one per
/// episode (``NoticeEpisodes`` for failures, ``AlertTracker``'s stale episodes), app name
/// `backgrounder`, the job id and the reason in the body.
///
/// Deciding is synchronous and cheap; delivering is not: notices wait in a bounded queue (the
/// oldest kept, later ones dropped and logged) and each is sent on a thread of its own, bounded
/// by ``timeout``, so neither the dispatcher nor the alert watch waits for the session bus. A
/// missing bus or notification server is logged once, never fatal.
final class DesktopNotices: Sendable {
  /// One notice to deliver.
  struct Notice: Sendable, Equatable {
    var job: TaskId
    var summary: String
    var body: String
  }

  /// What the last delivery found.
  enum Availability: Sendable, Equatable {
    case unknown
    case delivered
    case absent(String)
    case refused(String)
  }

  typealias Send = @Sendable (Notice, Duration) throws(NoticeRefusal) -> Void

  /// How many notices may wait for delivery.
  static let queueLimit = 16

  let timeout: Duration
  private let logger: Logger
  private let send: Send
  private let episodes = Lock(NoticeEpisodes())
  private let state = Lock<(availability: Availability, logged: Set<String>)>((.unknown, []))
  private let queue: AsyncStream<Notice>
  private let enqueue: AsyncStream<Notice>.Continuation

  init(
    logger: Logger, timeout: Duration = .seconds(3),
    send: @escaping Send = { notice, timeout throws(NoticeRefusal) in
      _ = try DesktopNoticeCall.notify(
        summary: notice.summary, body: notice.body, timeout: timeout)
    }
  ) {
    self.logger = logger
    self.timeout = timeout
    self.send = send
    (queue, enqueue) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(Self.queueLimit))
  }

  /// What the last delivery found.
  var availability: Availability { state.withLock { $0.availability } }

  /// A run of `job` ended in failure (or its retries were exhausted): a notice when this
  /// begins a failure episode.
  func failed(job: TaskId, reason: String, lastSuccessAt: Date?) {
    let new = episodes.withLock {
      $0.failureBeginsEpisode(job: job, lastSuccessAt: lastSuccessAt)
    }
    guard new else { return }
    let why = reason.split(separator: "\n", omittingEmptySubsequences: true).first ?? "failed"
    post(Notice(job: job, summary: "Job failed: \(job)", body: "\(job): \(why)"))
  }

  /// `job` became stale (once per stale episode): `message` says since when and why.
  func stale(job: TaskId, message: String) {
    post(Notice(job: job, summary: "Job is stale: \(job)", body: "\(job): \(message)"))
  }

  /// Delivers the queued notices one at a time until ``finish()``.
  func run() async {
    for await notice in queue {
      let (send, timeout) = (self.send, self.timeout)
      let refusal: NoticeRefusal?
      do {
        refusal = try await SystemThread.runBlocking(name: "bg-notice") {
          do throws(NoticeRefusal) {
            try send(notice, timeout)
            return nil
          } catch {
            return error
          }
        }
      } catch {
        refusal = NoticeRefusal(isAbsent: false, description: "no thread to send it: \(error)")
      }
      if let refusal {
        note(refusal)
      } else {
        state.withLock { $0.availability = .delivered }
        logger.info("desktop notice sent", metadata: ["job": "\(notice.job)"])
      }
    }
  }

  /// Ends ``run()`` once the queue is empty.
  func finish() { enqueue.finish() }

  private func post(_ notice: Notice) {
    if case .dropped = enqueue.yield(notice) {
      logger.warning(
        "desktop notice dropped: \(Self.queueLimit) are waiting already",
        metadata: ["job": "\(notice.job)"])
    }
  }

  private func note(_ refusal: NoticeRefusal) {
    let first = state.withLock { state in
      state.availability =
        refusal.isAbsent ? .absent(refusal.description) : .refused(refusal.description)
      return state.logged.insert(refusal.description).inserted
    }
    guard first else { return }
    logger.warning(
      refusal.isAbsent
        ? "no desktop notification server on the session bus: notices are not shown"
        : "the desktop notification server refused a notice",
      metadata: ["reason": "\(refusal.description)"])
  }
}
