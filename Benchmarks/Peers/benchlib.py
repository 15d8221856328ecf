"""Shared pieces of the peer benchmarks: a private network namespace, rtnetlink requests,
per-process CPU time and context switches, result files."""
import ctypes, json, os, re, socket, struct, subprocess, sys, time

CLONE_NEWNET = 0x40000000


def fail(step, message):
    """Stops the benchmark, naming the step that failed."""
    sys.exit(f"benchmark step '{step}' failed: {message}")


class Namespace:
    """A network namespace this process creates, enters (so every child runs inside it) and
    deletes again; `ip netns delete` also removes the veth pairs made inside it."""

    def __init__(self, prefix):
        self.name = f"{prefix}-{os.getpid()}"
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        self._original = os.open("/proc/self/ns/net", os.O_RDONLY)
        target = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(target, CLONE_NEWNET) != 0:
            self.delete()
            raise OSError(ctypes.get_errno(), f"setns into {self.name}")
        os.close(target)
        self.ip("link", "set", "lo", "up")

    def ip(self, *arguments, capture=False):
        result = subprocess.run(["ip", *arguments], check=True, capture_output=True, text=True)
        return result.stdout if capture else None

    def veth(self, name, peer, address=None):
        """A veth pair, both ends up, NAME optionally with an IPv4 address; returns both indexes."""
        self.ip("link", "add", name, "type", "veth", "peer", "name", peer)
        self.ip("link", "set", peer, "up")
        self.ip("link", "set", name, "up")
        if address:
            self.ip("address", "add", address, "dev", name)
        return self.index(name), self.index(peer)

    def index(self, name):
        return json.loads(self.ip("-j", "link", "show", name, capture=True))[0]["ifindex"]

    def has_carrier(self, name):
        link = json.loads(self.ip("-j", "link", "show", name, capture=True))[0]
        return "LOWER_UP" in link.get("flags", [])

    def delete(self):
        subprocess.run(["ip", "netns", "delete", self.name], capture_output=True)


class Rtnetlink:
    """Route and link changes on this process's own rtnetlink socket, each ACK awaited, so the
    kernel has applied the change when a call returns."""

    def __init__(self):
        self.socket = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        self.sequence = 0

    def default_route(self, add, gateway, interface_index):
        """`ip route add/del default via GATEWAY dev INDEX` (IPv4, main table)."""
        rtmsg = struct.pack("BBBBBBBBI", socket.AF_INET, 0, 0, 0, 254, 3, 0, 1, 0)
        body = rtmsg + self._attribute(5, socket.inet_aton(gateway))
        body += self._attribute(4, struct.pack("I", interface_index))
        self._request(24 if add else 25, 0x400 | 0x200 if add else 0, body)

    def link(self, interface_index, up):
        """`ip link set INDEX up/down`."""
        body = struct.pack("BBHiII", 0, 0, 0, interface_index, 1 if up else 0, 1)
        self._request(16, 0, body)

    def _attribute(self, kind, payload):
        length = 4 + len(payload)
        return struct.pack("HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)

    def _request(self, kind, flags, body):
        self.sequence += 1
        header = struct.pack("IHHII", 16 + len(body), kind, 0x1 | 0x4 | flags, self.sequence, 0)
        self.socket.send(header + body)
        reply = self.socket.recv(65536)
        code = struct.unpack_from("i", reply, 16)[0]
        if code != 0:
            raise OSError(-code, f"rtnetlink request {kind}: {os.strerror(-code)}")


def cpu_seconds(pid):
    """CPU time of every thread of PID so far (the kernel's per-process CPU clock, ns precision)."""
    return time.clock_gettime(((~pid) << 3) | 2)


def voluntary_switches(pid):
    """{thread id: voluntary context switches so far} of every live thread of PID."""
    switches = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                text = f.read()
            switches[task] = int(re.search(r"voluntary_ctxt_switches:\s+(\d+)", text).group(1))
        except (FileNotFoundError, ProcessLookupError, AttributeError):
            pass
    return switches


class SwitchCounter:
    """Voluntary context switches of all threads of PID from now on, threads that exit in
    between included up to their last sample: call sample() often (every second is plenty for
    an idle process), total() at the end."""

    def __init__(self, pid):
        self.pid = pid
        self.first = voluntary_switches(pid)
        self.last = dict(self.first)

    def sample(self):
        self.last.update(voluntary_switches(self.pid))

    def total(self):
        self.sample()
        return sum(count - self.first.get(task, 0) for task, count in self.last.items())


def strace_counts(report):
    """{syscall: calls} from the table `strace -c` prints."""
    calls = {}
    for line in report.splitlines():
        fields = line.split()
        if len(fields) >= 5 and re.match(r"^[\d.]+$", fields[0]) and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    return calls


def write_result(path, result):
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
