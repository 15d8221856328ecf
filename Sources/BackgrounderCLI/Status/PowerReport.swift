import PowerSource

/// The human-readable power section of `backgrounder status`, one string per line.
///
///     Power: on external power, requiresCharging satisfied, battery 57 % (not low)
///       AC     Mains    online 1
///       BAT0   Battery  Charging, 57 %
func renderPower(_ status: PowerStatus) -> [String] {
  var lines = ["Power: " + powerSummary(status)]
  if status.supplies.isEmpty {
    lines.append("  no power supplies (desktop or VM: counts as on power)")
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

/// One line for `--watch`: what the power state is now.
func powerSummary(_ status: PowerStatus) -> String {
  let source = status.externalPower ? "on external power" : "no external power"
  let charging =
    status.charging ? "requiresCharging satisfied" : "requiresCharging not satisfied"
  let battery: String
  if let percent = status.batteryPercent {
    battery = "battery \(formatPercent(percent)) (\(status.batteryLow ? "low" : "not low"))"
  } else {
    battery = status.batteryLow ? "battery level unknown (reported low)" : "no readable battery"
  }
  return "\(source), \(charging), \(battery)"
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
