extension StatusDocument {
  /// The document as `Output.json` would write it (the same bytes, keys sorted), with the task
  /// list written by ``TaskListJSON``: through `JSONEncoder`, 1,000 tasks took most of the time
  /// of a `status --json`.
  func json() throws -> String {
    var json = JSONText(capacity: 512 + 512 * (tasks?.count ?? 0))
    json.raw("{")
    json.key("daemon", first: true)
    json.raw(try Output.json(daemon))
    json.key("health")
    json.raw(try Output.json(health))
    json.key("network")
    json.raw(try Output.json(network))
    if let observedAt {
      json.key("observedAt")
      json.string(observedAt)
    }
    json.key("power")
    json.raw(try Output.json(power))
    json.key("tasks")
    TaskListJSON.append(tasks, to: &json)
    json.raw("}")
    return String(decoding: json.bytes, as: UTF8.self)
  }
}
