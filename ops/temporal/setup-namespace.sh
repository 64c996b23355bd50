#!/bin/sh
# Makes the gateway's namespace and registers the custom search attributes its deposit workflows set
# (src/domain/search-attributes.ts), once the Temporal frontend answers; safe to run again.
# Run by docker-compose.yml (temporalio/admin-tools) and by the production-topology tests (the Temporal CLI
# from scripts/setup-temporal.js). Needs TEMPORAL_ADDRESS; TEMPORAL_NAMESPACE defaults to default.
set -eu
cli="${TEMPORAL_CLI:-temporal}"
ns="${TEMPORAL_NAMESPACE:-default}"
tries=0
until "$cli" operator cluster health >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 90 ] || { echo "Temporal at $TEMPORAL_ADDRESS did not answer" >&2; exit 1; }
  sleep 1
done
"$cli" operator namespace describe --namespace "$ns" >/dev/null 2>&1 ||
  "$cli" operator namespace create --namespace "$ns" --retention "${NAMESPACE_RETENTION:-30d}"
# A new namespace reaches every server role within the namespace cache's refresh (10 s): retry until then.
tries=0
until "$cli" operator search-attribute create --namespace "$ns" \
  --name GatewayTicker --type Keyword \
  --name GatewayCallbackHost --type Keyword \
  --name GatewayPaymentUuid --type Keyword \
  --name GatewayTxidIn --type Keyword \
  --name GatewayStage --type Keyword; do
  tries=$((tries + 1))
  [ "$tries" -lt 30 ] || { echo "search attributes of $ns could not be registered" >&2; exit 1; }
  sleep 1
done
# The server roles learn the new attributes at their next namespace cache refresh: done once a visibility
# query naming all five is accepted (the gateway's workers set them on every deposit workflow).
tries=0
until "$cli" workflow count --namespace "$ns" --query 'GatewayTicker = "" AND GatewayCallbackHost = "" AND GatewayPaymentUuid = "" AND GatewayTxidIn = "" AND GatewayStage = ""' >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -lt 60 ] || { echo "search attributes of $ns not usable in queries" >&2; exit 1; }
  sleep 1
done
