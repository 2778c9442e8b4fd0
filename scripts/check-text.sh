#!/usr/bin/env bash
# Checks the tracked text files for what a reader cannot follow: a tracker number (the word
# for a tracker entry followed by "#" and digits) instead of the reason it stood for, and the
# diary word for a period of work instead of the current facts. Fails with each offending
# line. Run by scripts/test.sh, so CI runs it. The patterns below are written with character
# classes, so this script does not match itself and nothing is exempt.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
# -I skips binary files; -w matches the whole word (and its plural), not longer words that
# contain it.
if git grep -n -I -i -E '[i]ssues? ?#[0-9]' -- .; then
  echo "check-text: tracker numbers above: write the reason the entry stood for instead" >&2
  status=1
fi
if git grep -n -I -i -w -E 's[e]ssions?' -- .; then
  echo "check-text: diary words above: state the current fact (history lives in git and CHANGELOG.md)" >&2
  status=1
fi
((status == 0)) && echo "check-text: no tracker numbers or diary words in tracked text files"
exit $status
