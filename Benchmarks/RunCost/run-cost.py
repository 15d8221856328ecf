#!/usr/bin/env python3
"""The daemon's CPU per job run, beside the floor: a fork+exec of the same command (issue #35).

Usage: python3 Benchmarks/RunCost/run-cost.py [--binary B] [--baseline OLD_B] [--jobs 1000]
                                              [--rounds 3] [--metrics] [--alerts] [--cgroup]
Each round, for each binary: a fresh store and a config of JOBS jobs (`every = "1d"`, command
`/bin/true`: each is due at once), the daemon started, and its CPU (user + system, every thread,
/proc/PID/stat) read once every job has a run in the store (read with Python's sqlite3,
read-only, so the reading costs the daemon nothing). That CPU less the CPU of a start with the
same jobs not due (`calendar` an hour away), over JOBS, is the CPU per run. The floor, in the
same round: JOBS `posix_spawn` + `waitpid` of `/bin/true` from this process, its own CPU only
(as the daemon's excludes its children's). With --metrics the config also has a `[metrics]
file` (the Prometheus textfile, which every run changes); with --alerts a `[daemon] on-failure`
hook (never run: every job succeeds), so that the alert watch watches every job. With --cgroup
(root) runs get a cgroup v2 each (`BACKGROUNDER_CGROUP` in a private cgroup2 mount), as under
the packaged unit's `Delegate=yes`: a cgroup per run, and the kernel's byte counter on it.
With --bandwidth RATE (root; implies --cgroup) every daemon runs in a network namespace made
here (a veth pair, its default route over one end, so that is the primary link), and each round
measures the binary twice: its jobs (`network = "any"`) without a cap, and with `bandwidth = RATE`
(`bandwidth-required`), so each capped
run gets an HTB class on that link and its packets' priority program: the cost of shaping,
side by side. It also counts the daemon's system calls per run both ways (`perf stat -e
raw_syscalls:sys_enter` starts the daemon: its threads and the runs' processes alike, from its
start to its end, less the same with the jobs not due; the difference is what a cap adds).
"""
import argparse, atexit, os, resource, shutil, sqlite3, statistics, subprocess, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--baseline", help="an older binary, measured in the same rounds")
parser.add_argument("--jobs", type=int, default=1000)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--metrics", action="store_true", help="with a [metrics] file")
parser.add_argument("--alerts", action="store_true", help="with a [daemon] on-failure hook")
parser.add_argument("--cgroup", action="store_true", help="runs in cgroup v2 cgroups (root)")
parser.add_argument("--bandwidth", help="also measure with this cap on every job (root)")
args = parser.parse_args()
if args.bandwidth:
    args.cgroup = True

namespace = None
if args.bandwidth:
    namespace = f"bg-run-cost-{os.getpid()}"
    for command in (
        ["ip", "netns", "add", namespace],
        ["ip", "-n", namespace, "link", "set", "lo", "up"],
        ["ip", "-n", namespace, "link", "add", "bgcost0", "type", "veth", "peer", "name", "bgcost1"],
        ["ip", "-n", namespace, "addr", "add", "10.77.0.1/24", "dev", "bgcost0"],
        ["ip", "-n", namespace, "link", "set", "bgcost0", "up"],
        ["ip", "-n", namespace, "link", "set", "bgcost1", "up"],
        ["ip", "-n", namespace, "route", "add", "default", "via", "10.77.0.2", "dev", "bgcost0"],
    ):
        if command[1:3] == ["netns", "add"]:
            atexit.register(lambda: subprocess.run(["ip", "netns", "delete", namespace]))
        subprocess.run(command, check=True)

cgroup_mount = None
if args.cgroup:
    cgroup_mount = tempfile.mkdtemp(prefix="bg-run-cost-cgroup-")
    subprocess.run(["mount", "-t", "cgroup2", "none", cgroup_mount], check=True)
    atexit.register(lambda: (subprocess.run(["umount", "-l", cgroup_mount]),
                             os.rmdir(cgroup_mount)))


def remove_cgroup(path):
    """Removes cgroup `path` and the cgroups under it (empty once the daemon stopped)."""
    for root, directories, _ in os.walk(path, topdown=False):
        for directory in directories:
            os.rmdir(os.path.join(root, directory))
    os.rmdir(path)
elapse = time.strftime("%H:%M", time.gmtime(time.time() + 3600))


def write_config(directory, due, capped=False):
    with open(f"{directory}/config.toml", "w") as f:
        f.write(f'[store]\npath = "{directory}/state.sqlite"\n'
                f'[control]\nsocket = "{directory}/control.sock"\n')
        if args.alerts:
            f.write('[daemon]\non-failure = ["/bin/true"]\n')
        if args.metrics:
            f.write(f'[metrics]\nfile = "{directory}/backgrounder.prom"\n')
        for index in range(args.jobs):
            schedule = 'every = "1d"' if due else f'calendar = "*-*-* {elapse}:00 UTC"'
            f.write(f'[[job]]\nid = "dev.bench.run-{index:05}"\ncommand = ["/bin/true"]\n'
                    f'{schedule}\n')
            if args.bandwidth:
                # Both ways: a run decided before the network is known could not be capped.
                f.write('network = "any"\n')
            if capped:
                f.write(f'bandwidth = "{args.bandwidth}"\nbandwidth-required = true\n')


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def runs(directory):
    try:
        db = sqlite3.connect(f"file:{directory}/state.sqlite?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT count(DISTINCT taskId) FROM run").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def serving(directory):
    return os.path.exists(f"{directory}/control.sock")


