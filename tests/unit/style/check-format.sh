#!/bin/bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# check-format.sh CLANG_FORMAT ROOT DIR...: every .cpp and .hpp under ROOT/DIR... (fixtures/
# folders left out: they hold code off the rules on purpose) is formatted as the nearest
# .clang-format says. Prints the files that are not, and fails when there are any, or when
# there is no clang-format to ask.
set -u
clang_format=$1
root=$2
shift 2
if [ -z "$clang_format" ] || ! command -v "$clang_format" >/dev/null; then
    echo "no clang-format (scripts/setup-deps.sh installs Debian's clang-format)" >&2
    exit 2
fi
cd "$root" || exit 2
files=()
while IFS= read -r -d '' f; do
    files+=("$f")
done < <(find "$@" \( -name '*.cpp' -o -name '*.hpp' \) -not -path '*/fixtures/*' -print0 | sort -z)
checked=${#files[@]}
if [ "$checked" -eq 0 ]; then
    echo "no .cpp or .hpp under $root/{$*}" >&2
    exit 2
fi
# One clang-format for all of them: it names each file off the rules in its warnings, and
# fails only when it cannot check (an unreadable file, a .clang-format it does not know).
if ! report=$("$clang_format" --dry-run "${files[@]}" 2>&1); then
    echo "$report" | head -20
    echo "$clang_format could not check the files" >&2
    exit 2
fi
mapfile -t off < <(echo "$report" |
    sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
echo "$checked files checked against .clang-format ($("$clang_format" --version))"
if [ ${#off[@]} -ne 0 ]; then
    echo "${#off[@]} file(s) off .clang-format (fix: $clang_format -i FILE):"
    printf '  %s\n' "${off[@]}"
    exit 1
fi
