import Netlink

/// The model's answer to "where does traffic to the probe destination leave?": the kernel's
/// policy-routing walk (`fib_rules_lookup`) over the rules, the default routes of each table and
/// nexthop objects, for a locally generated packet (input interface `lo`, no firewall mark, no
/// source address). Only default routes are known, so a more specific route covering the
/// destination is not seen here; live, the kernel's own lookup answers instead.
extension ReachabilityModel {
  private enum TableResult {
    case none
    case unreachable
    case route(Candidate)
  }

  /// The kernel's rules at boot, used until a rule dump says otherwise.
  private static let bootRules: [UInt32: UInt32] = [
    0: NetlinkConstant.tableLocal, 32766: NetlinkConstant.tableMain,
    32767: NetlinkConstant.tableDefault,
  ]

  /// The rules of `family` in evaluation order.
  func effectiveRules(family: UInt8) -> [RuleInfo] {
    let known = tables.rules.filter { $0.family == family }
    if knowsRules { return known }
    let boot = Self.bootRules.map { RuleInfo(family: family, priority: $0.key, table: $0.value) }
    return (boot + known).sorted { $0.priority < $1.priority }
  }

  /// The egress of `family` the rules lead to, or `nil` (no route, or an unreachable one).
  func modelEgress(family: UInt8, usable: Set<FamilyLink>) -> Candidate? {
    let destination = probeDestinations.destination(family: family)
    let rules = effectiveRules(family: family)
    var position = 0
    while position < rules.count {
      let rule = rules[position]
      position += 1
      guard Self.matches(rule, destination: destination) else { continue }
      switch rule.action {
      case NetlinkConstant.ruleActionGoto:
        if let target = rule.gotoPriority,
          let index = rules.firstIndex(where: { $0.priority == target }), index >= position
        {
          position = index
        }
      case NetlinkConstant.ruleActionNop:
        continue
      case NetlinkConstant.ruleActionTable:
        switch lookUp(table: rule.table, family: family, usable: usable) {
        case .none: continue
        case .unreachable: return nil
        case .route(let candidate):
          if rule.suppressPrefixLength != nil { continue }  // a default route has prefix 0
          return candidate
        }
      default:
        return nil  // blackhole, unreachable, prohibit
      }
    }
    return nil
  }

  /// `fib_rule_match` for a locally generated lookup of `destination`.
  private static func matches(_ rule: RuleInfo, destination: [UInt8]) -> Bool {
    let selected =
      !rule.hasUnmatchableSelector && rule.sourcePrefixLength == 0
      && rule.outputInterface == nil && (rule.inputInterface ?? "lo") == "lo"
      && rule.firewallMark & rule.firewallMask == 0
      && prefix(rule.destination, length: rule.destinationPrefixLength, contains: destination)
    return rule.isInverted ? !selected : selected
  }

  private static func prefix(_ network: [UInt8], length: UInt8, contains address: [UInt8])
    -> Bool
  {
    guard length > 0 else { return true }
    guard network.count == address.count, Int(length) <= network.count * 8 else { return false }
    let whole = Int(length) / 8
    guard network.prefix(whole) == address.prefix(whole) else { return false }
    let bits = Int(length) % 8
    guard bits > 0 else { return true }
    let mask = UInt8(0xFF) << (8 - bits)
    return network[whole] & mask == address[whole] & mask
  }

  /// The default routes of `table`, lowest metric first: the first usable unicast one, or
  /// unreachable when a blackhole / unreachable / prohibit route comes first, none when a throw
  /// route comes first. Unicast routes over unusable links are passed over.
  private func lookUp(table: UInt32, family: UInt8, usable: Set<FamilyLink>) -> TableResult {
    // Lowest metric first; among equal metrics, the kernel's order. A route with a TOS is
    // not used by a lookup without one.
    let routes = tables.routes.enumerated().filter {
      $0.element.family == family && $0.element.table == table && $0.element.tos == 0
    }.sorted { ($0.element.metric, $0.offset) < ($1.element.metric, $1.offset) }.map(\.element)
    for route in routes {
      if route.type == 9 { return .none }  // RTN_THROW: on to the next rule
      if route.type != NetlinkConstant.routeTypeUnicast || tables.isBlackhole(route) {
        return .unreachable
      }
      for index in tables.interfaces(of: route)
      where usable.contains(FamilyLink(family: family, index: index)) {
        return .route(Candidate(metric: route.metric, family: family, interfaceIndex: index))
      }
    }
    return .none
  }
}
