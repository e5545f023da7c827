#!/usr/bin/env bash
# The size gate. Fails when
#   - a library file (core/ platform/ profiles/ https/ transfer/; .hpp .cpp .h .c, nanopb's
#     generated *.pb.* left out) is over 600 lines, a tools/ file over 450, or the Client's
#     transaction (https/src/client.cpp) over 500: a feature gets a stage under client/ or
#     http/, not more lines in it;
#   - a function in those files is over 100 lines (scripts/function_sizes.py measures: from
#     the "{" opening its body to the "}" closing it);
# unless scripts/size_allowlist.txt lists it as "path[:function] max_lines reason". An entry
# fails the gate too when its item has grown past max_lines, when it is back within the limit
# (the entry is stale: delete it) or when the item no longer exists: the list only shrinks.
# Runs scripts/function_sizes.py --self-test first. Prints one line per allowlisted item.
# Plain find, not git: the same result in a tree from git archive.
set -euo pipefail
cd "$(dirname "$0")/.."

file_limit=600
tools_file_limit=450
client_file_limit=500
function_limit=100
allowlist=scripts/size_allowlist.txt

python3 scripts/function_sizes.py --self-test

mapfile -t files < <(find core platform profiles https transfer tools -type f \
  \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name '*.c' \) ! -name '*.pb.*' | sort)
[[ ${#files[@]} -gt 0 ]] || { echo "check_sizes: no source file found under $(pwd)" >&2; exit 1; }

# "key size limit" for every file and every function.
measures=$(
  for f in "${files[@]}"; do
    limit=$file_limit
    [[ $f == tools/* ]] && limit=$tools_file_limit
    [[ $f == https/src/client.cpp ]] && limit=$client_file_limit
    echo "$f $(wc -l < "$f") $limit"
  done
  python3 scripts/function_sizes.py "${files[@]}" |
    awk -v limit="$function_limit" '{ split($1, at, ":"); print at[1] ":" $2, $3, limit }'
)

# Overloads share a key; the longest counts.
awk '
  FNR == NR {
    if ($0 ~ /^[ \t]*(#|$)/) next
    if (NF < 3 || $2 !~ /^[0-9]+$/) { printf "check_sizes: %s:%d: want \"path[:function] max_lines reason\"\n", FILENAME, FNR; bad++; next }
    if ($1 in max) { printf "check_sizes: %s lists %s twice\n", FILENAME, $1; bad++ }
    max[$1] = $2; next
  }
  { if (!($1 in size) || $2 > size[$1]) size[$1] = $2; limit[$1] = $3 }
  END {
    for (k in size) {
      if (k in max) continue
      if (size[k] > limit[k]) { printf "check_sizes: FAILED: %s is %d lines, over %d\n", k, size[k], limit[k]; bad++ }
    }
    for (k in max) {
      if (!(k in size)) { printf "check_sizes: FAILED: %s is allowlisted but not found (delete its entry)\n", k; bad++ }
      else if (size[k] <= limit[k]) { printf "check_sizes: FAILED: %s is %d lines, within %d now (delete its entry)\n", k, size[k], limit[k]; bad++ }
      else if (size[k] > max[k]) { printf "check_sizes: FAILED: %s has grown to %d lines, past its allowlisted %d\n", k, size[k], max[k]; bad++ }
      else printf "check_sizes: allowlisted: %s %d lines (max %d, limit %d)%s\n", k, size[k], max[k], limit[k], size[k] < max[k] ? "; lower its max" : ""
    }
    exit bad > 0
  }' "$allowlist" - <<< "$measures" | sort || {
  echo "check_sizes: files over $file_limit lines (tools/: $tools_file_limit) or functions over $function_limit lines; split them, or see $allowlist" >&2
  exit 1
}
echo "check_sizes: files within $file_limit lines (tools/: $tools_file_limit), functions within $function_limit, except the allowlisted ones"
