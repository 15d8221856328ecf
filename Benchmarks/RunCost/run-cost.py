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
args = parser.parse_args()

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


def write_config(directory, due):
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


def daemon_cpu(binary, due):
    directory = tempfile.mkdtemp(prefix="bg-run-cost-")
    try:
        write_config(directory, due)
        environment = dict(os.environ)
        cgroup = None
        if cgroup_mount:
            cgroup = tempfile.mkdtemp(prefix="daemon-", dir=cgroup_mount)
            environment["BACKGROUNDER_CGROUP"] = cgroup
        daemon = subprocess.Popen([binary, "run", "--config", f"{directory}/config.toml"],
                                  stderr=subprocess.DEVNULL, env=environment)
        try:
            deadline = time.monotonic() + 600
            done = (lambda: runs(directory) >= args.jobs) if due else (lambda: serving(directory))
            while not done():
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise SystemExit(f"run-cost: {binary} did not finish")
                time.sleep(0.05)
            if not due:
                time.sleep(0.5)  # the start's last steps after the socket is bound
            return cpu_seconds(daemon.pid)
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
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


binaries = [("ours", args.binary)] + ([("before", args.baseline)] if args.baseline else [])
results = {}
for _ in range(args.rounds):
    results.setdefault("floor: posix_spawn + waitpid", []).append(floor() / args.jobs * 1e3)
    for label, binary in binaries:
        ran = daemon_cpu(binary, True)
        idle = daemon_cpu(binary, False)
        results.setdefault(label, []).append((ran - idle) / args.jobs * 1e3)
print(f"{args.jobs} runs of /bin/true{', [metrics] file' if args.metrics else ''}"
      f"{', on-failure hook' if args.alerts else ''}{', a cgroup v2 per run' if args.cgroup else ''}"
      f", {args.rounds} rounds: "
      "CPU ms per run, median (min–max)")
base = statistics.median(results["floor: posix_spawn + waitpid"])
for label, values in results.items():
    median = statistics.median(values)
    print(f"{label:<30} {median:6.3f} ms ({min(values):.3f}–{max(values):.3f})"
          f"  {median / base:5.1f}× the floor")
