#!/bin/sh
# Creates Temporal's two databases in Postgres and brings their schemas to the version of the
# admin-tools image this runs in (the same version as the server image). Safe to run again: an
# existing database is kept, and a schema already at its version is left as it is.
set -eu

sql() {
  temporal-sql-tool --plugin postgres12 --endpoint "$POSTGRES_SEEDS" --port "${DB_PORT:-5432}" \
    --user "$POSTGRES_USER" --password "$POSTGRES_PWD" "$@"
}

schemas=/etc/temporal/schema/postgresql/v12
for pair in "${DBNAME:-temporal}:temporal" "${VISIBILITY_DBNAME:-temporal_visibility}:visibility"; do
  database=${pair%%:*}
  schema=${pair#*:}
  # create-database fails on a database that exists; a real failure (no server, wrong password)
  # fails setup-schema next, with its own message.
  sql --database "$database" create-database >/dev/null 2>&1 || echo "database $database exists"
  sql --database "$database" setup-schema --version 0.0
  sql --database "$database" update-schema --schema-dir "$schemas/$schema/versioned"
done
echo "Temporal's schemas are ready"
