import SystemCalls
import TOML

/// A job's digest: what its `[[job]]` table says (keys and values, in the order written; not
/// comments, spacing or where it was written) and which build of the daemon read it.
///
/// The daemon stores it with the job (``StoredJob/digestKey``). On a start or reload, a config
/// job whose digest is the stored one is unchanged, known without encoding its definition to
/// compare (most of a restart's CPU with 10,000 jobs). A different digest proves nothing either
/// way: the definitions are then compared as before, and an unchanged one gets the new digest.
/// The build is part of it because a new build may read the same table differently (a new
/// default): the first start of each build compares every job once.
enum JobDigest {
  /// The digest of `table` read by this build, or nil when this build has no build ID (then
  /// every job is compared).
  static func of(_ table: TOMLTable) -> String? {
    guard let build = ProgramBuildID.hex else { return nil }
    var hasher = StableHasher()
    hasher.combine(build)
    hasher.combine(table)
    return hasher.hex
  }
}

/// FNV-1a, 128 bits: the same bytes give the same digest in every process and on every machine
/// (unlike `Hasher`, seeded per process). Not a cryptographic hash: the config file's owner
/// writes both sides of every comparison, so a collision is only ever an accident, and at
/// 128 bits one is not expected among the jobs of any machine.
struct StableHasher {
  private var state: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
  private static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013b

  mutating func combine<Bytes: Sequence<UInt8>>(bytes: Bytes) {
    for byte in bytes {
      state ^= UInt128(byte)
      state &*= Self.prime
    }
  }

  mutating func combine(_ value: UInt64) {
    var value = value
    for _ in 0..<8 {
      combine(bytes: CollectionOfOne(UInt8(truncatingIfNeeded: value)))
      value >>= 8
    }
  }

  /// A string, length first (so that "ab","c" and "a","bc" differ).
  mutating func combine(_ text: String) {
    combine(UInt64(text.utf8.count))
    combine(bytes: text.utf8)
  }

  mutating func combine(_ table: TOMLTable) {
    combine(UInt64(table.entries.count))
    for entry in table.entries {
      combine(entry.key)
      combine(entry.node.value)
    }
  }

  /// A value, its type first.
  mutating func combine(_ value: TOMLValue) {
    switch value {
    case .string(let text):
      combine(1)
      combine(text)
    case .integer(let number):
      combine(2)
      combine(UInt64(bitPattern: number))
    case .float(let number):
      combine(3)
      combine(number.bitPattern)
    case .boolean(let flag):
      combine(4)
      combine(flag ? 1 : 0)
    case .dateTime(let instant):
      combine(5)
      combine(instant.description)
    case .array(let elements):
      combine(6)
      combine(UInt64(elements.count))
      for element in elements { combine(element.value) }
    case .table(let table):
      combine(7)
      combine(table)
    }
  }

  /// 32 lowercase hexadecimal digits.
  var hex: String {
    // By hand: `String(_:radix:)` of a `UInt128` took 3 % of a 10,000-job restart.
    var value = state
    return String(unsafeUninitializedCapacity: 32) { buffer in
      for index in stride(from: 31, through: 0, by: -1) {
        let digit = UInt8(truncatingIfNeeded: value & 0xf)
        buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
        value >>= 4
      }
      return 32
    }
  }
}
