#!/usr/bin/env python3
"""Writes the power_supply fixture trees and the built uevent messages.

Run from anywhere: python3 Fixtures/power_supply/make-fixtures.py
Trees: <scenario>/class/power_supply/<supply>/<attribute>, each file as the kernel writes it
(value + newline). Uevents: uevents/*.bin, one datagram per file, in the kernel's
`ACTION@DEVPATH\\0KEY=VALUE\\0...` format (kernel-net-add-veth.bin is a real capture).
"""
import os, shutil, struct

HERE = os.path.dirname(os.path.abspath(__file__))

AC = "/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0003:00/power_supply/AC"
BAT0 = "/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0C0A:00/power_supply/BAT0"

def mains(online):
    return {"type": "Mains", "online": str(online)}

def battery(status, capacity, energy=None, charge=None, **extra):
    attrs = {"type": "Battery", "status": status, "present": "1", "scope": "System",
             "capacity": str(capacity), "capacity_level": "Normal"}
    if energy:
        attrs["energy_now"], attrs["energy_full"] = str(energy[0]), str(energy[1])
    if charge:
        attrs["charge_now"], attrs["charge_full"] = str(charge[0]), str(charge[1])
    attrs.update(extra)
    return attrs

SCENARIOS = {
    "laptop-charging": {
        "AC": mains(1),
        "BAT0": battery("Charging", 57, energy=(28500000, 50000000)),
    },
    "laptop-discharging": {
        "AC": mains(0),
        "BAT0": battery("Discharging", 32, energy=(16000000, 50000000)),
    },
    "laptop-discharging-low": {
        "AC": mains(0),
        "BAT0": battery("Discharging", 15, energy=(7500000, 50000000), capacity_level="Low"),
    },
    "full-on-ac": {
        "AC": mains(1),
        "BAT0": battery("Full", 100, energy=(50000000, 50000000), capacity_level="Full"),
    },
    "desktop-no-supplies": {},
    "desktop-mouse-only": {
        "hidpp_battery_0": {"type": "Battery", "scope": "Device", "status": "Discharging",
                            "present": "1", "capacity": "12", "capacity_level": "Low",
                            "online": "1"},
    },
    "usb-c-not-charging-threshold": {
        "ADP1": mains(0),
        "ucsi-source-psy-USBC000:001": {"type": "USB", "online": "1", "scope": "System",
                                        "status": "Not charging"},
        "BAT0": battery("Not charging", 80, charge=(4000000, 5000000)),
    },
    "two-batteries": {
        "AC": mains(0),
        "BAT0": battery("Discharging", 20, energy=(10000000, 50000000)),
        "BAT1": battery("Full", 100, energy=(20000000, 20000000)),
    },
    "missing-attributes": {
        "AC": {"type": "Mains"},
        "BAT0": {"type": "Battery", "capacity_level": "Low"},
    },
    "garbage-values": {
        "AC": {"type": "Mains", "online": "yes\n"},
        "BAT0": {"type": "battery", "status": "Dischrging", "present": "maybe",
                 "scope": "Sytem", "capacity": "157", "capacity_level": "\x01\x02",
                 "energy_now": "-5", "energy_full": "0", "charge_now": "12x",
                 "charge_full": "99999999999999999999999"},
        "weird0": {"type": "Flux\x7fCapacitor", "online": "1"},
    },
}

def write_tree(scenario, supplies):
    root = os.path.join(HERE, scenario, "class", "power_supply")
    shutil.rmtree(os.path.join(HERE, scenario), ignore_errors=True)
    os.makedirs(root)
    if not supplies:
        # git stores no empty directories; the reader skips dot-files.
        open(os.path.join(root, ".gitkeep"), "w").close()
    for name, attrs in supplies.items():
        os.makedirs(os.path.join(root, name))
        for attr, value in attrs.items():
            text = value if value.endswith("\n") else value + "\n"
            with open(os.path.join(root, name, attr), "w") as f:
                f.write(text)

def kernel_uevent(action, devpath, props):
    fields = [f"{action}@{devpath}", f"ACTION={action}", f"DEVPATH={devpath}"]
    fields += [f"{k}={v}" for k, v in props]
    return b"".join(f.encode() + b"\0" for f in fields)

def libudev_message(props):
    """udev's monitor format: 'libudev\\0', magic 0xfeedcafe (network order), header size,
    properties offset and length, subsystem/devtype hashes and tag bloom filter."""
    body = b"".join(f"{k}={v}".encode() + b"\0" for k, v in props)
    header_size = 40
    header = b"libudev\0" + struct.pack(">I", 0xFEEDCAFE) + struct.pack(
        "<IIIIIII", header_size, header_size, len(body), 0x1234, 0, 0, 0)
    assert len(header) == header_size
    return header + body

def write_uevents():
    out = os.path.join(HERE, "uevents")
    os.makedirs(out, exist_ok=True)
    messages = {
        "ac-online.bin": kernel_uevent("change", AC, [
            ("SUBSYSTEM", "power_supply"), ("POWER_SUPPLY_NAME", "AC"),
            ("POWER_SUPPLY_TYPE", "Mains"), ("POWER_SUPPLY_ONLINE", "1"), ("SEQNUM", "4211")]),
        "ac-offline.bin": kernel_uevent("change", AC, [
            ("SUBSYSTEM", "power_supply"), ("POWER_SUPPLY_NAME", "AC"),
            ("POWER_SUPPLY_TYPE", "Mains"), ("POWER_SUPPLY_ONLINE", "0"), ("SEQNUM", "4212")]),
        "battery-change.bin": kernel_uevent("change", BAT0, [
            ("SUBSYSTEM", "power_supply"), ("POWER_SUPPLY_NAME", "BAT0"),
            ("POWER_SUPPLY_TYPE", "Battery"), ("POWER_SUPPLY_STATUS", "Discharging"),
            ("POWER_SUPPLY_PRESENT", "1"), ("POWER_SUPPLY_CAPACITY", "31"),
            ("POWER_SUPPLY_CAPACITY_LEVEL", "Normal"), ("SEQNUM", "4213")]),
        "udev-monitor-power.bin": libudev_message([
            ("ACTION", "change"), ("DEVPATH", AC), ("SUBSYSTEM", "power_supply"),
            ("POWER_SUPPLY_ONLINE", "1"), ("SEQNUM", "4211"), ("USEC_INITIALIZED", "1234")]),
        "malformed-no-at.bin": b"change-without-devpath\0ACTION=change\0SUBSYSTEM=power_supply\0",
        "malformed-field.bin": kernel_uevent("change", AC, [("SUBSYSTEM", "power_supply")])
            + b"NOEQUALSSIGN\0",
        "malformed-utf8.bin": b"change@/devices/\xff\xfe/power_supply/AC\0SUBSYSTEM=power_supply\0",
        "empty.bin": b"",
    }
    for name, data in messages.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

for scenario, supplies in SCENARIOS.items():
    write_tree(scenario, supplies)
write_uevents()
