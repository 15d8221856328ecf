#!/usr/bin/python3
"""How long one-shot `backgrounder status` takes when NetworkManager is on the bus but silent.

Issue 23 item 2: the source timeout (`[network] source-timeout`, default 5 s) is for the
source as a whole, not per device. Usage (a private dbus-daemon is used; nothing else touched):

    python3 measure.py BINARY DEVICES [stop|hang]

`stop`: python-dbusmock's NetworkManager with DEVICES Wi-Fi devices, then SIGSTOP (nothing
answers). `hang`: hang_networkmanager.py, which answers the manager's GetAll (DEVICES device
paths) but never a device's. Prints the wall time and the `sources` / `health` that
`status --json` reported.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

binary, devices = sys.argv[1], int(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else "stop"
here = os.path.dirname(os.path.abspath(__file__))
directory = tempfile.mkdtemp(prefix="bgbench-bus-")
with open(f"{directory}/bus.conf", "w") as config:
    config.write(
        '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" '
        '"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">'
        f"<busconfig><type>session</type><listen>unix:path={directory}/bus</listen>"
        "<auth>EXTERNAL</auth><policy context=\"default\"><allow send_destination=\"*\" "
        'eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>')
bus = subprocess.Popen(
    ["dbus-daemon", "--nofork", "--nopidfile", f"--config-file={directory}/bus.conf"],
    stderr=subprocess.DEVNULL)
while not os.path.exists(f"{directory}/bus"):
    time.sleep(0.01)
env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={directory}/bus")


def send(path, method, *arguments):
    return subprocess.run(
        ["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.NetworkManager",
         path, method, *arguments], env=env, capture_output=True, text=True)


if mode == "hang":
    nm = subprocess.Popen(
        ["/usr/bin/python3", f"{here}/hang_networkmanager.py", str(devices)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    nm.stdout.readline()  # "ready"
else:
    nm = subprocess.Popen(
        ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "networkmanager"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):
        reply = send("/org/freedesktop", "org.freedesktop.DBus.Introspectable.Introspect")
        if "AddWiFiDevice" in reply.stdout:
            break
        time.sleep(0.02)
    for index in range(devices):
        send("/org/freedesktop", "org.freedesktop.DBus.Mock.AddWiFiDevice",
             f"string:wifi{index}", f"string:wlan{index}", "uint32:100")
    os.kill(nm.pid, signal.SIGSTOP)
with open(f"{directory}/config.toml", "w") as config:
    config.write(f'[store]\npath = "{directory}/s.sqlite"\n'
                 f'[control]\nsocket = "{directory}/c.sock"\n')
started = time.monotonic()
result = subprocess.run([binary, "status", "--json", "--config", f"{directory}/config.toml"],
                        env=env, capture_output=True, text=True)
elapsed = time.monotonic() - started
document = json.loads(result.stdout) if result.stdout else {}
print(f"mode={mode} devices={devices} exit={result.returncode} seconds={elapsed:.2f} "
      f"sources={document.get('network', {}).get('sources')} "
      f"health={[p['kind'] for p in document.get('health', {}).get('problems', [])]}")
os.kill(nm.pid, signal.SIGKILL)
bus.kill()
shutil.rmtree(directory, ignore_errors=True)
