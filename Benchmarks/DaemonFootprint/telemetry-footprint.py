#!/usr/bin/env python3
"""The idle daemon's memory and start-up with `[telemetry]` on and off (issue #29).

Usage: python3 Benchmarks/DaemonFootprint/telemetry-footprint.py BINARY JOBS ROUNDS

Each round starts `BINARY run` twice on a fresh store with JOBS periodic jobs (`every = "1d"`,
`/bin/true`), without and with `[telemetry]` (an endpoint nobody answers, `telemetry-network =
"any"`, so every run stays in the outbox and the export is retried with backoff), and prints:
the time from the start to the control socket's appearance, and VmRSS and Anonymous
(`/proc/PID/smaps_rollup`) 15 s after every job ran once.
"""
B, jobs, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def measure(telemetry):
    d = tempfile.mkdtemp(prefix="telrss-"); os.chmod(d, 0o700)
    cfg = f'[store]\npath = "{d}/state.sqlite"\n[control]\nsocket = "{d}/run/control.sock"\n'
    if telemetry:
        cfg += '[telemetry]\notlp-endpoint = "http://127.0.0.1:9"\ntelemetry-network = "any"\n'
    for i in range(jobs):
        cfg += f'[[job]]\nid = "dev.rss.j{i}"\nevery = "1d"\ncommand = ["/bin/true"]\n'
    open(f"{d}/config.toml", "w").write(cfg)
    t0 = time.monotonic()
    p = subprocess.Popen([B, "run", "--config", f"{d}/config.toml"], stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
    while not os.path.exists(f"{d}/run/control.sock"): time.sleep(0.005)
    ready = time.monotonic() - t0
    # until every job ran once
    while True:
        out = subprocess.run([B, "status", "--json", "--config", f"{d}/config.toml"], capture_output=True, text=True).stdout
        try:
            doc = json.loads(out)
            done = sum(1 for t in doc["tasks"] if t.get("lastResult"))
        except Exception:
            done = 0
        if done >= jobs: break
        time.sleep(0.5)
    time.sleep(15)
    st = open(f"/proc/{p.pid}/status").read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", st).group(1))
    anon = int(re.search(r"Anonymous:\s+(\d+)", open(f"/proc/{p.pid}/smaps_rollup").read()).group(1))
    p.terminate(); p.wait()
    subprocess.run(["rm", "-rf", d])
    return ready, rss, anon
for r in range(runs):
    for tel in (False, True):
        ready, rss, anon = measure(tel)
        print(f"telemetry={'on ' if tel else 'off'} socket-ready={ready*1000:.0f} ms VmRSS={rss/1024:.1f} MiB anon={anon/1024:.2f} MiB", flush=True)
