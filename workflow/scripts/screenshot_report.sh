#!/usr/bin/env bash
# Look at the HTML report the way a reader does: headless Chromium renders it to a PNG.
#   bash workflow/scripts/screenshot_report.sh [report/lecture17.html] [report/screenshots]
# Needs Debian's `chromium` (apt-get install chromium) and a CJK font (fonts-noto-cjk) for the
# Chinese text; the flags keep Chromium off the network.
set -euo pipefail
html=$(realpath "${1:-report/lecture17.html}")
out=${2:-report/screenshots}
mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --window-size=1100,16000 \
  --screenshot="$out/report.png" "file://$html" 2>/dev/null
echo "截图 screenshot → $out/report.png"
