import PowerSource

/// The human-readable power section of `backgrounder status`, one string per line.
///
///     Power: on mains power, battery 57 %
///       AC     Mains    online 1
///       BAT0   Battery  Charging, 57 %
func renderPower(_ status: PowerStatus) -> [String] {
  var lines = ["Power: " + powerSummary(status)]
  if status.supplies.isEmpty {
    lines.append(
      "  the kernel reports no power supply (a desktop, server or VM): nothing here runs on "
        + "battery, so requires-charging jobs run")
  }
  let nameWidth = status.supplies.map(\.name.count).max() ?? 0
  let typeWidth = status.supplies.map { ($0.type ?? "?").count }.max() ?? 0
  for supply in status.supplies {
    let name = supply.name.padding(toLength: nameWidth)
    let type = (supply.type ?? "?").padding(toLength: typeWidth)
    lines.append("  \(name)  \(type)  \(supplyDetails(supply))")
  }
  for problem in status.problems {
    lines.append("  warning: \(problem)")
  }
  return lines
}

/// What the power state is now, in words a user can act on (also the power part of a
/// `--watch` line): "on mains power (no battery)", "no battery (counts as on power)", "on mains
/// power, battery 57 %", "on battery, 54 %, discharging". Jobs with `requires-charging` run
/// exactly when it does not say "discharging". "On mains power" only when a supply says so: a
/// machine whose kernel reports no supply at all (a desktop, server or VM) has no external
/// power to report, and runs `requires-charging` jobs because nothing in it runs on battery.
func powerSummary(_ status: PowerStatus) -> String {
  let hasBattery =
    status.batteryPercent != nil
    || status.supplies.contains { $0.type == "Battery" && $0.scope != "Device" }
  let level = status.batteryPercent.map(formatPercent) ?? "level unknown"
  let low = status.batteryLow ? ", low" : ""
  guard hasBattery else {
    let reportedLow = status.batteryLow ? ", battery reported low" : ""
    if status.externalPower { return "on mains power (no battery)" + reportedLow }
    return status.charging
      ? "no battery (counts as on power)" + reportedLow
      : "no power supply online and no readable battery"
  }
  if status.externalPower { return "on mains power, battery \(level)\(low)" }
  if status.charging { return "on battery, \(level), not discharging (counts as on power)\(low)" }
  return "on battery, \(level), discharging\(low)"
}

private func supplyDetails(_ supply: PowerSupplyStatus) -> String {
  var parts: [String] = []
  if let online = supply.online { parts.append("online \(online)") }
  if let status = supply.status { parts.append(status) }
  if let capacity = supply.capacity { parts.append("\(capacity) %") }
  switch supply.scope {
  case "Device": parts.append("peripheral, ignored")
  case nil: parts.append("scope unknown")
  default: break
  }
  return parts.isEmpty ? "-" : parts.joined(separator: ", ")
}

private func formatPercent(_ percent: Double) -> String {
  percent == percent.rounded() ? "\(Int(percent)) %" : "\(percent) %"
}

extension String {
  fileprivate func padding(toLength length: Int) -> String {
    count >= length ? self : self + String(repeating: " ", count: length - count)
  }
}
