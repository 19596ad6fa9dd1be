#!/bin/sh
# Waits for the Temporal server, then makes aca's namespace and registers aca's search attributes
# in it. Safe to run again: what exists is kept (an attribute of another type is an error).
set -eu

address=${TEMPORAL_ADDRESS:-temporal:7233}
namespace=${TEMPORAL_NAMESPACE:-default}
retention=${TEMPORAL_RETENTION:-72h}
tries=${TEMPORAL_WAIT_SECONDS:-120}

until temporal operator cluster health --address "$address" 2>/dev/null | grep -q SERVING; do
  tries=$((tries - 1))
  if [ "$tries" -le 0 ]; then
    echo "the Temporal server at $address never answered" >&2
    exit 1
  fi
  sleep 1
done

if ! temporal operator namespace describe --address "$address" --namespace "$namespace" >/dev/null 2>&1; then
  temporal operator namespace create --address "$address" --namespace "$namespace" --retention "$retention"
fi

# The names and types aca's workflows publish; kept equal to src/shared/search-attributes.ts by a
# test. A namespace just made takes the server some seconds to know everywhere: try until then.
register() {
  temporal operator search-attribute create --address "$address" --namespace "$namespace" \
    --name AgentState --type Keyword \
    --name AgentIteration --type Int \
    --name AgentPassRate --type Double \
    --name AgentLanguage --type Keyword \
    --name AgentParentRun --type Keyword
}
tries=${TEMPORAL_WAIT_SECONDS:-120}
until register; do
  tries=$((tries - 1))
  if [ "$tries" -le 0 ]; then
    echo "could not register aca's search attributes in namespace $namespace at $address" >&2
    exit 1
  fi
  sleep 1
done
echo "namespace $namespace and aca's search attributes are ready at $address"
