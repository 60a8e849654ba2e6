#!/usr/bin/env bash
# Everything the test suite uses, installed or started, so that CI can run it with
# HOOKD_REQUIRE_ALL=1 (every skip a failure): the programs the tests drive (Chromium, nginx, Caddy,
# groff and man, zsh and fish for the completion scripts, python3 for the pseudo-terminal,
# systemd-analyze, PostgreSQL's server binaries for the stopped-PostgreSQL test) and the brokers on
# 127.0.0.1 (PostgreSQL 5432, Redis 6379, RabbitMQ 5672, Mosquitto 1883, NATS 4222).
# A broker already answering is left alone; one that does not is started with its usual command.
# Needs root (or passwordless sudo) only when something is missing.
set -euo pipefail

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  fi
fi
need_root() {
  if [ "$(id -u)" -ne 0 ] && [ "${#as_root[@]}" -eq 0 ]; then
    echo "ci-services: $1 is missing and this is neither root nor allowed sudo" >&2
    exit 1
  fi
}

# program on PATH (or at a path) -> Debian package
programs=(
  "chromium:chromium"
  "nginx:nginx-light"
  "caddy:caddy"
  "groff:groff-base"
  "man:man-db"
  "zsh:zsh"
  "fish:fish"
  "python3:python3"
  "systemd-analyze:systemd"
  "psql:postgresql-client"
  "redis-server:redis-server"
  "rabbitmq-server:rabbitmq-server"
  "mosquitto:mosquitto"
  "nats-server:nats-server"
)
missing=()
for entry in "${programs[@]}"; do
  prog=${entry%%:*}
  pkg=${entry#*:}
  if ! command -v "$prog" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$prog" ] && [ ! -x "/usr/bin/$prog" ]; then
    missing+=("$pkg")
  fi
done
# The stopped-PostgreSQL test runs a server of its own from these binaries.
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then missing+=(postgresql); fi
if [ "${#missing[@]}" -gt 0 ]; then
  need_root "${missing[*]}"
  echo "ci-services: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  local name=$1 port=$2
  shift 2
  if answers "$port"; then
    echo "ci-services: $name answers on $port"
    return
  fi
  need_root "$name"
  echo "ci-services: starting $name: $*"
  "${as_root[@]}" "$@"
}

start PostgreSQL 5432 pg_ctlcluster "$(ls /etc/postgresql | sort -n | tail -1)" main start
start Redis 6379 redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save ""
start RabbitMQ 5672 rabbitmq-server -detached
start Mosquitto 1883 mosquitto -d -c /etc/mosquitto/mosquitto.conf
start NATS 4222 start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
  -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server

# RabbitMQ takes the longest to boot: every broker gets up to two minutes.
for entry in PostgreSQL:5432 Redis:6379 RabbitMQ:5672 Mosquitto:1883 NATS:4222; do
  name=${entry%%:*}
  port=${entry#*:}
  for _ in $(seq 1 240); do
    answers "$port" && break
    sleep 0.5
  done
  if ! answers "$port"; then
    echo "ci-services: $name does not answer on 127.0.0.1:$port" >&2
    exit 1
  fi
done
echo "ci-services: every program installed, every broker answering"
