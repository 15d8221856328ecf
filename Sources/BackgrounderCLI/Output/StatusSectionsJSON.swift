import Backgrounder
import PowerSource

/// The `daemon`, `health` and `power` sections of `status --json`, written directly: the same
/// bytes as `JSONEncoder` makes of them (`StatusJSONTests` holds the two to it), without its
/// cost in a one-shot process — each keyed container `JSONEncoder` makes is a generic type the
/// Swift runtime instantiates from a mangled name, looking its conformances up by scanning every
/// conformance record of the binary (issue #35). What only a daemon's answer carries
/// (`inhibitors`, `view`) still goes through ``Output/json(_:)``. Keys in sorted order, as
/// `Output.json` sorts them.
enum StatusSectionsJSON {
  static func append(_ report: DaemonSection.Report, to json: inout JSONText) throws {
    json.ascii("{")
    var first = true
    func key(_ name: StaticString) {
      json.key(name, first: first)
      first = false
    }
    if let error = report.error {
      key("error")
      json.string(error)
    }
    if let inhibitors = report.inhibitors {
      key("inhibitors")
      json.raw(try Output.json(inhibitors))
    }
    key("pid")
    if let pid = report.pid { json.int(Int(pid)) } else { json.null() }
    if let runBytes = report.runBytes {
      key("runBytes")
      json.string(runBytes)
    }
    if let runBytesReason = report.runBytesReason {
      key("runBytesReason")
      json.string(runBytesReason)
    }
    key("running")
    json.bool(report.running)
    key("since")
    json.string(report.since)
    key("storeError")
    json.string(report.storeError)
    key("version")
    json.string(report.version)
    if let view = report.view {
      key("view")
      json.raw(try Output.json(view))
    }
    if let wakeAlarms = report.wakeAlarms {
      key("wakeAlarms")
      json.string(wakeAlarms)
    }
    if let wakeAlarmsReason = report.wakeAlarmsReason {
      key("wakeAlarmsReason")
      json.string(wakeAlarmsReason)
    }
    json.ascii("}")
  }

  static func append(_ report: HealthReport, to json: inout JSONText) {
    json.ascii("{")
    json.key("healthy", first: true)
    json.bool(report.healthy)
    json.key("problems")
    json.array(report.problems) { problem, json in
      json.ascii("{")
      json.key("detectedAt", first: true)
      json.string(problem.detectedAt.map(ISO8601.string))
      json.key("kind")
      json.string(problem.kind.rawValue)
      json.key("message")
      json.string(problem.message)
      json.key("taskId")
      json.string(problem.taskId?.rawValue)
      json.ascii("}")
    }
    json.ascii("}")
  }

  static func append(_ power: PowerStatus, to json: inout JSONText) {
    json.ascii("{")
    json.key("batteryLow", first: true)
    json.bool(power.batteryLow)
    json.key("batteryPercent")
    if let percent = power.batteryPercent { json.number(percent) } else { json.null() }
    json.key("charging")
    json.bool(power.charging)
    json.key("externalPower")
    json.bool(power.externalPower)
    json.key("supplies")
    json.array(power.supplies) { supply, json in
      json.ascii("{")
      json.key("capacity", first: true)
      json.int(supply.capacity)
      json.key("name")
      json.string(supply.name)
      json.key("online")
      json.int(supply.online)
      json.key("scope")
      json.string(supply.scope)
      json.key("status")
      json.string(supply.status)
      json.key("type")
      json.string(supply.type)
      json.ascii("}")
    }
    json.ascii("}")
  }
}
