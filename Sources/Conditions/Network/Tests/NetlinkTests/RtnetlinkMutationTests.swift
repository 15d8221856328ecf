import Netlink
import Testing

/// Mutates real captured messages and checks each outcome against what the mutation implies:
/// a clear error naming the damaged field, or a decoded value carrying the mutated value.
@Suite struct RtnetlinkMutationTests {
  /// Messages of the fixtures that decode to a link, address or route object.
  static func objectSeeds() throws -> [(bytes: [UInt8], decoded: RtnetlinkMessage)] {
    let messages =
      try FixtureFiles.messages("wireguard-over-tethering") + FixtureFiles.messages("multipath")
      + FixtureFiles.messages("real-veth-dual-stack-link-down")
    return try messages.compactMap { message in
      let decoded = try RtnetlinkParser.parse(message)
      switch decoded.payload {
      case .link, .address, .route: return (Array(message), decoded)
      default: return nil
      }
    }
  }

  @Test func cuttingAMessageShortNamesTheMissingBytes() throws {
    let seeds = try Self.objectSeeds()
    var counts = (empty: 0, truncatedHeader: 0, exceeds: 0)
    var cuts = 0
    for seed in seeds {
      for length in 0..<seed.bytes.count {
        cuts += 1
        let frames = NetlinkFraming.frames(in: Array(seed.bytes.prefix(length)))
        if length == 0 {
          #expect(frames.isEmpty)
          counts.empty += 1
        } else if length < 16 {
          #expect(failures(frames) == ["truncated header: only \(length) bytes"])
          counts.truncatedHeader += 1
        } else {
          #expect(
            failures(frames) == [
              "nlmsg_len \(seed.bytes.count) exceeds the \(length) bytes available"
            ])
          counts.exceeds += 1
        }
      }
    }
    #expect(seeds.count > 10)
    #expect(counts.empty == seeds.count)
    #expect(counts.truncatedHeader == 15 * seeds.count)
    #expect(counts.empty + counts.truncatedHeader + counts.exceeds == cuts)
  }

  @Test func aWrongNlmsgLenIsNamedWithTheRealSize() throws {
    var rejected = 0
    var mutations = 0
    for seed in try Self.objectSeeds() {
      let size = seed.bytes.count
      for claimed in Array(0..<size) + [size + 1, size + 4, 0xFFFF_FFFF] {
        mutations += 1
        var bytes = seed.bytes
        store32(UInt32(claimed), into: &bytes, at: 0)
        let error = #expect(throws: MalformedMessage.self) { try RtnetlinkParser.parse(bytes[...]) }
        #expect(error?.reason == "nlmsg_len \(claimed) does not match the \(size)-byte message")
        #expect(error?.messageType == seed.decoded.header.type)
        if error != nil { rejected += 1 }
      }
    }
    #expect(rejected == mutations)
  }

  @Test func aCorruptAttributeLengthIsNamedWithItsType() throws {
    var rejected = 0
    var mutations = 0
    for seed in try Self.objectSeeds() {
      for attribute in attributes(of: seed) {
        let remaining = seed.bytes.count - attribute.offset
        for length in [0, 3, remaining + 1, 0xFFFF] {
          mutations += 1
          var bytes = seed.bytes
          bytes[attribute.offset] = UInt8(length & 0xFF)
          bytes[attribute.offset + 1] = UInt8(length >> 8)
          let error = #expect(throws: MalformedMessage.self) {
            try RtnetlinkParser.parse(bytes[...])
          }
          #expect(
            error?.reason
              == "attribute type \(attribute.type & 0x3FFF) has length \(length), "
              + "outside 4...\(remaining)")
          if error != nil { rejected += 1 }
        }
      }
    }
    #expect(mutations > 100)
    #expect(rejected == mutations)
  }

  @Test func aMutatedFieldDecodesToTheMutatedValue() throws {
    var generator = SplitMix64(seed: 0xF1E1D)
    var checked = (link: 0, address: 0, route: 0)
    for seed in try Self.objectSeeds() {
      for _ in 0..<50 {
        let value = UInt32(truncatingIfNeeded: generator.next()) & 0x7FFF_FFFF | 1
        var bytes = seed.bytes
        switch seed.decoded.payload {
        case .link(var link, let action):
          store32(value, into: &bytes, at: 16 + 4)  // ifi_index
          link.index = Int32(value)
          #expect(try RtnetlinkParser.parse(bytes[...]).payload == .link(link, action))
          checked.link += 1
        case .address(var address, let action):
          store32(value, into: &bytes, at: 16 + 4)  // ifa_index
          address.interfaceIndex = Int32(value)
          #expect(try RtnetlinkParser.parse(bytes[...]).payload == .address(address, action))
          checked.address += 1
        case .route(var route, let action):
          guard let priority = attributes(of: seed).first(where: { $0.type == 6 }) else { continue }
          store32(value, into: &bytes, at: priority.offset + 4)  // RTA_PRIORITY
          route.metric = value
          #expect(try RtnetlinkParser.parse(bytes[...]).payload == .route(route, action))
          checked.route += 1
        default:
          Issue.record("unexpected seed \(seed.decoded.payload)")
        }
      }
    }
    #expect(checked.link > 0 && checked.address > 0 && checked.route > 0)
  }

  @Test func randomByteMutationsAreDecodedOrRejectedWithAKnownReason() throws {
    let seeds = try Self.objectSeeds()
    var generator = SplitMix64(seed: 0x5EED)
    var outcomes = (decoded: 0, rejected: 0, unchanged: 0)
    var frameCount = 0
    for _ in 0..<20_000 {
      let seed = seeds[Int(generator.next() % UInt64(seeds.count))]
      var bytes = seed.bytes
      for _ in 0..<(1 + generator.next() % 4) {
        let position = Int(generator.next() % UInt64(bytes.count))
        bytes[position] = UInt8(truncatingIfNeeded: generator.next())
      }
      if generator.next() % 4 == 0 { bytes.removeLast(Int(generator.next() % UInt64(bytes.count))) }
      let frames = NetlinkFraming.frames(in: bytes)
      frameCount += frames.count
      for frame in frames {
        do throws(MalformedMessage) {
          let message = try frame.get()
          let decoded = try RtnetlinkParser.parse(message)
          outcomes.decoded += 1
          if bytes == seed.bytes {
            #expect(decoded == seed.decoded)
            outcomes.unchanged += 1
          }
        } catch {
          outcomes.rejected += 1
          #expect(
            Self.knownReasons.contains { error.reason.contains($0) },
            "unclear reason: \(error.reason)")
        }
      }
    }
    #expect(outcomes.decoded + outcomes.rejected == frameCount)
    #expect(outcomes.decoded > outcomes.unchanged)
    #expect(outcomes.rejected > 1000)
  }

  /// The phrases every ``MalformedMessage`` reason is built from, each naming the bad field.
  static let knownReasons = [
    "truncated header: only ", "nlmsg_len ", "message payload is ", " has length ",
    " trailing bytes after the last ", "RTA_MULTIPATH ", "libnl could not parse it: ",
    "libnl produced no ", " bytes, expected 4", "link message without IFLA_IFNAME",
    "NHA_GROUP is ", "nexthop message without NHA_ID",
  ]
}

