#!/usr/bin/python3
"""A NetworkManager stand-in for measure.py: answers the manager, never a device."""
# A NetworkManager stand-in that answers the manager's GetAll but never answers a device's.
import sys, dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
devices = int(sys.argv[1])
bus = dbus.SystemBus()
name = dbus.service.BusName("org.freedesktop.NetworkManager", bus)
paths = [dbus.ObjectPath(f"/org/freedesktop/NetworkManager/Devices/{i}") for i in range(devices)]
class Manager(dbus.service.Object):
    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Connectivity": dbus.UInt32(4), "Devices": dbus.Array(paths, signature="o")}
class Device(dbus.service.Object):
    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}",
                         async_callbacks=("ok", "err"))
    def GetAll(self, interface, ok, err):
        pass  # never answers
Manager(bus, "/org/freedesktop/NetworkManager")
keep = [Device(bus, p) for p in paths]
print("ready", flush=True)
GLib.MainLoop().run()
