#!/usr/bin/env bash
# Print $PATH without the folders that hold cargo or rustc: the installed wheel must need neither.
set -euo pipefail
kept=()
IFS=: read -ra dirs <<< "$PATH"
for dir in "${dirs[@]}"; do
	[ -x "$dir/cargo" ] || [ -x "$dir/rustc" ] || kept+=("$dir")
done
(IFS=:; echo "${kept[*]}")
