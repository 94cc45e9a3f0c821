#!/usr/bin/env bash
# Look at the HTML report the way a reader does: headless Chromium renders it at 390 px (a
# phone) and 1280 px, one screenshot per place below, for a person to look at (CI keeps them).
#   bash workflow/scripts/screenshot_report.sh [report/lecture17.html] [report/screenshots]
# Needs Debian's `chromium` (apt-get install chromium), a CJK font (fonts-noto-cjk) for the
# Chinese text, and the pinned Playwright (requirements.txt), which drives the system browser:
# it downloads none. The flags keep Chromium off the network.
set -euo pipefail
html=$(realpath "${1:-report/lecture17.html}")
out=${2:-report/screenshots}
mkdir -p "$out"
python - "$html" "$out" <<'EOF'
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

html, out = Path(sys.argv[1]), Path(sys.argv[2])
PLACES = ["", "overview", "s4-4", "s9-1", "fig-9-4", "s11"]  # "" = the top of the page
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
WIDTHS = {390: dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True),
          1280: dict(viewport={"width": 1280, "height": 900})}
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
    for width, device in WIDTHS.items():
        context = browser.new_context(**device)
        tab = context.new_page()
        tab.goto(html.as_uri())
        for place in PLACES:
            if place and tab.locator(f"[id='{place}']").count() == 0:
                continue  # not in this build (a small config)
            tab.evaluate(f"location.hash = '{place}'" if place else "window.scrollTo(0, 0)")
            path = out / f"report-{width}-{place or 'top'}.png"
            tab.screenshot(path=path)
            print(f"截图 screenshot → {path}")
        context.close()
    browser.close()
EOF
