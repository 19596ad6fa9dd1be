#!/usr/bin/env bash
# `npm run test:mutation`: StrykerJS over the workflow code and the activities' decisions
# (stryker.config.json), through its Mocha runner. Stryker is installed apart from the project,
# in ~/.cache/aca/stryker (once): its Mocha runner needs mocha < 12, and the project's own mocha
# is 12. Arguments go to `stryker run` (e.g. --mutate src/workflows/state-machine.ts).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="${ACA_STRYKER_DIR:-$HOME/.cache/aca/stryker}"
if [ ! -f "$tools/node_modules/@stryker-mutator/mocha-runner/package.json" ]; then
  mkdir -p "$tools"
  [ -f "$tools/package.json" ] || echo '{ "private": true }' >"$tools/package.json"
  npm install --prefix "$tools" --no-audit --no-fund --omit=peer \
    @stryker-mutator/core@9.6.1 @stryker-mutator/mocha-runner@9.6.1 mocha@11.8.0
fi
# Stryker's core and the Mocha it runs load these from their own folder: the project's copies.
ln -sfn "$root/node_modules/typescript" "$tools/node_modules/typescript"
ln -sfn "$root/node_modules/tsx" "$tools/node_modules/tsx"
cd "$root"
exec node "$tools/node_modules/@stryker-mutator/core/bin/stryker.js" run "$@"
