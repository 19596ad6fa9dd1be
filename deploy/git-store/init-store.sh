#!/bin/sh
# Makes the git store the workers push runs' branches to: one bare repository in the folder that
# git daemon serves. Safe to run again: a repository that exists keeps its branches; its settings
# below are made so again.
set -eu

root=${GIT_STORE_ROOT:-/srv/git}
name=${GIT_STORE_REPOSITORY:-aca.git}
store=$root/$name
# git looks for a repository around its working folder; the served folder is none.
mkdir -p "$root"
cd "$root"

if [ ! -e "$store" ]; then
  # Made under another name and moved into place: a step stopped halfway leaves no half store,
  # which a rerun would otherwise keep.
  partial=$root/.$name.partial
  rm -rf "$partial"
  git init --bare --quiet --initial-branch=main "$partial"
  mv "$partial" "$store"
  echo "created the git store $store"
elif [ ! -f "$store/HEAD" ]; then
  echo "$store exists and is not a bare git repository; move it away or set GIT_STORE_REPOSITORY" >&2
  exit 1
fi

# The store's reflogs are the way back if a branch is ever moved by mistake. Set through the file:
# git refuses to open a repository another user owns, as the daemon's user does after a first run.
git config --file "$store/config" core.logAllRefUpdates always
# git daemon serves only repositories marked so.
touch "$store/git-daemon-export-ok"
if [ -n "${GIT_STORE_OWNER:-}" ]; then
  # The daemon writes what workers push as its own user.
  chown -R "$GIT_STORE_OWNER" "$store"
fi
echo "the git store $store is ready"
