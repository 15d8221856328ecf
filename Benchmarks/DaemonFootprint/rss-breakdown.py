#!/usr/bin/env python3
"""Where an idle daemon's resident memory is: /proc/PID/smaps summed by mapping kind.

Usage (root: the daemon runs in a network namespace this script creates and deletes):
  python3 Benchmarks/DaemonFootprint/rss-breakdown.py [--binary PATH] [--jobs 1000]
          [--pid PID]      (an already running daemon instead of a fresh one)
          [--hold SECONDS] (keep the fresh daemon running for a closer look)

Starts `backgrounder run` with JOBS periodic jobs (`every = "1d"`, as daemon-footprint.py
does), waits until each ran once (and prints the time and the daemon's CPU time that took), then
prints, in KiB: the binary's code, read-only data, relocated read-only data (RELRO) and written
data; each shared library; the main heap; each thread's stack; malloc's other arenas; other
anonymous mappings. Rss, Anonymous and Private_Dirty per row, and the number of threads.
"""
import argparse, os, re, shutil, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--jobs", type=int, default=1000)
parser.add_argument("--pid", type=int)
parser.add_argument("--hold", type=int, default=0,
                    help="keep the daemon running this many seconds after the breakdown")
args = parser.parse_args()


def thread_stack_pointers(pid):
    """Stack pointer of each thread that sits in a system call (/proc/PID/task/TID/syscall)."""
    pointers = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/syscall") as f:
                fields = f.read().split()
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
        except (FileNotFoundError, PermissionError):
            continue
        if len(fields) >= 3 and fields[0] != "running":
            pointers[int(fields[-2], 16)] = f"{task} {name}"
    return pointers


def mappings(pid):
    """(low, high, perms, path, {field: kB}) of each mapping in /proc/PID/smaps."""
    result = []
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
            if head:
                current = (int(head[1], 16), int(head[2], 16), head[3], head[4].strip(), {})
                result.append(current)
                continue
            field = re.match(r"^(\w+):\s+(\d+) kB", line)
            if field and current:
                current[4][field[1]] = int(field[2])
    return result


def breakdown(pid, binary):
    stacks = thread_stack_pointers(pid)
    rows = {}
    maps = mappings(pid)
    # malloc's non-main arenas: a 64 MiB-aligned heap, its used part read-write and the rest
    # reserved (---p) right after it.
    for index, (low, high, perms, path, fields) in enumerate(maps):
        real = os.path.realpath(path) if path.startswith("/") else path
        if real == binary:
            if "x" in perms:
                kind = "binary: code (r-x)"
            elif "w" in perms:
                kind = "binary: data, bss (rw-)"
            else:
                kind = "binary: rodata / RELRO (r--)"
        elif path.startswith("/"):
            kind = f"lib: {os.path.basename(path)}"
        elif path == "[heap]":
            kind = "heap (main arena)"
        elif path in ("[stack]", "[vdso]", "[vvar]", "[vsyscall]"):
            kind = path
        elif "rw" in perms:
            owner = next((name for sp, name in stacks.items() if low <= sp < high), None)
            following = maps[index + 1] if index + 1 < len(maps) else None
            if owner:
                kind = f"thread stack {owner}"
            elif low % (64 << 20) == 0 and following and following[0] == high \
                    and following[2] == "---p":
                kind = "malloc arenas (non-main)"
            else:
                kind = "other anonymous rw"
        else:
            kind = "other anonymous (no access)"
        total = rows.setdefault(kind, [0, 0, 0, 0])
        total[0] += fields.get("Rss", 0)
        total[1] += fields.get("Anonymous", 0)
        total[2] += fields.get("Private_Dirty", 0)
        total[3] += 1
    return rows


def cpu_seconds(pid):
    """User + system CPU time of every thread of `pid` so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def show(pid, binary):
    rows = breakdown(pid, binary)
    threads = len(os.listdir(f"/proc/{pid}/task"))
    with open(f"/proc/{pid}/status") as f:
        rss = int(re.search(r"VmRSS:\s+(\d+)", f.read())[1])
    print(f"pid {pid}: VmRSS {rss} KiB, {threads} threads")
    print(f"{'mapping':<46} {'Rss':>7} {'Anon':>7} {'PrivDirty':>9} {'maps':>5}")
    libraries = [0, 0, 0, 0]
    for kind, (rss, anonymous, dirty, count) in sorted(rows.items(), key=lambda r: -r[1][0]):
        if rss == 0:
            continue
        print(f"{kind:<46} {rss:>7} {anonymous:>7} {dirty:>9} {count:>5}")
        if kind.startswith("lib: "):
            for i, value in enumerate((rss, anonymous, dirty, count)):
                libraries[i] += value
    print(f"{'(all shared libraries)':<46} {libraries[0]:>7} {libraries[1]:>7} "
          f"{libraries[2]:>9} {libraries[3]:>5}")


if args.pid:
    show(args.pid, os.path.realpath(f"/proc/{args.pid}/exe"))
    sys.exit(0)
if os.geteuid() != 0:
    sys.exit("rss-breakdown: needs root (network namespace)")
binary = os.path.realpath(args.binary)
work = tempfile.mkdtemp(prefix="bg-rss-")
namespace = f"bg-rss-{os.getpid()}"
subprocess.run(["ip", "netns", "add", namespace], check=True)
subprocess.run(["ip", "-n", namespace, "link", "set", "lo", "up"], check=True)
daemon = None
try:
    with open(f"{work}/config.toml", "w") as f:
        f.write(f'[store]\npath = "{work}/state.sqlite"\n[control]\nsocket = "{work}/control.sock"\n'
                f'[daemon]\nmax-concurrent = 16\n')
        for index in range(args.jobs):
            f.write(f'[[job]]\nid = "dev.bench.job-{index:04}"\n'
                    f'command = ["/bin/sh", "-c", "echo run >> {work}/runs"]\nevery = "1d"\n')
    daemon = subprocess.Popen(
        ["ip", "netns", "exec", namespace, binary, "run", "--config", f"{work}/config.toml"],
        stderr=open(f"{work}/daemon.log", "w"))

    def runs():
        try:
            with open(f"{work}/runs") as f:
                return len(f.readlines())
        except FileNotFoundError:
            return 0

    started = time.monotonic()
    deadline = started + 120 + args.jobs / 10
    while runs() < args.jobs:
        if daemon.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"rss-breakdown: the daemon ran {runs()} of {args.jobs} jobs; see "
                     f"{work}/daemon.log")
        time.sleep(0.1)
    # The daemon is `ip netns exec`'s child (exec'd in place: the same pid).
    print(f"start until every job ran once: {time.monotonic() - started:.1f} s wall, "
          f"{cpu_seconds(daemon.pid):.2f} s of the daemon's CPU (user + system)")
    time.sleep(5)
    show(daemon.pid, binary)
    if args.hold:
        print(f"holding pid {daemon.pid} for {args.hold} s", flush=True)
        time.sleep(args.hold)
finally:
    if daemon and daemon.poll() is None:
        daemon.terminate()
        daemon.wait(timeout=20)
    subprocess.run(["ip", "netns", "delete", namespace])
    shutil.rmtree(work, ignore_errors=True)
