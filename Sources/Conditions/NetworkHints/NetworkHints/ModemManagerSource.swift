/// The life of the ModemManager hint source, by the same rules as ``NetworkManagerSource``
/// (see ``HintSourceLifecycle``): its per-link hints are roaming per bearer interface; back
/// after a restart, it probes its modems again, so a link's stale answer stays until it answers
/// for it or the limit passes.
typealias ModemManagerSource = HintSourceLifecycle<ModemManagerSnapshot>

extension ModemManagerSnapshot: HintSourceAnswer {
  var linkHints: [String: Bool] {
    get { roaming }
    set { roaming = newValue }
  }

  /// ModemManager has no start-up phase of its own to wait for.
  var isStartingUp: Bool { false }
}
