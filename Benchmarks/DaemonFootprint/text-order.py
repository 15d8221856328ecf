#!/usr/bin/env python3
"""Regenerates packaging/daemon-text-order.txt, the order in which `Scripts/package` lays out
the code of the shipped binary (lld `--symbol-ordering-file`): the code a daemon touches in a
typical life comes first and sits together, so that it fills fewer pages of memory.

Usage (root: a loop-mounted file system and a network namespace, both created and removed here):
  Scripts/package      # writes .build/package/backgrounder.map next to the .deb
  python3 Benchmarks/DaemonFootprint/text-order.py [--binary PATH] [--map PATH] [--jobs 200]

1. Copies the unstripped release binary onto a small ext4 file system on a loop device whose
   read-ahead is 0, so that only the pages the daemon executes enter the page cache (the kernel's
   fault-around then maps nothing else): the resident code pages are exactly the touched ones.
2. Runs `backgrounder run` there with JOBS periodic jobs until each ran once, then `status`,
   `status --json`, `trigger`, `schedule`, `cancel`, a network change and a SIGHUP reload.
3. Reads which pages of its code are in the page cache (mincore): after start-up; then, the
   idle daemon having unmapped its code (HeapTuning.releaseIdleMemory), drops them from the
   cache and reads again after the steps from `status` to the network change: the pages its
   wake-ups use; and after the reload.
4. Through the linker map, writes one symbol per input section that has a touched page: first
   those of step 3's wake-ups, then the others, each group in address order.
Code that changed since the profile is just placed later (lld ignores unknown symbols).
"""
import argparse, bisect, ctypes, mmap, os, re, shutil, signal, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--map", default=".build/package/backgrounder.map")
parser.add_argument("--jobs", type=int, default=200)
parser.add_argument("--output", default="packaging/daemon-text-order.txt")
args = parser.parse_args()
if os.geteuid() != 0:
    sys.exit("text-order: needs root (loop mount, network namespace)")


def load_segments(binary):
    """(file offset, address, file size) of each LOAD segment."""
    segments = []
    headers = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                             check=True).stdout
    for line in headers.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            segments.append((int(fields[1], 16), int(fields[2], 16), int(fields[4], 16)))
    return segments


def code_sections(map_path):
    """(address, size) of each input section of .text in the lld map, in address order."""
    sections = []
    with open(map_path) as f:
        for line in f:
            fields = line.split(None, 4)
            if len(fields) == 5 and ":(.text" in fields[4] and int(fields[2], 16):
                sections.append((int(fields[0], 16), int(fields[2], 16)))
    return sorted(sections)


def code_symbols(binary):
    """(address, mangled name) of the binary's code symbols, in address order (the map shows
    C++ names demangled, the ordering file needs them mangled)."""
    listing = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                             check=True).stdout
    symbols = []
    for line in listing.splitlines():
        fields = line.split(" ", 2)
        if len(fields) == 3 and fields[1] in "tTwW":
            symbols.append((int(fields[0], 16), fields[2]))
    return sorted(symbols)


def touched_code_pages(binary, segments):
    """Addresses of the 4 KiB pages of the binary's code that are in the page cache. With the
    file's read-ahead at 0, a page enters the cache only when the daemon touches it, and stays
    there after the daemon unmaps its idle code (HeapTuning.releaseIdleMemory), so this is every
    page the daemon's life touched (mincore on a mapping of the file)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = os.path.getsize(binary)
    pages = []
    with open(binary, "rb") as f:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
        if address in (None, ctypes.c_void_p(-1).value):
            sys.exit(f"text-order: mmap {binary}: {os.strerror(ctypes.get_errno())}")
        try:
            vector = ctypes.create_string_buffer((size + 4095) // 4096)
            if libc.mincore(address, size, vector) != 0:
                sys.exit(f"text-order: mincore: {os.strerror(ctypes.get_errno())}")
            for segment_offset, segment_address, segment_size in segments:
                for file_offset in range(segment_offset - segment_offset % 4096,
                                         segment_offset + segment_size, 4096):
                    if vector.raw[file_offset // 4096] & 1:
                        pages.append(max(file_offset, segment_offset) - segment_offset
                                     + segment_address)
        finally:
            libc.munmap(address, size)
    return pages


def drop_cached_pages(path):
    """Writes out and drops the file's cached pages (those no process has mapped)."""
    descriptor = os.open(path, os.O_RDONLY)
    os.fsync(descriptor)
    os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(descriptor)


