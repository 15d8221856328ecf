import Locking
import Testing

@testable import Reachability

/// Synchronous observers next to stream subscribers (what `status --watch` prints from).
@Suite struct CurrentValueBroadcasterTests {
  @Test func observerGetsEveryLaterValueInOrderAndNothingAfterFinish() async {
    var broadcaster = CurrentValueBroadcaster<Int>()
    let seen = Lock<[Int]>([])
    _ = broadcaster.publish(1)
    broadcaster.observe { value in seen.withLock { $0.append(value) } }
    let stream = broadcaster.subscribe { _ in }
    for value in 2...4 {
      for recipient in broadcaster.publish(value) { recipient.deliver(value) }
    }
    let streams = broadcaster.finish()
    #expect(streams.count == 1, "only the stream is handed back to be finished")
    for continuation in streams { continuation.finish() }
    #expect(broadcaster.publish(5).isEmpty, "finish drops the observer")
    #expect(seen.withLock { $0 } == [2, 3, 4])
    var streamed: [Int] = []
    for await value in stream { streamed.append(value) }
    #expect(streamed == [1, 2, 3, 4])
  }
}
