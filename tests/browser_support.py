"""What every browser test launches: Debian's Chromium (``apt-get install chromium``; Playwright
cannot download its own browsers here), headless and with nothing that reaches the network."""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
