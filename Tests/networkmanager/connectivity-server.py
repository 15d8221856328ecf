"""NetworkManager's connectivity check target for Tests/networkmanager/run.sh.

Usage: connectivity-server.py ADDRESS MODE-FILE

Serves HTTP on ADDRESS:80. Every request reads MODE-FILE: "portal" answers a 302 to a login
page (a captive portal, as NetworkManager sees one), anything else 200 "OK" (the `response=`
NetworkManager is configured to expect). One line per request on stderr.
"""

import http.server
import sys

address, mode_file = sys.argv[1], sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        try:
            with open(mode_file) as file:
                mode = file.read().strip()
        except OSError:
            mode = "ok"
        if mode == "portal":
            self.send_response(302)
            self.send_header("Location", f"http://{address}/login")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            body = b"OK"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))
        sys.stderr.flush()


http.server.ThreadingHTTPServer((address, 80), Handler).serve_forever()
