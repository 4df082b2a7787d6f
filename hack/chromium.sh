#!/usr/bin/env bash
# Installs Debian's chromium when it is missing: the portal's page is
# tested in a real headless browser (systemtest TestPortalInBrowser,
# driven with chromedp). Safe to run again.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "chromium: installing Debian's chromium for the browser test" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
