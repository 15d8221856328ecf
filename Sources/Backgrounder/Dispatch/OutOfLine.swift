/// A value kept in its own heap block and copied on write, so that the struct holding it stays
/// small. A dictionary's storage is as large as its bucket count (up to twice its count) times
/// the size of its value: a large value kept inline costs its size in every empty bucket too.
@propertyWrapper
struct OutOfLine<Value: Sendable>: @unchecked Sendable {
  // @unchecked: the box is only written while uniquely referenced (copy on write), so a value
  // shared between copies is never mutated.
  private final class Box {
    var value: Value

    init(_ value: Value) {
      self.value = value
    }
  }

  private var box: Box

  init(wrappedValue: Value) {
    box = Box(wrappedValue)
  }

  var wrappedValue: Value {
    get { box.value }
    set {
      if isKnownUniquelyReferenced(&box) {
        box.value = newValue
      } else {
        box = Box(newValue)
      }
    }
    _modify {
      if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
      yield &box.value
    }
  }
}

extension OutOfLine: Equatable where Value: Equatable {
  static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.wrappedValue == rhs.wrappedValue
  }
}
