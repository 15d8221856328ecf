import Foundation

/// The ModemManager stand-in (a small dbus-python service, ``source``) on a ``PrivateBus``: one
/// modem whose bearer uses interface `interface`, registered `state`
/// (`MMModem3gppRegistrationState`: 1 home, 5 roaming).
final class ModemManagerStandIn {
  static let home: UInt32 = 1
  static let roaming: UInt32 = 5

  private let bus: PrivateBus
  private var process: Process?

  init(bus: PrivateBus) { self.bus = bus }

  /// Starts the stand-in and waits until it owns its name.
  func start(interface: String, state: UInt32) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: PrivateBus.python)
    process.arguments = ["-c", Self.source, interface, "\(state)"]
    process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    self.process = process
    let line = pipe.fileHandleForReading.availableData
    guard String(decoding: line, as: UTF8.self).hasPrefix("ready") else {
      throw PrivateBus.Failed(description: "the ModemManager stand-in did not start")
    }
  }

  /// Changes the modem's registration state, emitting `PropertiesChanged` as ModemManager does.
  func setRegistration(_ state: UInt32) throws {
    try bus.send(
      destination: "org.freedesktop.ModemManager1",
      path: "/org/freedesktop/ModemManager1/Modem/0",
      method: "dev.backgrounder.Test.SetRegistration", "uint32:\(state)")
  }

  /// Emits a modem `PropertiesChanged` of its `SignalQuality` only, as ModemManager does every
  /// few seconds.
  func setSignalQuality(_ percent: UInt32) throws {
    try bus.send(
      destination: "org.freedesktop.ModemManager1",
      path: "/org/freedesktop/ModemManager1/Modem/0",
      method: "dev.backgrounder.Test.SetSignalQuality", "uint32:\(percent)")
  }

  /// How many times `GetManagedObjects` was called.
  func reads() throws -> Int {
    let output = try bus.send(
      destination: "org.freedesktop.ModemManager1", path: "/org/freedesktop/ModemManager1",
      method: "dev.backgrounder.Test.Reads")
    guard
      let count = output.split(separator: " ").last.flatMap({
        Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
      })
    else { throw PrivateBus.Failed(description: "Reads answered \(output)") }
    return count
  }

  /// Kills the stand-in: its name leaves the bus.
  func stop() {
    guard let process else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    self.process = nil
  }

  /// The stand-in's Python source.
  static let source = #"""
    """A ModemManager stand-in for the roaming tests: on the bus in DBUS_SYSTEM_BUS_ADDRESS it owns
    org.freedesktop.ModemManager1 and exports what Backgrounder reads of ModemManager: the
    ObjectManager at /org/freedesktop/ModemManager1 (GetManagedObjects, InterfacesAdded), one
    modem (Modem.Bearers, Modem.Modem3gpp.RegistrationState) and its bearer (Bearer.Interface).

        python3 -c SCRIPT INTERFACE STATE

    The test changes the registration state with
        dev.backgrounder.Test.SetRegistration(uint32) on /org/freedesktop/ModemManager1/Modem/0,
    which emits PropertiesChanged as ModemManager does."""

    import sys

    import dbus
    import dbus.bus
    import dbus.mainloop.glib
    import dbus.service
    import os
    from gi.repository import GLib

    SERVICE = "org.freedesktop.ModemManager1"
    ROOT = "/org/freedesktop/ModemManager1"
    MODEM = ROOT + "/Modem/0"
    BEARER = ROOT + "/Bearer/0"
    MODEM_IFACE = SERVICE + ".Modem"
    MODEM_3GPP_IFACE = SERVICE + ".Modem.Modem3gpp"
    BEARER_IFACE = SERVICE + ".Bearer"
    PROPERTIES = "org.freedesktop.DBus.Properties"
    OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"


    class Exported(dbus.service.Object):
        """An object with Properties.Get/GetAll over `self.properties` (interface -> dict)."""

        def __init__(self, bus, path, properties):
            super().__init__(bus, path)
            self.properties = properties

        @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
        def GetAll(self, interface):
            return dbus.Dictionary(self.properties.get(interface, {}), signature="sv")

        @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
        def Get(self, interface, name):
            return self.properties[interface][name]

        @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
        def PropertiesChanged(self, interface, changed, invalidated):
            pass


    class Modem(Exported):
        @dbus.service.method("dev.backgrounder.Test", in_signature="u", out_signature="")
        def SetRegistration(self, state):
            self.properties[MODEM_3GPP_IFACE]["RegistrationState"] = dbus.UInt32(state)
            self.PropertiesChanged(
                MODEM_3GPP_IFACE,
                dbus.Dictionary({"RegistrationState": dbus.UInt32(state)}, signature="sv"),
                dbus.Array([], signature="s"))

        @dbus.service.method("dev.backgrounder.Test", in_signature="u", out_signature="")
        def SetSignalQuality(self, percent):
            self.PropertiesChanged(
                MODEM_IFACE,
                dbus.Dictionary(
                    {"SignalQuality": dbus.Struct((dbus.UInt32(percent), dbus.Boolean(True)))},
                    signature="sv"),
                dbus.Array([], signature="s"))


    class Manager(dbus.service.Object):
        def __init__(self, bus, modem):
            super().__init__(bus, ROOT)
            self.modem = modem
            self.reads = 0

        @dbus.service.method("dev.backgrounder.Test", in_signature="", out_signature="u")
        def Reads(self):
            return dbus.UInt32(self.reads)

        @dbus.service.method(OBJECT_MANAGER, in_signature="", out_signature="a{oa{sa{sv}}}")
        def GetManagedObjects(self):
            self.reads += 1
            return {dbus.ObjectPath(MODEM): self.modem.properties}

        @dbus.service.signal(OBJECT_MANAGER, signature="oa{sa{sv}}")
        def InterfacesAdded(self, path, interfaces):
            pass


    def main():
        interface, state = sys.argv[1], int(sys.argv[2])
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
        Exported(bus, BEARER, {
            BEARER_IFACE: {"Interface": dbus.String(interface), "Connected": dbus.Boolean(True)},
        })
        modem = Modem(bus, MODEM, {
            MODEM_IFACE: {"Bearers": dbus.Array([dbus.ObjectPath(BEARER)], signature="o")},
            MODEM_3GPP_IFACE: {"RegistrationState": dbus.UInt32(state)},
        })
        manager = Manager(bus, modem)
        # Exported before the name is taken, as ModemManager does: whoever sees the name can read.
        name = dbus.service.BusName(SERVICE, bus)
        manager.InterfacesAdded(dbus.ObjectPath(MODEM), modem.properties)
        print("ready", flush=True)
        GLib.MainLoop().run()
        del name


    if __name__ == "__main__":
        main()
    """#
}
