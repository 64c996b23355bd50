#!/bin/sh
# Gives the API's database role (made NOLOGIN by drizzle/0000_init.sql) a login with the password in
# API_DATABASE_PASSWORD, connecting as the owner (PGHOST, PGUSER, PGPASSWORD, PGDATABASE from the
# environment). docker-compose.yml runs it once the worker has migrated; it is idempotent.
set -eu
: "${API_DATABASE_PASSWORD:?set API_DATABASE_PASSWORD}"
# The role exists once the worker's migrations have run.
tries=0
until [ "$(psql -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'gateway_api'")" = 1 ]; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "the role gateway_api does not exist: has the worker migrated this database?" >&2
    exit 1
  fi
  sleep 2
done
# The password goes from the environment into a quoted literal inside psql: never on a command line.
psql -v ON_ERROR_STOP=1 -q <<'SQL'
\getenv pw API_DATABASE_PASSWORD
ALTER ROLE gateway_api LOGIN PASSWORD :'pw';
SQL
echo "gateway_api may log in"
