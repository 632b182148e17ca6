#!/usr/bin/env bash
# A throw-away Nautobot for the `blueprint sot push` tests: a private PostgreSQL cluster and Redis
# under STATE_DIR, `nautobot-server migrate`, `runserver` on a local port, a superuser with an API token.
#
#   bash tests/sot/nautobot_server.sh [--install] start STATE_DIR   # writes STATE_DIR/env (sourceable)
#   bash tests/sot/nautobot_server.sh stop STATE_DIR
#   bash tests/sot/nautobot_server.sh install                        # only the venv (.ci/run)
#
# --install: pip-install Nautobot into its own venv (NAUTOBOT_VENV, default .venv-nautobot): Nautobot pins
# its own Django, which must not meet the project's venv. Without the flag nothing is installed.
# Every step's wall time goes to STATE_DIR/timings and stderr. Needs root (PostgreSQL runs as `postgres`)
# and the Debian packages postgresql and redis-server.
# Settings are Nautobot's documented NAUTOBOT_* environment variables
# (docs.nautobot.com, "Required Settings": NAUTOBOT_DB_*, NAUTOBOT_REDIS_*, NAUTOBOT_SECRET_KEY,
# NAUTOBOT_ALLOWED_HOSTS), read by nautobot.core.settings.
set -euo pipefail

install=0
if [ "${1:-}" = "--install" ]; then install=1; shift; fi
action="${1:?usage: nautobot_server.sh [--install] start|stop STATE_DIR | install}"
if [ "$action" = install ]; then state=""; else state="${2:?usage: nautobot_server.sh [--install] start|stop STATE_DIR}"; fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${NAUTOBOT_VENV:-$root/.venv-nautobot}"
nautobot_version="${NAUTOBOT_VERSION:-3.2.7}"
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
pg_port="${NAUTOBOT_PG_PORT:-55432}"
redis_port="${NAUTOBOT_REDIS_PORT:-56379}"
web_port="${NAUTOBOT_WEB_PORT:-58080}"
token="0123456789abcdef0123456789abcdef01234567"
timed() {  # timed NAME COMMAND...: run, record seconds
  local name="$1"; shift
  local t0=$EPOCHREALTIME
  "$@"
  awk -v n="$name" -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%s %.1f\n", n, b - a }' \
    | tee -a "$state/timings" >&2
}

stop() {
  [ -f "$state/web.pid" ] && kill "$(cat "$state/web.pid")" 2>/dev/null || true
  [ -f "$state/redis.pid" ] && kill "$(cat "$state/redis.pid")" 2>/dev/null || true
  [ -d "$state/pg" ] && runuser -u postgres -- "$pg_bin/pg_ctl" -D "$state/pg" -m fast stop >/dev/null 2>&1 || true
  rm -f "$state/web.pid" "$state/redis.pid"
}

install_nautobot() {
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "nautobot==$nautobot_version" 2>&1 \
    | sed '/^WARNING: Location /d'
}

start_postgres() {
  mkdir -p "$state/pg" "$state/pgsock"
  touch "$state/pg.log"
  chown postgres "$state/pg" "$state/pgsock" "$state/pg.log"
  if [ ! -f "$state/pg/PG_VERSION" ]; then
    runuser -u postgres -- "$pg_bin/initdb" -D "$state/pg" --auth=trust -U postgres >/dev/null
  fi
  runuser -u postgres -- "$pg_bin/pg_ctl" -D "$state/pg" -w -l "$state/pg.log" \
    -o "-p $pg_port -k $state/pgsock -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
  "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname='nautobot'" | grep -q 1 \
    || "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres nautobot
}

start_redis() {
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --pidfile "$state/redis.pid" --logfile "$state/redis.log"
}

