#!/bin/bash
# Install the browser test's one npm package (playwright-core, pinned in
# package-lock.json).  The browser is Debian's chromium: nothing else is
# downloaded.  Needs nodejs, npm and chromium from apt.
set -eu
cd "$(dirname "$0")"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