def profile(binary, work, namespace):
    """Runs the daemon through a typical life; returns the code pages it touched after
    start-up (while it answers requests, runs a job, sees a network change) and all the code
    pages it touched."""
    config = f"{work}/config.toml"
    runs = f"{work}/runs"

    def write_config(jobs):
        with open(config, "w") as f:
            f.write(f'[store]\npath = "{work}/state.sqlite"\n'
                    f'[control]\nsocket = "{work}/control.sock"\n'
                    f'[daemon]\nmax-concurrent = 16\n')
            for index in range(jobs):
                f.write(f'[[job]]\nid = "dev.profile.job-{index:04}"\n'
                        f'command = ["/bin/sh", "-c", "echo run >> {runs}"]\nevery = "1d"\n')

    def run_count():
        try:
            with open(runs) as f:
                return len(f.readlines())
        except FileNotFoundError:
            return 0

    def cli(*command):
        # The original file: the commands' own code must not enter the profiled file's cache.
        done = subprocess.run([args.binary, command[0], "--config", config, *command[1:]],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"text-order: {' '.join(command)} failed: {done.stderr.strip()}")

    def ns(*command):
        subprocess.run(["ip", "-n", namespace, *command], check=True)

    write_config(args.jobs)
    daemon = subprocess.Popen(["ip", "netns", "exec", namespace, binary, "run", "--config", config],
                              stderr=open(f"{work}/daemon.log", "w"))
    try:
        deadline = time.monotonic() + 120 + args.jobs / 10
        while run_count() < args.jobs:
            if daemon.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"text-order: the daemon ran {run_count()} of {args.jobs} jobs")
            time.sleep(0.1)
        time.sleep(2)
        segments = load_segments(binary)
        started = touched_code_pages(binary, segments)
        # The idle daemon has unmapped its code: drop it from the cache too, so that what is
        # cached after the next steps is what its wake-ups touch.
        drop_cached_pages(binary)
        cli("status")
        cli("status", "--json")
        cli("trigger", "dev.profile.job-0000")
        cli("schedule", "dev.profile.later", "--once", "--delay", "1d", "--command", "/bin/true")
        cli("cancel", "dev.profile.later")
        ns("link", "add", "to0", "type", "veth", "peer", "name", "to1")
        ns("link", "set", "to0", "up")
        ns("link", "set", "to1", "up")
        ns("address", "add", "192.0.2.1/24", "dev", "to0")
        time.sleep(1)
        steady = touched_code_pages(binary, segments)
        write_config(args.jobs + 5)
        daemon.send_signal(signal.SIGHUP)
        time.sleep(3)
        return steady, started + touched_code_pages(binary, segments)
    finally:
        daemon.terminate()
        daemon.wait(timeout=20)


sections = code_sections(args.map)
starts = [section[0] for section in sections]
mount = tempfile.mkdtemp(prefix="bg-text-order-")
image = f"{mount}.img"
namespace = f"bg-text-order-{os.getpid()}"
mounted = False
subprocess.run(["ip", "netns", "add", namespace], check=True)
try:
    subprocess.run(["truncate", "-s", "400M", image], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", image], check=True)
    subprocess.run(["mount", "-o", "loop", image, mount], check=True)
    mounted = True
    device = subprocess.run(["findmnt", "-n", "-o", "SOURCE", mount], capture_output=True,
                            text=True, check=True).stdout.strip()
    with open(f"/sys/block/{os.path.basename(device)}/queue/read_ahead_kb", "w") as f:
        f.write("0")
    subprocess.run(["ip", "-n", namespace, "link", "set", "lo", "up"], check=True)
    binary = f"{mount}/backgrounder"
    shutil.copy(args.binary, binary)
    # A fresh file's pages are still cached from the copy: write them out and drop them.
    drop_cached_pages(binary)
    steady_pages, pages = profile(binary, mount, namespace)
finally:
    subprocess.run(["ip", "netns", "delete", namespace])
    if mounted:
        subprocess.run(["umount", mount], check=True)
    os.rmdir(mount)
    if os.path.exists(image):
        os.remove(image)



def sections_on(pages):
    """Indexes of the input sections that have a byte on one of `pages`."""
    found = set()
    for page in pages:
        index = bisect.bisect_right(starts, page + 4095) - 1
        while index >= 0 and sections[index][0] + sections[index][1] > page:
            found.add(index)
            index -= 1
    return found


# The code an idle daemon maps again when it wakes first, then the rest of what it touched
# (start-up, reload): each part in address order.
steady = sections_on(steady_pages)
touched = sections_on(pages) | steady
symbols = code_symbols(args.binary)
addresses = [address for address, _ in symbols]
names = []
for index in sorted(steady) + sorted(touched - steady):
    start, size = sections[index]
    first = bisect.bisect_left(addresses, start)
    if first < len(symbols) and symbols[first][0] < start + size:
        names.append(symbols[first][1])
names = list(dict.fromkeys(names))
with open(args.output, "w") as f:
    f.write("".join(name + "\n" for name in names))
size = sum(sections[index][1] for index in touched)
steady_size = sum(sections[index][1] for index in steady)
print(f"{len(pages) * 4} KiB of code touched, in {len(touched)} input sections "
      f"({size / 1048576:.1f} MiB), {len(steady)} of them ({steady_size / 1048576:.1f} MiB) "
      f"after start-up; {len(names)} symbols written to {args.output}")
