#!/usr/bin/env python3
"""Builds the byte-by-byte rtnetlink fixtures (link types this machine cannot create).

Each scenario becomes <name>.pcap (LINKTYPE_NETLINK, 16-byte cooked header, host-order netlink
messages) laid out like a real capture by `backgrounder capture`: our dump requests (outgoing)
for links, addresses and routes, each answered by NLM_F_MULTI items and NLMSG_DONE, then
events. Scenarios that need sysfs facts get a tree under <name>/sysfs/class/net/IF/.
Run: python3 Fixtures/netlink/generate.py   (rewrites the files next to this script)
"""
import os
import shutil
import socket
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
AF_INET, AF_INET6 = 2, 10
IFF_UP, IFF_LOOPBACK, IFF_RUNNING, IFF_LOWER_UP = 0x1, 0x8, 0x40, 0x10000
UP = IFF_UP | IFF_RUNNING | IFF_LOWER_UP
ARPHRD = {"ether": 1, "ppp": 512, "rawip": 519, "loopback": 772, "none": 0xFFFE}
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_DUMP = 0x1, 0x2, 0x300
T0 = 1_700_000_000


def attr(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def message(mtype, body, flags=0, seq=0, pid=0):
    return struct.pack("=IHHII", 16 + len(body), mtype, flags, seq, pid) + body


def link(index, name, hw="ether", flags=UP, kind=None):
    body = struct.pack("=BxHiII", 0, ARPHRD[hw], index, flags, 0)
    body += attr(3, name.encode() + b"\0")  # IFLA_IFNAME
    if kind:
        body += attr(18, attr(1, kind.encode() + b"\0"))  # IFLA_LINKINFO { IFLA_INFO_KIND }
    return body


def address(index, text, prefix, scope=0, flags=0x80):  # 0x80 = IFA_F_PERMANENT
    family = AF_INET6 if ":" in text else AF_INET
    raw = socket.inet_pton(family, text)
    body = struct.pack("=BBBBi", family, prefix, flags & 0xFF, scope, index)
    return body + attr(1, raw) + attr(2, raw) * (family == AF_INET) + attr(8, struct.pack("=I", flags))


def route(oif, family=AF_INET, metric=0, dst=None, dst_len=0, table=254, rtype=1, hops=None):
    body = struct.pack("=BBBBBBBBI", family, dst_len, 0, 0, min(table, 252), 4, 0, rtype, 0)
    body += attr(15, struct.pack("=I", table))  # RTA_TABLE
    if dst:
        body += attr(1, socket.inet_pton(family, dst))  # RTA_DST
    body += attr(6, struct.pack("=I", metric))  # RTA_PRIORITY
    if hops:
        body += attr(9, b"".join(struct.pack("=HBBi", 8, 0, 0, hop) for hop in hops))
    else:
        body += attr(4, struct.pack("=I", oif))  # RTA_OIF
    return body


def event(mtype, body):
    return ("in", message(mtype, body))


def dumped(links, addresses, routes):
    records, seq = [], 1
    for mtype, dump_type, fixed, items in ((16, 18, 16, links), (20, 22, 8, addresses), (24, 26, 12, routes)):
        request = message(dump_type, b"\0" * fixed, NLM_F_REQUEST | NLM_F_DUMP, seq)
        records.append(("out", request))
        for item in items:
            records.append(("in", message(mtype, item, NLM_F_MULTI, seq, 4242)))
        records.append(("in", message(3, struct.pack("=i", 0), NLM_F_MULTI, seq, 4242)))
        seq += 1
    return records


def write_pcap(path, records):
    with open(path, "wb") as out:
        out.write(struct.pack("=IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 253))
        for number, (direction, data) in enumerate(records):
            cooked = struct.pack(">HHH8sH", 4 if direction == "out" else 0, 824, 0, b"", 0)
            out.write(struct.pack("=IIII", T0 + number, 0, len(cooked) + len(data), len(cooked) + len(data)))
            out.write(cooked + data)


def sysfs(scenario, name, devtype=None, driver=None, wireless=False):
    base = os.path.join(HERE, scenario, "sysfs", "class", "net", name)
    os.makedirs(base, exist_ok=True)
    lines = [f"INTERFACE={name}", "IFINDEX=2"] + ([f"DEVTYPE={devtype}"] if devtype else [])
    with open(os.path.join(base, "uevent"), "w") as out:
        out.write("\n".join(lines) + "\n")
    if driver:
        os.makedirs(os.path.join(base, "device"), exist_ok=True)
        os.symlink(f"../../../../bus/usb/drivers/{driver}", os.path.join(base, "device", "driver"))
    if wireless:
        os.makedirs(os.path.join(base, "wireless"), exist_ok=True)
        open(os.path.join(base, "wireless", ".keep"), "w").close()


LO = link(1, "lo", "loopback", UP | IFF_LOOPBACK)
LO_ADDR = address(1, "127.0.0.1", 8, scope=254)


def uplink(name, hw="ether", kind=None, v4="192.0.2.10", gateway_metric=100, index=2):
    return ([LO, link(index, name, hw, kind=kind)], [LO_ADDR, address(index, v4, 24)],
            [route(index, metric=gateway_metric)])


def scenarios():
    out = {}
    out["wwan-rawip"] = dumped(*uplink("rmnet_data0", "rawip"))
    out["wwan-devtype"] = dumped(*uplink("mdm0"))
    out["ppp"] = dumped(*uplink("ppp0", "ppp", kind="ppp"))
    out["qmi-none"] = dumped(*uplink("wwp0s20u4i4", "none"))
    out["bluetooth"] = dumped(*uplink("bnep0"))
    out["usb-tethering-rndis"] = dumped(*uplink("usb0"))
    out["usb-tethering-ipheth"] = dumped(*uplink("eth1"))
    out["wifi"] = dumped(*uplink("wlp2s0"))
    out["wired"] = dumped(*uplink("enp3s0"))
    out["name-hint-wwan"] = dumped(*uplink("wwan0"))
    # WireGuard (metric 50) over USB tethering (metric 100): the tunnel is primary and inherits.
    out["wireguard-over-tethering"] = dumped(
        [LO, link(2, "usb0"), link(3, "wg0", "none", UP, "wireguard")],
        [LO_ADDR, address(2, "192.168.42.20", 24), address(3, "10.8.0.2", 24)],
        [route(2, metric=100), route(3, metric=50)])
    # Wired metric 100 and Wi-Fi metric 600: lowest metric is primary; then the cable goes.
    records = dumped(
        [LO, link(2, "enp3s0"), link(3, "wlp2s0")],
        [LO_ADDR, address(2, "192.0.2.10", 24), address(3, "198.51.100.7", 24)],
        [route(2, metric=100), route(3, metric=600)])
    records.append(event(16, link(2, "enp3s0", flags=IFF_UP)))  # carrier lost, no DELROUTE
    out["wired-and-wifi"] = records
    # Two equal-metric default routes on different links; deleting one keeps the other.
    records = dumped(
        [LO, link(2, "enp3s0"), link(3, "enp4s0")],
        [LO_ADDR, address(2, "192.0.2.10", 24), address(3, "198.51.100.7", 24)],
        [route(2, metric=100), route(3, metric=100)])
    records.append(event(25, route(2, metric=100)))
    out["equal-metric"] = records
    # IPv6 default route but only a link-local (scope link) and a tentative global address.
    out["no-global-address"] = dumped(
        [LO, link(2, "enp3s0")],
        [LO_ADDR, address(2, "fe80::1", 64, scope=253), address(2, "2001:db8::1", 64, flags=0x40)],
        [route(2, family=AF_INET6, metric=1024)])
    # Default route on a link that is up without carrier; a default route through loopback.
    out["no-carrier"] = dumped(
        [LO, link(2, "enp3s0", flags=IFF_UP)], [LO_ADDR, address(2, "192.0.2.10", 24)],
        [route(2, metric=100), route(1, metric=10)])
    # A multipath default route whose first hop has no carrier: the second hop carries it.
    out["multipath"] = dumped(
        [LO, link(2, "enp3s0", flags=IFF_UP), link(3, "enp4s0")],
        [LO_ADDR, address(2, "192.0.2.10", 24), address(3, "198.51.100.7", 24)],
        [route(0, metric=100, hops=[2, 3])])
    # Non-default, non-main-table and non-unicast routes never make the network reachable.
    out["not-default"] = dumped(
        [LO, link(2, "enp3s0")], [LO_ADDR, address(2, "192.0.2.10", 24)],
        [route(2, dst="10.0.0.0", dst_len=8), route(2, table=100), route(2, rtype=7, metric=5)])
    return out


def garbled():
    """A good wired setup, then three broken messages in one datagram each, then good events."""
    records = dumped(*uplink("enp3s0"))
    truncated = message(16, link(3, "enp4s0"))[:30]
    records.append(("in", truncated))  # nlmsg_len says more bytes than the datagram has
    bad_attr = bytearray(message(20, address(2, "192.0.2.11", 24)))
    struct.pack_into("=H", bad_attr, 16 + 8, 200)  # first attribute claims 200 bytes
    records.append(("in", bytes(bad_attr)))
    loop = bytearray(message(24, route(0, metric=5, hops=[2])))
    struct.pack_into("=H", loop, len(loop) - 8, 0)  # rtnh_len 0: libnl would spin forever
    records.append(("in", bytes(loop)))
    records.append(event(16, link(3, "wlp2s0")))
    records.append(event(20, address(3, "198.51.100.7", 24)))
    records.append(event(24, route(3, metric=50)))
    return records


def main():
    for name, records in scenarios().items():
        write_pcap(os.path.join(HERE, f"{name}.pcap"), records)
    write_pcap(os.path.join(HERE, "garbled-messages.pcap"), garbled())
    with open(os.path.join(HERE, "wired.pcap"), "rb") as source:
        whole = source.read()
    with open(os.path.join(HERE, "corrupt-truncated.pcap"), "wb") as out:
        out.write(whole[: len(whole) - 7])  # last record cut short
    with open(os.path.join(HERE, "corrupt-not-pcap.pcap"), "wb") as out:
        out.write(b"this is not a capture file at all\n")
    for scenario in ("wwan-devtype", "bluetooth", "usb-tethering-rndis", "usb-tethering-ipheth",
                     "wifi", "wired", "wireguard-over-tethering", "wired-and-wifi"):
        shutil.rmtree(os.path.join(HERE, scenario), ignore_errors=True)
    sysfs("wwan-devtype", "mdm0", devtype="wwan")
    sysfs("bluetooth", "bnep0", devtype="bluetooth")
    sysfs("usb-tethering-rndis", "usb0", driver="rndis_host")
    sysfs("usb-tethering-ipheth", "eth1", driver="ipheth")
    sysfs("wifi", "wlp2s0", devtype="wlan", driver="iwlwifi", wireless=True)
    sysfs("wired", "enp3s0", driver="e1000e")
    sysfs("wireguard-over-tethering", "usb0", driver="rndis_host")
    sysfs("wired-and-wifi", "enp3s0", driver="e1000e")
    sysfs("wired-and-wifi", "wlp2s0", devtype="wlan", driver="iwlwifi", wireless=True)


if __name__ == "__main__":
    main()
