#!/usr/bin/env bash
# Checks the tracked text files for what a reader cannot follow: a tracker number ("issue #21")
# instead of the reason it stood for, and "session" (a work session's diary instead of the
# current facts). Fails with each offending line. Run by scripts/test.sh, so CI runs it.
#
# Allow-list (paths not checked), kept minimal:
#   scripts/check-text.sh   this script names the patterns it looks for.
# No OpenMP or CUDA API in this tree uses the word "session", so no word is allowed.
set -euo pipefail
cd "$(dirname "$0")/.."
allow=(':!scripts/check-text.sh')
status=0
# -I skips binary files; -w keeps "sessions" and "session" but not e.g. "possession".
if git grep -n -I -i -E 'issues? ?#[0-9]' -- . "${allow[@]}"; then
  echo "check-text: tracker numbers above: write the reason the issue stood for instead" >&2
  status=1
fi
if git grep -n -I -i -w -E 'sessions?' -- . "${allow[@]}"; then
  echo "check-text: \"session\" above: state the current fact (history lives in git and CHANGELOG.md)" >&2
  status=1
fi
[[ $status == 0 ]] && echo "check-text: no tracker numbers, no \"session\" in tracked text files"
exit $status
