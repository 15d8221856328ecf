/// The splay of a calendar elapse (`random-delay`, systemd's `RandomizedDelaySec=`): a delay in
/// [0, maximum], random for each elapse, or fixed for one machine and job
/// (`fixed-random-delay`, systemd's `FixedRandomDelay=`) so that a fleet spreads and each box
/// keeps its slot.
public enum RandomDelay {
  /// The delay fixed by `machineId` (`/etc/machine-id`) and `jobId`: the same on every start
  /// of this machine, different between machines.
  public static func fixed(machineId: String, jobId: String, maximum: Duration) -> Duration {
    let range = max(0, maximum.nanoseconds)
    guard range > 0 else { return .zero }
    // FNV-1a over both ids, then a SplitMix64 finalizer: stable across processes and
    // versions, unlike `Hasher`, which is seeded per process.
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in Array(machineId.utf8) + [0] + Array(jobId.utf8) {
      hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }
    hash = (hash ^ (hash >> 30)) &* 0xBF58_476D_1CE4_E5B9
    hash = (hash ^ (hash >> 27)) &* 0x94D0_49BB_1331_11EB
    hash ^= hash >> 31
    return .nanoseconds(Int64(hash % (UInt64(range) + 1)))
  }

  /// A delay drawn uniformly from [0, maximum] with `generator`.
  public static func random(
    maximum: Duration, using generator: inout some RandomNumberGenerator
  ) -> Duration {
    let range = max(0, maximum.nanoseconds)
    return .nanoseconds(Int64.random(in: 0...range, using: &generator))
  }
}
