# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Fold `perf script -F comm,ip,sym` output into one line per stack:
#   comm;outermost;...;leaf count
# bench/run uses it only when perf has no `perf script report stackcollapse`
# (a perf built without Python).  Records are separated by blank lines; the
# first line of a record is the comm, the others "ip sym" from leaf to root.
function flush(   s, i) {
	if (comm == "")
		return
	s = comm
	for (i = n; i >= 1; i--)
		s = s ";" f[i]
	count[s]++
	comm = ""; n = 0
}
/^[ \t]*$/ { flush(); next }
comm == "" { comm = $0; sub(/^[ \t]+/, "", comm); sub(/[ \t]+$/, "", comm); gsub(/ /, "_", comm); next }
{
	sym = $2
	for (i = 3; i <= NF; i++)
		sym = sym " " $i
	if (sym == "" || sym == "[unknown]")
		sym = "[unknown]"
	sub(/\+0x[0-9a-f]+$/, "", sym)
	f[++n] = sym
}
END { flush(); for (s in count) print s, count[s] }
