#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the web console's browser tests
# (test/console/console-browser.test.ts drives /usr/bin/chromium through playwright-core).
# Installs it with apt-get when missing and run as root (or with sudo); otherwise says what to do,
# and fails when HOOKD_REQUIRE_ALL=1 (where the browser tests may not skip).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "chromium is missing and this is not root: apt-get install chromium (the browser tests skip without it)" >&2
    # Under HOOKD_REQUIRE_ALL=1 (CI) a skipped browser test is a failure: fail here, first.
    if [ "${HOOKD_REQUIRE_ALL:-}" = 1 ]; then exit 1; fi
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium
