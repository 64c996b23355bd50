#!/bin/sh
# Creates or upgrades the Temporal server's two PostgreSQL databases (history and SQL visibility) with
# Temporal's own SQL tool and schema files; safe to run again on every start (an existing database and an
# existing schema are left as they are, then brought to the newest version). The schema files are the ones
# built into the SQL tool (--schema-name), so the tool's version is the schema's version.
# Run by docker-compose.yml (temporalio/admin-tools) and by the production-topology tests (the tool built
# by scripts/setup-temporal-server.js). Connection: SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD.
set -eu
: "${SQL_PLUGIN:=postgres12}"
export SQL_PLUGIN
tool="${TEMPORAL_SQL_TOOL:-temporal-sql-tool}"
for pair in "${DBNAME:-temporal}:temporal" "${VISIBILITY_DBNAME:-temporal_visibility}:visibility"; do
  db="${pair%%:*}"
  name="postgresql/v12/${pair#*:}"
  # create-database fails when the database is there already: that is the rerun, not an error.
  "$tool" --db "$db" create-database >/dev/null 2>&1 || true
  # setup-schema -v 0.0 makes the version table on a new database and does nothing on an existing one.
  "$tool" --db "$db" setup-schema -v 0.0
  "$tool" --db "$db" update-schema --schema-name "$name"
done
