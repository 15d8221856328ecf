#!/usr/bin/env python3
"""How often the monitor keeps a deleted nexthop object's link primary (issue #34).

Usage: sudo python3 Benchmarks/KernelRaces/nexthop-delete.py --binary B [--baseline OLD_B]
                                                              [--iterations 5000] [--rounds 2]
In a network namespace of its own (deleted at the end): links a0 (default route, metric 100)
and b0. Each iteration adds nexthop object 1 on b0 and a default route through it (metric 10),
waits for `backgrounder status --watch --json` to name b0 primary, deletes the object, and
waits up to 1 s for a0. The kernel sends RTM_DELNEXTHOP before it removes the routes that use
the object (under the routing lock, which a route lookup does not take), so a lookup asked at
once can still name b0, and no later message corrects it: such an iteration counts as stale
(and `ip route get` is printed beside it); so does an addition not seen within 5 s. Binaries
alternate round by round.
"""
import argparse, json, os, select, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", required=True)
parser.add_argument("--baseline", help="an older binary, measured in the same rounds")
parser.add_argument("--iterations", type=int, default=5000)
parser.add_argument("--rounds", type=int, default=2)
args = parser.parse_args()
config = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
config.close()


def run(binary):
    ns = f"bgnhrace{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)

    def ip(*arguments):
        subprocess.run(["ip", "-n", ns, *arguments], check=True)

    watch = None
    try:
        for link, subnet in (("a0", 1), ("b0", 2)):
            ip("link", "add", link, "type", "veth", "peer", "name", link + "p")
            ip("link", "set", link + "p", "up")
            ip("link", "set", link, "up")
            ip("addr", "add", f"10.99.{subnet}.2/24", "dev", link)
        ip("route", "add", "default", "via", "10.99.1.1", "dev", "a0", "metric", "100")
        watch = subprocess.Popen(
            ["ip", "netns", "exec", ns, binary, "status", "--watch", "--json", "--config",
             config.name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        primary = [None]

        def wait_for(link, timeout):
            end = time.time() + timeout
            while primary[0] != link:
                left = end - time.time()
                if left <= 0 or not select.select([watch.stdout], [], [], left)[0]:
                    return False
                try:
                    document = json.loads(watch.stdout.readline())
                except ValueError:
                    continue
                network = document.get("network", document)
                if "primary" in network:
                    primary[0] = network["primary"]
            return True

        if not wait_for("a0", 10):
            sys.exit(f"{binary}: never saw a0 primary")
        stale = 0
        for index in range(args.iterations):
            ip("nexthop", "add", "id", "1", "via", "10.99.2.1", "dev", "b0")
            ip("route", "add", "default", "nhid", "1", "metric", "10")
            if not wait_for("b0", 5):
                kernel = subprocess.run(["ip", "-n", ns, "route", "get", "8.8.8.8"],
                                        capture_output=True, text=True).stdout.split("\n")[0]
                print(f"  {binary}: iteration {index}: still {primary[0]} 5 s after the "
                      f"route through b0 was added; the kernel: {kernel}", flush=True)
                missed[binary] += 1
                wait_for("b0", 30)
            ip("nexthop", "del", "id", "1")
            if not wait_for("a0", 1):
                stale += 1
                kernel = subprocess.run(["ip", "-n", ns, "route", "get", "8.8.8.8"],
                                        capture_output=True, text=True).stdout.split("\n")[0]
                print(f"  {binary}: iteration {index}: still {primary[0]} 1 s after the "
                      f"deletion; the kernel: {kernel}", flush=True)
                wait_for("a0", 30)
        return stale
    finally:
        if watch:
            watch.kill()
        subprocess.run(["ip", "netns", "del", ns])


binaries = [args.binary] + ([args.baseline] if args.baseline else [])
totals = {binary: 0 for binary in binaries}
missed = {binary: 0 for binary in binaries}
for round_ in range(args.rounds):
    for binary in binaries if round_ % 2 == 0 else reversed(binaries):
        started = time.time()
        stale = run(binary)
        totals[binary] += stale
        print(f"round {round_ + 1}: {binary}: {stale} stale of {args.iterations} "
              f"({time.time() - started:.0f} s)", flush=True)
for binary, stale in totals.items():
    print(f"{binary}: {stale} stale of {args.iterations * args.rounds}"
          + (f"; {missed[binary]} additions not seen within 5 s" if missed[binary] else ""))
os.unlink(config.name)
