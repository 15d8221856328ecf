extension StatusDocument {
  /// The document as `Output.json` would write it (the same bytes, keys sorted), with the task
  /// list written by ``TaskListJSON`` and the network by ``JSONLineWriter``: through
  /// `JSONEncoder`, 1,000 tasks took most of the time of a `status --json`.
  func json() throws -> String {
    String(decoding: try jsonLine().dropLast(), as: UTF8.self)
  }

  /// ``json()``'s bytes followed by a newline, as `status --json` prints them.
  func jsonLine() throws -> [UInt8] {
    var json = JSONText(capacity: 1024 + 640 * (tasks?.count ?? 0))
    json.ascii("{")
    json.key("daemon", first: true)
    try StatusSectionsJSON.append(daemon, to: &json)
    json.key("health")
    StatusSectionsJSON.append(health, to: &json)
    if let meteredBudget = daemon.meteredBudget {
      json.key("meteredBudget")
      json.raw(try Output.json(meteredBudget))
    }
    json.key("network")
    if let daemonView {
      json.raw(try Output.json(DaemonNetworkView(view: daemonView)))
    } else {
      var network = JSONLineWriter()
      network.network(self.network)
      json.raw(bytes: network.bytes)
    }
    if let observedAt {
      json.key("observedAt")
      json.string(observedAt)
    }
    json.key("power")
    if let daemonView {
      json.raw(try Output.json(DaemonPowerView(view: daemonView)))
    } else {
      StatusSectionsJSON.append(power, to: &json)
    }
    json.key("tasks")
    TaskListJSON.append(tasks, to: &json)
    json.key("viewOf")
    json.string(viewOf.rawValue)
    json.ascii("}")
    json.ascii("\n")
    return json.bytes
  }
}
