#!/bin/sh
# Installs hookd on a systemd host from its release tarball (README "Installing for production"):
#
#   sudo sh scripts/install.sh ./hookd-0.1.0.tgz
#
# - hookd and hookctl into $PREFIX/bin (default /usr/local), their man pages into $PREFIX/share/man;
# - /etc/hookd/hookd.json from contrib/hookd.example.json, unless it exists (then it is kept);
# - the unit as /etc/systemd/system/hookd.service, enabled and started (state in /var/lib/hookd).
#
# Needs node >= 24.11 (the 24 or 26 LTS line) and npm on systemd's PATH. npm fetches the
# dependencies; better-sqlite3 13 ships prebuilt Node-API binaries (glibc or musl, x64 or arm64;
# macOS, Windows), so nothing is compiled.
# Environment: PREFIX (default /usr/local), NO_START=1 to install and enable without starting.
set -eu

tarball=${1:-}
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
  echo "usage: sudo sh $0 ./hookd-VERSION.tgz   (make it with: npm pack, in a clone)" >&2
  exit 2
fi
prefix=${PREFIX:-/usr/local}
# The PATH systemd gives services (systemd.exec(5)); node must be found on it.
systemd_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

if [ "$(id -u)" != 0 ]; then
  echo "install.sh: run as root (sudo): it writes $prefix, /etc/hookd and /etc/systemd/system" >&2
  exit 1
fi
node_version=$(env PATH="$systemd_path" node -p 'process.versions.node' 2>/dev/null || true)
if [ -z "$node_version" ]; then
  echo "install.sh: no node on systemd's PATH ($systemd_path); install Node.js 24.11 or later (24 or 26 LTS)" >&2
  exit 1
fi
if ! env PATH="$systemd_path" node -e '
  const [a, b] = process.versions.node.split(".").map(Number);
  process.exit(a > 24 || (a === 24 && b >= 11) ? 0 : 1);'; then
  echo "install.sh: node $node_version on systemd's PATH is too old; hookd needs 24.11 or later" >&2
  echo "  (Debian's own nodejs is older: use NodeSource or the official binaries in /usr/local)" >&2
  exit 1
fi

echo "installing $tarball into $prefix (node $node_version)"
env PATH="$systemd_path" npm install -g --prefix "$prefix" --no-audit --no-fund "$tarball"
pkg="$prefix/lib/node_modules/hookd"
"$prefix/bin/hookd" --version >/dev/null

install -d -m 0755 /etc/hookd
if [ -e /etc/hookd/hookd.json ]; then
  echo "keeping the existing /etc/hookd/hookd.json"
else
  install -m 0644 "$pkg/contrib/hookd.example.json" /etc/hookd/hookd.json
  echo "wrote /etc/hookd/hookd.json: set \"upstream\" to your service"
fi
"$prefix/bin/hookd" check-config /etc/hookd/hookd.json

install -m 0644 "$pkg/contrib/systemd/hookd.service" /etc/systemd/system/hookd.service
command -v mandb >/dev/null 2>&1 && mandb -q 2>/dev/null || true
systemctl daemon-reload
if [ "${NO_START:-}" = 1 ]; then
  systemctl enable hookd
else
  systemctl enable --now hookd
  echo "hookd is running: systemctl status hookd; journalctl -u hookd -f"
  echo "its admin token: sudo cat /var/lib/hookd/admin.token"
fi