/// A top-level attribute of an object message: where its `rta_len` starts and its type.
private struct Attribute {
  var offset: Int
  var type: UInt16
}

/// The top-level attributes of `seed`, after its fixed header.
private func attributes(of seed: (bytes: [UInt8], decoded: RtnetlinkMessage)) -> [Attribute] {
  let fixedSize: Int
  switch seed.decoded.payload {
  case .link: fixedSize = 16
  case .address: fixedSize = 8
  default: fixedSize = 12
  }
  var result: [Attribute] = []
  var offset = 16 + fixedSize
  while offset + 4 <= seed.bytes.count {
    let length = Int(seed.bytes[offset]) | Int(seed.bytes[offset + 1]) << 8
    result.append(
      Attribute(
        offset: offset, type: UInt16(seed.bytes[offset + 2]) | UInt16(seed.bytes[offset + 3]) << 8))
    offset += (length + 3) & ~3
  }
  return result
}

private func failures(_ frames: [NetlinkFraming.Frame]) -> [String] {
  frames.map { frame in
    switch frame {
    case .success: "decoded"
    case .failure(let error): error.reason
    }
  }
}

private func store32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
  for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
}

/// A small deterministic random generator for the mutation tests.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var value = state
    value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
    value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
    return value ^ (value >> 31)
  }
}
