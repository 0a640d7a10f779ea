#!/usr/bin/env python3
"""Bytes a full-screen program writes to a pseudo-terminal of a given size:
the first full paint (everything up to the first quiet gap after start) and
the steady bytes per second after it. Used by term_bytes.sh."""
import fcntl, os, pty, select, signal, struct, sys, termios, time

def measure(cols, rows, secs, argv):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ["COLUMNS"], os.environ["LINES"] = str(cols), str(rows)
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    start = time.monotonic()
    dump = open(os.environ["TERM_BYTES_DUMP"], "ab") if os.environ.get("TERM_BYTES_DUMP") else None
    first = None  # (bytes, time) of the first paint
    total = 0
    last_byte = start
    while time.monotonic() - start < secs:
        r, _, _ = select.select([fd], [], [], 0.05)
        now = time.monotonic()
        if r:
            try:
                b = os.read(fd, 65536)
            except OSError:
                break
            if not b:
                break
            total += len(b)
            if dump:
                dump.write(b)
            last_byte = now
        elif first is None and total > cols * rows // 4 and now - last_byte > 0.3:
            first = (total, now)
    os.kill(pid, signal.SIGTERM)
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    os.waitpid(pid, 0)
    end = time.monotonic()
    if first is None:
        first = (total, end)
    steady = (total - first[0]) / max(min(end, start + secs) - first[1], 1e-9)
    return first[0], steady

if __name__ == "__main__":
    cols, rows, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    paint, rate = measure(cols, rows, secs, sys.argv[4:])
    print(f"{paint} {rate:.0f}")
