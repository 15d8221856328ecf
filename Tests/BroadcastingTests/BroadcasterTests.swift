import Broadcasting
import Locking
import Testing

@Suite struct BroadcasterTests {
  /// Synchronous observers next to stream subscribers (what `status --watch` prints from).
  @Test func observerGetsEveryLaterValueInOrderAndNothingAfterFinish() async {
    var broadcaster = Broadcaster<Int>()
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

  @Test func aCurrentValueIsReplayedToEachNewSubscriberAndAnEventIsNot() async {
    var status = Broadcaster<String>(latest: "at creation")
    var events = Broadcaster<String>(latest: "at creation", replaysLatest: false)
    let early = (status: status.subscribe { _ in }, event: events.subscribe { _ in })
    for value in ["first", "second"] {
      for recipient in status.publish(value) { recipient.deliver(value) }
      for recipient in events.publish(value) { recipient.deliver(value) }
    }
    let late = (status: status.subscribe { _ in }, event: events.subscribe { _ in })
    for stream in status.finish() + events.finish() { stream.finish() }
    #expect(await collect(early.status) == ["at creation", "first", "second"])
    #expect(await collect(early.event) == ["first", "second"])
    #expect(await collect(late.status) == ["second"])
    #expect(await collect(late.event) == [])
    #expect(status.latest == "second")
  }

  @Test func aSubscriberAfterFinishGetsAnEndedStream() async {
    var broadcaster = Broadcaster<Int>(latest: 7)
    for stream in broadcaster.finish() { stream.finish() }
    let stream = broadcaster.subscribe { _ in Issue.record("an ended stream was registered") }
    #expect(await collect(stream) == [7], "the latest value, then the end")
    #expect(broadcaster.publish(8).isEmpty)
  }

  @Test func aStreamThatEndsIsUnsubscribedThroughItsTerminationHandler() async {
    let owner = Lock(Broadcaster<Int>())
    let terminated = Lock<[Int]>([])
    let stream = owner.withLock { broadcaster in
      broadcaster.subscribe { id in
        terminated.withLock { $0.append(id) }
        owner.withLock { $0.unsubscribe(id) }
      }
    }
    #expect(owner.withLock { $0.publish(0) }.count == 1)
    let consumer = Task { await collect(stream) }
    consumer.cancel()
    _ = await consumer.value
    #expect(terminated.withLock { $0.count } == 1)
    #expect(owner.withLock { $0.publish(1) }.isEmpty, "the ended stream is no recipient")
  }

  @Test func aSlowSubscriberKeepsTheNewestValuesUpToTheLimit() async {
    var broadcaster = Broadcaster<Int>(bufferLimit: 3)
    let stream = broadcaster.subscribe { _ in }
    for value in 1...10 {
      for recipient in broadcaster.publish(value) { recipient.deliver(value) }
    }
    for continuation in broadcaster.finish() { continuation.finish() }
    #expect(await collect(stream) == [8, 9, 10])
  }

  private func collect<T>(_ stream: AsyncStream<T>) async -> [T] {
    var values: [T] = []
    for await value in stream { values.append(value) }
    return values
  }
}
