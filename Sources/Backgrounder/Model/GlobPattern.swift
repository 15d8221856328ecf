/// A shell glob as `fnmatch(3)` reads it with no flags: `*` (any run of characters), `?` (one
/// character), `[...]` (a set, with ranges `a-z` and negation `[!...]` or `[^...]`) and `\`
/// (the next character literally). Pure Swift, so that the core links no C library for it; it
/// matches Unicode characters (an SSID decoded as UTF-8), where `fnmatch` matches bytes.
public struct GlobPattern: Hashable, Sendable {
  /// The pattern as written.
  public let text: String
  private let pattern: [Character]

  /// A pattern from its text.
  public init(_ text: String) {
    self.text = text
    pattern = Array(text)
  }

  /// Whether `name` matches the whole pattern.
  public func matches(_ name: String) -> Bool {
    Self.match(pattern[...], Array(name)[...])
  }

  private static func match(_ pattern: ArraySlice<Character>, _ name: ArraySlice<Character>)
    -> Bool
  {
    var p = pattern.startIndex
    var n = name.startIndex
    // The last `*` seen and the name position it was tried at (backtracking, no recursion).
    var star: (pattern: Int, name: Int)?
    while n < name.endIndex {
      if p < pattern.endIndex, pattern[p] == "*" {
        star = (p + 1, n)
        p += 1
        continue
      }
      if p < pattern.endIndex, let next = step(pattern, at: p, over: name[n]) {
        p = next
        n += 1
        continue
      }
      guard let retry = star else { return false }
      star = (retry.pattern, retry.name + 1)
      p = retry.pattern
      n = retry.name + 1
    }
    while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
    return p == pattern.endIndex
  }

  /// Where the pattern continues if the element at `index` matches `character`, else `nil`.
  private static func step(
    _ pattern: ArraySlice<Character>, at index: Int, over character: Character
  ) -> Int? {
    switch pattern[index] {
    case "?":
      return index + 1
    case "\\" where index + 1 < pattern.endIndex:
      return pattern[index + 1] == character ? index + 2 : nil
    case "\\":
      // A trailing backslash escapes nothing: `fnmatch` matches no name then.
      return nil
    case "[":
      guard let (matched, end) = bracket(pattern, at: index, character) else {
        // No closing bracket: a literal "[".
        return character == "[" ? index + 1 : nil
      }
      return matched ? end : nil
    case let literal:
      return literal == character ? index + 1 : nil
    }
  }

  /// Whether the set opening at `index` holds `character`, and the index after its `]`;
  /// `nil` when the set is not closed.
  private static func bracket(
    _ pattern: ArraySlice<Character>, at index: Int, _ character: Character
  ) -> (Bool, Int)? {
    var i = index + 1
    var negated = false
    if i < pattern.endIndex, pattern[i] == "!" || pattern[i] == "^" {
      negated = true
      i += 1
    }
    var found = false
    var first = true
    while i < pattern.endIndex {
      var low = pattern[i]
      if low == "]" && !first { return (found != negated, i + 1) }
      first = false
      if low == "\\", i + 1 < pattern.endIndex {
        i += 1
        low = pattern[i]
      }
      if i + 2 < pattern.endIndex, pattern[i + 1] == "-", pattern[i + 2] != "]" {
        let high = pattern[i + 2]
        if low <= character && character <= high { found = true }
        i += 3
      } else {
        if low == character { found = true }
        i += 1
      }
    }
    return nil
  }
}