write_config() {
  # The schema straight from Nautobot's models (Django's `migrate --run-syncdb` with every app's
  # migrations module set to None), not by replaying its ~400 migrations: on the 2-core CI machine the
  # replay took 33 minutes, the syncdb 7 seconds. The data the migrations write into an empty database
  # is written after it by the same functions they call (see seed_and_token).
  cat >"$state/nautobot_config.py" <<'PY'
# Nautobot settings for the tests: the defaults read the NAUTOBOT_* environment (see nautobot_server.sh).
from nautobot.core.settings import *  # noqa: F401,F403


class _ModelsNotMigrations(dict):
    """Django's MIGRATION_MODULES: None for every app means "no migrations, create tables from models"."""

    def __contains__(self, app_label):
        return True

    def __getitem__(self, app_label):
        return None


MIGRATION_MODULES = _ModelsNotMigrations()
PY
  cat >"$state/server.env" <<ENV
export NAUTOBOT_CONFIG="$state/nautobot_config.py"
export NAUTOBOT_ROOT="$state/root"
export NAUTOBOT_DB_ENGINE=django.db.backends.postgresql
export NAUTOBOT_DB_HOST=127.0.0.1 NAUTOBOT_DB_PORT=$pg_port NAUTOBOT_DB_NAME=nautobot
export NAUTOBOT_DB_USER=postgres NAUTOBOT_DB_PASSWORD=unused
export NAUTOBOT_REDIS_HOST=127.0.0.1 NAUTOBOT_REDIS_PORT=$redis_port
export NAUTOBOT_SECRET_KEY=cluster-blueprint-test-only-not-a-secret-0123456789abcdef
export NAUTOBOT_ALLOWED_HOSTS='*'
ENV
}

migrate() {
  "$venv/bin/nautobot-server" migrate --run-syncdb --no-input >"$state/migrate.log" 2>&1
}

seed_and_token() {
  # What Nautobot's data migrations put into a new database, by their own functions (nautobot_seed.py), then
  # the superuser and its API token: one `nautobot-server shell` (each costs ~10 s of Django start-up).
  "$venv/bin/nautobot-server" shell -c "$(cat "$root/tests/sot/nautobot_seed.py")
from nautobot.users.models import Token, User
user = User.objects.filter(username='admin').first() or User.objects.create_superuser('admin', 'admin@example.invalid', 'admin')
Token.objects.get_or_create(user=user, key='$token')
" >>"$state/migrate.log" 2>&1
}

run_web() {
  nohup "$venv/bin/nautobot-server" runserver --noreload --insecure "127.0.0.1:$web_port" \
    >"$state/web.log" 2>&1 &
  echo $! >"$state/web.pid"
  for _ in $(seq 1 600); do
    if "$venv/bin/python" - "$web_port" "$token" <<'PY' 2>/dev/null; then
import sys, urllib.request
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/api/status/",
                                 headers={"Authorization": f"Token {sys.argv[2]}"})
urllib.request.urlopen(request, timeout=5).read()
PY
      return 0
    fi
    kill -0 "$(cat "$state/web.pid")" 2>/dev/null || { tail -20 "$state/web.log" >&2; return 1; }
    sleep 0.5
  done
  echo "nautobot did not answer on port $web_port" >&2
  return 1
}

case "$action" in
  install) [ -x "$venv/bin/nautobot-server" ] || install_nautobot ;;
  stop) stop ;;
  start)
    mkdir -p "$state"
    : >"$state/timings"
    [ "$install" = 1 ] && timed install install_nautobot
    [ -x "$venv/bin/nautobot-server" ] || { echo "no nautobot-server in $venv (use --install)" >&2; exit 1; }
    stop
    timed postgres start_postgres
    timed redis start_redis
    write_config
    # shellcheck disable=SC1091
    . "$state/server.env"
    timed migrate migrate
    timed seed seed_and_token
    timed runserver run_web
    printf 'export CB_NAUTOBOT_URL=http://127.0.0.1:%s CB_NAUTOBOT_TOKEN=%s\n' "$web_port" "$token" >"$state/env"
    ;;
  *) echo "unknown action $action" >&2; exit 2 ;;
esac