class Child:
    """The daemon `perf stat` started (its only child), as much of a Popen as is used here."""

    def __init__(self, parent):
        self.parent = parent
        deadline = time.monotonic() + 10
        while True:
            try:
                with open(f"/proc/{parent.pid}/task/{parent.pid}/children") as f:
                    children = f.read().split()
            except OSError:
                children = []
            if children:
                self.pid = int(children[0])
                return
            if time.monotonic() > deadline or parent.poll() is not None:
                raise SystemExit("run-cost: perf did not start the daemon")
            time.sleep(0.001)

    def poll(self):
        return self.parent.poll()

    def terminate(self):
        try:
            os.kill(self.pid, 15)
        except ProcessLookupError:
            pass

    def wait(self, timeout):
        return self.parent.wait(timeout=timeout)


def shaped_runs(directory):
    """Runs that were capped: their log line says so (stderr, kept with --bandwidth)."""
    try:
        with open(f"{directory}/stderr") as f:
            return sum(1 for line in f if "run's egress capped" in line)
    except OSError:
        return 0


def daemon_cpu(binary, due, capped=False):
    """The daemon's CPU seconds, and its system calls (with --bandwidth, else None)."""
    directory = tempfile.mkdtemp(prefix="bg-run-cost-")
    try:
        write_config(directory, due, capped)
        environment = dict(os.environ)
        cgroup = None
        if cgroup_mount:
            cgroup = tempfile.mkdtemp(prefix="daemon-", dir=cgroup_mount)
            environment["BACKGROUNDER_CGROUP"] = cgroup
        command = [binary, "run", "--config", f"{directory}/config.toml"]
        if namespace:
            command = ["ip", "netns", "exec", namespace] + command  # exec: the same process
        stderr = open(f"{directory}/stderr", "w") if namespace else subprocess.DEVNULL
        counter = None
        if namespace:
            # perf starts the daemon: its system calls are counted from its first to its last.
            counter = subprocess.Popen(
                ["perf", "stat", "-x", ",", "-e", "raw_syscalls:sys_enter", "-o",
                 f"{directory}/perf", "--"] + command, stderr=stderr, env=environment)
            daemon = Child(counter)
        else:
            daemon = subprocess.Popen(command, stderr=stderr, env=environment)
        try:
            deadline = time.monotonic() + 600
            done = (lambda: runs(directory) >= args.jobs) if due else (lambda: serving(directory))
            while not done():
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise SystemExit(f"run-cost: {binary} did not finish")
                time.sleep(0.05)
            if not due:
                time.sleep(0.5)  # the start's last steps after the socket is bound
            cpu = cpu_seconds(daemon.pid)
            calls = None
            if counter:
                daemon.terminate()
                counter.wait(timeout=30)
                with open(f"{directory}/perf") as f:
                    calls = next(int(line.split(",")[0]) for line in f
                                 if "raw_syscalls:sys_enter" in line)
            return cpu, calls
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
            # Every run capped (its log line; read once the daemon is gone).
            if capped and due and shaped_runs(directory) < args.jobs:
                raise SystemExit(f"run-cost: only {shaped_runs(directory)} of {args.jobs} "
                                 "runs were capped")
            if cgroup:
                remove_cgroup(cgroup)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def floor():
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(args.jobs):
        pid = os.posix_spawn("/bin/true", ["/bin/true"], os.environ)
        os.waitpid(pid, 0)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


binaries = [("ours", args.binary, False)]
if args.bandwidth:
    binaries.append((f"ours, bandwidth {args.bandwidth}", args.binary, True))
if args.baseline:
    binaries.append(("before", args.baseline, False))
    if args.bandwidth:
        binaries.append((f"before, bandwidth {args.bandwidth}", args.baseline, True))
results = {}
calls = {}
for _ in range(args.rounds):
    results.setdefault("floor: posix_spawn + waitpid", []).append(floor() / args.jobs * 1e3)
    for label, binary, capped in binaries:
        ran, ran_calls = daemon_cpu(binary, True, capped)
        idle, idle_calls = daemon_cpu(binary, False, capped)
        results.setdefault(label, []).append((ran - idle) / args.jobs * 1e3)
        if ran_calls is not None:
            calls.setdefault(label, []).append((ran_calls - idle_calls) / args.jobs)
print(f"{args.jobs} runs of /bin/true{', [metrics] file' if args.metrics else ''}"
      f"{', on-failure hook' if args.alerts else ''}{', a cgroup v2 per run' if args.cgroup else ''}"
      f"{', in a network namespace of its own' if namespace else ''}"
      f", {args.rounds} rounds: "
      "CPU ms per run, median (min–max)")
base = statistics.median(results["floor: posix_spawn + waitpid"])
for label, values in results.items():
    median = statistics.median(values)
    line = (f"{label:<30} {median:6.3f} ms ({min(values):.3f}–{max(values):.3f})"
            f"  {median / base:5.1f}× the floor")
    if label in calls:
        line += f"; system calls per run {statistics.median(calls[label]):.1f}" \
                f" ({min(calls[label]):.1f}–{max(calls[label]):.1f}, with the run's processes)"
    print(line)
