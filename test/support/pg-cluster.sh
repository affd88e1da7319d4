#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: `start` prints `export ATC_TEST_PG_URL=…` (eval it),
# `stop <dir>` stops it and removes its directory; `pause <dir>` / `resume <dir>` stop and start the
# server keeping its data (the fault tests); `crash <dir>` stops it as a crash would (immediate
# mode: no checkpoint, WAL still in the server's buffers is lost, recovery on the next start).
# initdb refuses root, so as root the cluster runs as the `postgres` user (runuser) in a temp dir
# that user owns; trust auth on 127.0.0.1 only.
set -euo pipefail

find_bin() {
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return; fi
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/pg_ctl" ]; then echo "$dir"; return; fi
  done
  return 1
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

server_start() {
  local bin=$1 dir=$2 port
  port=$(cat "$dir/port")
  # fsync stays on (the default): the crash tests rely on committed meaning durable.
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200" start >&2 \
    || { cat "$dir/server.log" >&2; exit 1; }
}

start() {
  local bin dir port
  if ! bin=$(find_bin); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "pg-cluster: PostgreSQL not found; installing it with apt-get" >&2
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
      bin=$(find_bin)
    else
      echo "pg-cluster: PostgreSQL binaries (pg_ctl, initdb) not found" >&2
      exit 1
    fi
  fi
  dir=$(mktemp -d /tmp/atc-pg.XXXXXX)
  chmod 755 "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  port=$(free_port)
  as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  echo "$port" >"$dir/port"
  server_start "$bin" "$dir"
  echo "export ATC_TEST_PG_URL=postgres://postgres@127.0.0.1:$port/postgres"
  echo "export ATC_TEST_PG_DIR=$dir"
  echo "export ATC_TEST_PG_BIN=$bin"
}

stop() {
  local dir=${1:-${ATC_TEST_PG_DIR:-}}
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  local bin
  bin=$(find_bin)
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  pause) as_owner "$(find_bin)/pg_ctl" -D "$2/data" -m fast -w stop >&2 ;;
  crash) as_owner "$(find_bin)/pg_ctl" -D "$2/data" -m immediate -w stop >&2 ;;
  resume) server_start "$(find_bin)" "$2" ;;
  *) echo "usage: pg-cluster.sh start | stop [dir] | pause dir | crash dir | resume dir" >&2; exit 2 ;;
esac
