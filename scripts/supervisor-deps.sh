#!/usr/bin/env bash
# Shows which supervisor/*.c file uses which: for each file, the other files that define the
# functions and data it refers to (read with nm from objects compiled as the build compiles them),
# then the files that use each other in a cycle, and whether supervisor.h is true to the files: each
# function and datum under the section of the file that defines it (`/* <file>.c: ... */`), the
# sections in the order of use. Run by hand: `bash scripts/supervisor-deps.sh`. Exit 0: no cycle
# and a true header; 1: otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
objects=$(mktemp -d)
trap 'rm -rf "$objects"' EXIT
cc=${CC:-cc}

for source in "$root"/supervisor/*.c; do
  "$cc" -Os -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -c "$source" -o "$objects/$(basename "$source" .c).o"
done

# "<file> <symbol>" for each symbol a file defines, and for each it uses without defining.
for object in "$objects"/*.o; do
  file=$(basename "$object" .o).c
  nm --defined-only --extern-only "$object" | awk -v f="$file" '{ print f, $3 }'
done | sort -k2 >"$objects/defined"
for object in "$objects"/*.o; do
  file=$(basename "$object" .o).c
  nm --undefined-only "$object" | awk -v f="$file" '{ print f, $2 }'
done | sort -k2 >"$objects/used"

# "<user> <definer> <symbol>", only for symbols another supervisor file defines (libc's are left out).
join -1 2 -2 2 -o 1.1,2.1,0 "$objects/used" "$objects/defined" | sort >"$objects/edges"

awk '
  { key = $1 " -> " $2; if (!(key in seen)) { seen[key] = 1; order[n++] = key }; syms[key] = syms[key] " " $3 }
  END { for (i = 0; i < n; i++) print order[i] ":" syms[order[i]] }
' "$objects/edges"

status=0
# Files that reach each other through these uses are one cycle (transitive closure: few files).
awk '
  function add(f) { if (!(f in node)) { node[f] = n; name[n++] = f } }
  { add($1); add($2); reach[$1, $2] = 1 }
  END {
    for (k in node) for (i in node) if ((i, k) in reach) for (j in node) if ((k, j) in reach) reach[i, j] = 1
    cycles = 0
    for (a = 0; a < n; a++) {
      i = name[a]
      if (done[i] || !((i, i) in reach)) continue
      line = ""
      for (b = 0; b < n; b++) {
        j = name[b]
        if ((i, j) in reach && (j, i) in reach) { done[j] = 1; line = line " " j }
      }
      print "cycle:" line
      cycles++
    }
    if (cycles == 0) print "no cycle"
    exit cycles > 0
  }
' "$objects/edges" || status=1

# supervisor.h: each function and datum a file defines for the others is declared in that file's
# section (a function as `name(`, data as `extern ... name;`), and each section comes after the
# sections of the files it uses. What no other file uses belongs static in its file.
(cd "$root/supervisor" && awk '
  FILENAME ~ /defined$/ { if ($2 != "main") { file[$2] = $1; names[++n] = $2 }; next }
  FILENAME ~ /edges$/ { used_elsewhere[$3] = 1; users[++e] = $1; definers[e] = $2; next }
  /^\/\* [a-z-]+\.c[:,]/ {
    section = $2
    sub(/[:,]$/, "", section)
    place[section] = ++sections
    if (system("test -f " section) != 0) { print "supervisor.h: a section names " section ", which is no file"; bad = 1 }
    next
  }
  /^ *(\/\*|\*)/ { next }
  {
    line = $0
    sub(/\/\*.*/, "", line)
    for (i = 1; i <= n; i++) {
      s = names[i]
      if (s in declared) continue
      if (line ~ ("(^|[^A-Za-z0-9_])" s "\\(") || (line ~ /^extern / && line ~ ("[ *,]" s "[;,[]")))
        declared[s] = section
    }
  }
  END {
    for (i = 1; i <= n; i++) {
      s = names[i]
      if (!(s in used_elsewhere)) { print "supervisor.h: " s " (" file[s] ") is used by no other file: static"; bad = 1 }
      else if (!(s in declared)) { print "supervisor.h: " s " (" file[s] ") is not declared"; bad = 1 }
      else if (declared[s] != file[s]) {
        where = declared[s] == "" ? "no section" : declared[s]
        print "supervisor.h: " s " is under " where ", defined in " file[s]
        bad = 1
      }
    }
    for (i = 1; i <= e; i++) {
      u = users[i]; d = definers[i]
      if (!(u in place) || !(d in place) || place[d] < place[u] || reported[u, d]++) continue
      print "supervisor.h: " u " uses " d ", whose section comes after its own"
      bad = 1
    }
    if (!bad) print "supervisor.h: each declaration under the file that defines it, each file after those it uses"
    exit bad
  }
' "$objects/defined" "$objects/edges" supervisor.h) || status=1
exit $status
