#!/usr/bin/env bash
# Bytes on the wire: schedtop and htop side by side on a pseudo-terminal of
# the same size, the same threads (300 that wake 20 times a second each)
# and the same 1 s refresh; prints the first full paint and the steady bytes
# per second of each, at 200x50 and 80x24.
#   bench/term_bytes.sh [SCHEDTOP_BINARY] [SECONDS]   (as root; installs htop if missing)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../target/debug/schedtop}
secs=${2:-12}
extra=${SCHEDTOP_ARGS:-}
command -v htop >/dev/null || apt-get install -y htop >/dev/null
# 300 busy-ish threads in one process, in a process group of their own
python3 - <<'PY' &
import threading, time
def loop():
    while True:
        t = time.monotonic()
        while time.monotonic() - t < 0.0002:
            pass
        time.sleep(0.05)
for _ in range(300):
    threading.Thread(target=loop, daemon=True).start()
time.sleep(3600)
PY
load=$!
trap 'kill $load 2>/dev/null; wait $load 2>/dev/null || true' EXIT
sleep 1
printf '%-8s %-18s %12s %10s\n' size program first_paint bytes/s
for size in "200 50" "80 24"; do
    set -- $size
    # shellcheck disable=SC2086
    read -r p r < <(python3 "$here/term_bytes.py" "$1" "$2" "$secs" "$bin" -i 1 $extra)
    printf '%-8s %-18s %12s %10s\n' "${1}x$2" schedtop "$p" "$r"
    read -r p r < <(python3 "$here/term_bytes.py" "$1" "$2" "$secs" htop -d 10)
    printf '%-8s %-18s %12s %10s\n' "${1}x$2" "htop -d 10" "$p" "$r"
done
