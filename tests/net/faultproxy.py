"""A loopback HTTP/1.1 proxy that injects faults, for zcube's store tests and
benchmark. It forwards each request unchanged (Host included, so SigV4
signatures still match) to 127.0.0.1:UPSTREAM over a kept connection and
relays the answer, except when it injects a fault:

  500       answer 500 Internal Server Error
  503       answer 503 with S3's <Code>SlowDown</Code>
  429       answer 429 Too Many Requests
  reset     close the connection at once (RST), no answer
  stall     say nothing for --stall seconds, then close
  cut       (GET answers only) relay the headers and part of the body, then close
  flip      (GET answers only; only when named in --faults) relay the answer with
            one byte of the body changed: damage a checksum must catch

A request is faulted with probability --rate (the kinds in turn), but each distinct request
(method, path, Range) at most --max-per-request times, so a client retrying
that often always gets through, and one retrying less never does (rate 1);
with --match only requests whose path (query included) contains that text.
Faults other than cut happen before the request reaches the server.
--latency-ms delays every request (the benchmark's slow network). Prints the
port on its first line; --log FILE gets one line per request and fault.

  faultproxy.py --upstream PORT [--rate P] [--faults 500,503,...] [--seed N]
                [--max-per-request K] [--stall S] [--latency-ms MS] [--match TEXT] [--log FILE]
"""
import argparse
import random
import socket
import socketserver
import struct
import sys
import threading
import time

ALL = ["500", "503", "429", "reset", "stall", "cut"]
KNOWN = ALL + ["flip"]


def read_head(f):
    """Request or status line plus headers, as (first line, [(name, value)], raw bytes); None at EOF."""
    raw = f.readline()
    if not raw:
        return None
    lines = [raw]
    headers = []
    while True:
        line = f.readline()
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            break
        k, _, v = line.decode("latin-1").partition(":")
        headers.append((k.strip().lower(), v.strip()))
    return raw.decode("latin-1").strip(), headers, b"".join(lines)


def header(headers, name):
    for k, v in headers:
        if k == name:
            return v
    return None


def read_body(f, headers, no_body=False):
    """The body as bytes (Content-Length or chunked, re-encoded plain)."""
    if no_body:
        return b""
    if (header(headers, "transfer-encoding") or "").lower() == "chunked":
        out = []
        while True:
            n = int(f.readline().split(b";")[0], 16)
            if n == 0:
                while f.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(out)
            out.append(f.read(n))
            f.readline()
    n = int(header(headers, "content-length") or 0)
    data = f.read(n) if n else b""
    if len(data) < n:  # the peer went away mid-body: forward nothing
        raise ConnectionError("body cut short")
    return data


class State:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.lock = threading.Lock()
        self.counts = {}
        self.turn = 0
        self.log = open(args.log, "a", buffering=1) if args.log else None

    def pick(self, method, path, rng_hdr):
        """The fault for this request, or None."""
        with self.lock:
            key = (method, path, rng_hdr)
            if (self.counts.get(key, 0) >= self.args.max_per_request or self.args.match not in path or
                    self.rng.random() >= self.args.rate):
                fault = None
            else:
                kinds = [k for k in self.args.faults if k not in ("cut", "flip") or method == "GET"]
                fault = kinds[self.turn % len(kinds)] if kinds else None  # in turn: every kind shows up
                self.turn += 1
            if fault:
                self.counts[key] = self.counts.get(key, 0) + 1
            if self.log:
                self.log.write("%s %s %s %s\n" % (method, path, rng_hdr or "-", fault or "ok"))
            return fault


def simple_answer(code, reason, body=b""):
    return (b"HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n" % (
        code, reason.encode(), len(body))) + body


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        st = self.server.state
        up = None
        try:
            while True:
                head = read_head(self.rfile)
                if head is None:
                    return
                line, headers, raw = head
                method, path = line.split(" ")[:2]
                if (header(headers, "expect") or "").lower() == "100-continue":
                    self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    self.wfile.flush()
                    raw = b"".join(l for l in raw.splitlines(True) if not l.lower().startswith(b"expect:"))
                body = read_body(self.rfile, headers)
                if st.args.latency_ms:
                    time.sleep(st.args.latency_ms / 1000)
                fault = st.pick(method, path, header(headers, "range"))
                if fault == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                if fault == "stall":
                    time.sleep(st.args.stall)
                    return
                if fault in ("500", "503", "429"):
                    answer = {
                        "500": simple_answer(500, "Internal Server Error",
                                             b"<Error><Code>InternalError</Code></Error>"),
                        "503": simple_answer(503, "Slow Down", b"<Error><Code>SlowDown</Code>"
                                             b"<Message>Please reduce your request rate.</Message></Error>"),
                        "429": simple_answer(429, "Too Many Requests"),
                    }[fault]
                    self.wfile.write(answer)
                    continue
                if up is None:
                    up = socket.create_connection(("127.0.0.1", st.args.upstream))
                    upf = up.makefile("rb")
                te = [(k, v) for k, v in headers if k == "transfer-encoding"]
                if te:  # forward a chunked request body with a length instead
                    raw = raw.split(b"\r\n")[0] + b"\r\n" + b"".join(
                        ("%s: %s\r\n" % (k, v)).encode("latin-1") for k, v in headers
                        if k != "transfer-encoding") + b"Content-Length: %d\r\n\r\n" % len(body)
                up.sendall(raw + body)
                while True:  # skip 1xx answers
                    rhead = read_head(upf)
                    if rhead is None:
                        return
                    status = int(rhead[0].split(" ")[1])
                    if status >= 200:
                        break
                rline, rheaders, rraw = rhead
                rbody = read_body(upf, rheaders, method == "HEAD" or status in (204, 304))
                if (header(rheaders, "transfer-encoding") or "").lower() == "chunked":
                    rraw = rraw.split(b"\r\n")[0] + b"\r\n" + b"".join(
                        ("%s: %s\r\n" % (k, v)).encode("latin-1") for k, v in rheaders
                        if k != "transfer-encoding") + b"Content-Length: %d\r\n\r\n" % len(rbody)
                if fault == "flip" and rbody and 200 <= status < 300:
                    rbody = rbody[:len(rbody) // 2] + bytes([rbody[len(rbody) // 2] ^ 0x40]) + rbody[len(rbody) // 2 + 1:]
                if fault == "cut" and len(rbody) > 1:
                    self.wfile.write(rraw + rbody[:len(rbody) // 2])
                    self.wfile.flush()
                    return
                self.wfile.write(rraw + rbody)
                self.wfile.flush()
        except (ConnectionError, OSError, ValueError):
            return
        finally:
            if up is not None:
                up.close()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", type=int, required=True)
    p.add_argument("--rate", type=float, default=0.0)
    p.add_argument("--faults", default=",".join(ALL))
    p.add_argument("--max-per-request", type=int, default=2)
    p.add_argument("--stall", type=float, default=3.0)
    p.add_argument("--latency-ms", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--match", default="")
    p.add_argument("--log")
    args = p.parse_args()
    args.faults = [f for f in args.faults.split(",") if f]
    bad = [f for f in args.faults if f not in KNOWN]
    if bad:
        sys.exit("faultproxy: unknown faults %s (known: %s)" % (bad, KNOWN))
    srv = Server(("127.0.0.1", 0), Handler)
    srv.state = State(args)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
