#!/bin/sh
# Waits for the Temporal server, then makes aca's namespace and registers aca's search attributes
# in it. Safe to run again: what exists is kept (an attribute of another type is an error).
set -eu

address=${TEMPORAL_ADDRESS:-temporal:7233}
namespace=${TEMPORAL_NAMESPACE:-default}
retention=${TEMPORAL_RETENTION:-72h}

# Runs a command once a second until it succeeds, for TEMPORAL_WAIT_SECONDS (120) at most; then
# fails with the message given first.
retry() {
  failure=$1
  shift
  tries=${TEMPORAL_WAIT_SECONDS:-120}
  until "$@"; do
    tries=$((tries - 1))
    if [ "$tries" -le 0 ]; then
      echo "$failure" >&2
      exit 1
    fi
    sleep 1
  done
}

serving() {
  temporal operator cluster health --address "$address" 2>/dev/null | grep -q SERVING
}

# The names and types aca's workflows publish; kept equal to src/shared/search-attributes.ts by a
# test.
register() {
  temporal operator search-attribute create --address "$address" --namespace "$namespace" \
    --name AgentState --type Keyword \
    --name AgentIteration --type Int \
    --name AgentPassRate --type Double \
    --name AgentLanguage --type Keyword \
    --name AgentParentRun --type Keyword
}

retry "the Temporal server at $address never answered" serving
if ! temporal operator namespace describe --address "$address" --namespace "$namespace" >/dev/null 2>&1; then
  temporal operator namespace create --address "$address" --namespace "$namespace" --retention "$retention"
fi
# A namespace just made takes the server some seconds to know everywhere: try until then.
retry "could not register aca's search attributes in namespace $namespace at $address" register
echo "namespace $namespace and aca's search attributes are ready at $address"
