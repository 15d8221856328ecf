#!/usr/bin/env python3
"""Builds the byte-by-byte nl80211 fixtures (this machine's kernel has no wireless).

Each <name>.bin is one generic-netlink datagram as the kernel sends it (host byte order):
nlmsghdr(type = nl80211 family id FAMILY) + genlmsghdr(cmd, version 1) + attributes.
Numbers from <linux/nl80211.h>. Run: python3 Fixtures/nl80211/generate.py

Not built here: captured-get-scan-reply.bin and captured-get-interface-reply.bin are real
replies of Debian's 6.1.0-56 kernel (nl80211 family id 32) in the Tests/wifi qemu guest, wlan0
associated with "Pixel-Hotspot" while "Office-WiFi" was also in range: the datagrams `iw dev
wlan0 scan dump` and `iw dev wlan0 info` received, dumped with `strace -e trace=recvmsg -e
read=3` (libnl's MSG_PEEK copies dropped), without the control-family lookup before them. The
scan reply is the two BSS messages then NLMSG_DONE; the interface reply is the message then
libnl's ACK.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY = 30  # a dynamic generic-netlink id, as genl_ctrl_resolve("nl80211") would return
NLM_F_MULTI = 0x2
NLMSG_DONE = 3
CMD = {"new_interface": 7, "new_scan_results": 34, "connect": 46, "roam": 47, "disconnect": 48}
ATTR = {"wiphy": 1, "ifindex": 3, "ifname": 4, "iftype": 5, "mac": 6, "generation": 46,
        "bss": 47, "ssid": 52, "status_code": 72, "reason_code": 54, "req_ie": 77,
        "wdev": 153}
# NL80211_BSS_*: attributes nested in ATTR["bss"].
BSS = {"bssid": 1, "frequency": 2, "elements": 6, "signal_mbm": 7, "status": 9,
       "beacon_elements": 11}
BSS_STATUS_ASSOCIATED = 1
IFTYPE_STATION = 2


def attr(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def u32(kind, value):
    return attr(ATTR[kind], struct.pack("=I", value))


def u16(kind, value):
    return attr(ATTR[kind], struct.pack("=H", value))


def message(cmd, attributes, flags=0, seq=0, mtype=FAMILY):
    body = struct.pack("=BBH", CMD[cmd], 1, 0) + b"".join(attributes)
    return struct.pack("=IHHII", 16 + len(body), mtype, flags, seq, 0) + body


def done(seq):
    return struct.pack("=IHHIIi", 20, NLMSG_DONE, NLM_F_MULTI, seq, 0, 0)


def interface(index, name, ssid=None, seq=1):
    attributes = [u32("wiphy", 0), u32("ifindex", index), attr(ATTR["ifname"], name + b"\0"),
                  u32("iftype", IFTYPE_STATION), attr(ATTR["mac"], bytes(range(6)))]
    if ssid is not None:
        attributes.append(attr(ATTR["ssid"], ssid))
    return message("new_interface", attributes, flags=NLM_F_MULTI, seq=seq)


BSSID = attr(ATTR["mac"], bytes([0x02, 0x11, 0x22, 0x33, 0x44, 0x55]))
RATES = bytes([1, 4, 0x82, 0x84, 0x8b, 0x96])  # supported-rates element


def scan_result(index, nested, seq=5):
    """One GET_SCAN dump message of interface INDEX whose BSS nest holds NESTED (bytes)."""
    return message("new_scan_results", [u32("generation", 7), u32("ifindex", index),
                                        attr(ATTR["bss"], nested)],
                   flags=NLM_F_MULTI, seq=seq)


def bss_status(status):
    return attr(BSS["status"], struct.pack("=I", status))

FIXTURES = {
    # GET_INTERFACE dump reply: wlp2s0 associated with "Pixel 7", wlp3s0 idle, then DONE.
    "get-interface-reply": interface(3, b"wlp2s0", b"Pixel 7") + interface(4, b"wlp3s0")
    + done(1),
    # CONNECT event carrying the SSID (some drivers report it; the tracker re-queries anyway).
    "connect-with-ssid": message("connect", [u32("wiphy", 0), u32("ifindex", 3), BSSID,
                                             u16("status_code", 0),
                                             attr(ATTR["ssid"], b"iPhone de Ana")]),
    # CONNECT event as mac80211 sends it: no SSID, so the tracker must ask.
    "connect": message("connect", [u32("wiphy", 0), u32("ifindex", 3), BSSID,
                                   u16("status_code", 0)]),
    # CONNECT event as Debian's 6.1 kernel sent it under wpa_supplicant (Tests/wifi): no SSID
    # attribute; the association request's elements (REQ_IE) start with the SSID element.
    "connect-with-request-ies": message("connect", [
        u32("wiphy", 0), u32("ifindex", 3), BSSID, u16("status_code", 0),
        attr(ATTR["req_ie"], bytes([0, 13]) + b"Pixel-Hotspot" + bytes([1, 4, 0x82, 0x84,
                                                                        0x8b, 0x96]))]),
    # The GET_INTERFACE reply that follows it on that kernel: the station's SSID left out.
    "interface-reply-without-ssid": interface(3, b"wlp2s0", seq=3) + done(3),
    # ROAM to another access point of another network.
    "roam": message("roam", [u32("wiphy", 0), u32("ifindex", 3), BSSID,
                             attr(ATTR["ssid"], b"Home-5G")]),
    # DISCONNECT (reason 3: deauth leaving).
    "disconnect": message("disconnect", [u32("wiphy", 0), u32("ifindex", 3),
                                         u16("reason_code", 3)]),
    # GET_INTERFACE reply for one interface whose SSID has control and invalid UTF-8 bytes.
    "odd-ssid-reply": interface(3, b"wlp2s0", b"Caf\xc3\xa9\x1b[31m\xff", seq=2) + done(2),
    # An SSID attribute of 40 bytes (the limit is 32): malformed, skipped.
    "malformed-ssid": message("connect", [u32("ifindex", 3), attr(ATTR["ssid"], b"x" * 40)]),
    # GET_SCAN reply of a hidden network: the probe-response elements carry no SSID element,
    # the beacon's elements do (the fallback), then DONE.
    "scan-reply-beacon-ssid": scan_result(3, attr(BSS["bssid"], bytes(6))
                                          + attr(BSS["elements"], RATES)
                                          + attr(BSS["beacon_elements"],
                                                 bytes([0, 10]) + b"Cafe-Guest" + RATES)
                                          + bss_status(BSS_STATUS_ASSOCIATED)) + done(5),
    # GET_SCAN reply with no BSS in use (only seen in a scan), then DONE.
    "scan-reply-not-associated": scan_result(3, attr(BSS["bssid"], bytes(6))
                                             + attr(BSS["elements"],
                                                    bytes([0, 7]) + b"Nearby1" + RATES))
    + done(5),
    # Malformed GET_SCAN replies, each rejected with an error naming what is wrong:
    # a nested attribute claiming 40 bytes where 10 remain,
    "scan-reply-truncated-nest": scan_result(3, struct.pack("=HH", 40, BSS["elements"])
                                             + bytes(6)),
    # a 2-byte status,
    "scan-reply-short-status": scan_result(3, attr(BSS["status"], b"\x01\x00")),
    # an associated BSS whose last element claims more bytes than there are,
    "scan-reply-truncated-element": scan_result(3, attr(BSS["elements"],
                                                         RATES + bytes([0, 20]) + b"Pixel")
                                                + bss_status(BSS_STATUS_ASSOCIATED)),
    # an associated BSS whose SSID element has 33 bytes.
    "scan-reply-long-ssid-element": scan_result(3, attr(BSS["elements"],
                                                         bytes([0, 33]) + b"y" * 33)
                                                + bss_status(BSS_STATUS_ASSOCIATED)),
}

for name, data in FIXTURES.items():
    with open(os.path.join(HERE, name + ".bin"), "wb") as output:
        output.write(data)
