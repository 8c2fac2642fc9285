#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# csrf-key-test.sh BIN - drives the csrf-key tool through new / rotate /
# list / retire in a temporary directory: exit codes (0 done, 1 failed,
# 2 usage), messages, file mode 0600 for a new file, a rewrite that keeps
# the file's mode (less the world's bits), owner and group and follows a
# symlink, refuses a hard-linked file and (as root) a directory others
# can write, and that no output ever carries key material (no 64-hex
# string, none of the file's keys).
set -u
BIN=$1
dir=$(mktemp -d /tmp/csrf-key-test.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
f=$dir/keys
log=$dir/log
fails=0

bad() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# run WANT_STATUS ARGS...: runs the tool, keeps its output in $dir/out
run() {
	want=$1
	shift
	"$BIN" "$@" >"$dir/out" 2>&1
	got=$?
	cat "$dir/out" >>"$log"
	[ "$got" -eq "$want" ] || bad "csrf-key $*: exit $got, want $want"
}

has() { grep -q -- "$1" "$dir/out" || bad "output lacks '$1'"; }
mode_is_0600() {
	m=$(stat -c %a "$f")
	[ "$m" = 600 ] || bad "mode $m after $1, want 600"
}

: >"$log"

# usage
run 2
run 2 new
run 2 bogus "$f"
run 2 list "$f" extra
run 2 retire "$f"
run 2 retire "$f" abc
run 2 retire "$f" 0
run 2 retire "$f" -1
run 2 retire "$f" 4294967296
run 2 new ""
run 0 --help
has "usage:"

# nothing there yet
run 1 list "$f"
has "No such file"
run 1 rotate "$f"

# new
run 0 new "$f"
[ -f "$f" ] || bad "new made no file"
mode_is_0600 new
run 1 new "$f"
has "already exists"
run 0 list "$f"
has "signing"
[ "$(grep -c signing "$dir/out")" -eq 1 ] || bad "one key must sign"
grep -Eq '^1 .*signing' "$dir/out" || bad "key 1 should sign after new"

# rotate
run 0 rotate "$f"
has "key 2 now signs"
mode_is_0600 rotate
run 0 list "$f"
grep -Eq '^2 .*signing' "$dir/out" || bad "key 2 should sign after rotate"
grep -Eq '^1 ' "$dir/out" || bad "key 1 should still be listed"
grep -Eq '^1 .*signing' "$dir/out" && bad "key 1 should no longer sign"
grep -Eq '^[12] .*[0-9]+s' "$dir/out" || bad "ages should be in seconds for fresh keys"

# retire: not the signing key, not an unknown one
cp "$f" "$dir/before"
run 1 retire "$f" 2
has "signing key"
cmp -s "$f" "$dir/before" || bad "a refused retire changed the file"
run 1 retire "$f" 9
has "no key with id 9"
run 0 retire "$f" 1
mode_is_0600 retire
run 0 list "$f"
grep -Eq '^1 ' "$dir/out" && bad "key 1 should be gone"
grep -Eq '^2 .*signing' "$dir/out" || bad "key 2 should still sign"

# the ring is bounded: rotating past 16 keys fails clearly
i=0
while [ $i -lt 15 ]; do
	"$BIN" rotate "$f" >>"$log" 2>&1 || bad "rotate $i failed"
	i=$((i + 1))
done
run 1 rotate "$f"
has "retire"

# a damaged file is refused with a message
printf 'key 1 nonsense\n' >"$dir/bad"
chmod 600 "$dir/bad"
f_bad=$dir/bad
run 1 list "$f_bad"
[ -s "$dir/out" ] || bad "no message for a damaged file"
run 1 rotate "$f_bad"

# stage, then rotate: the staged key signs, nothing new is made
f_st=$dir/staged
run 0 new "$f_st"
run 0 stage "$f_st"
has "key 2 staged"
run 0 list "$f_st"
grep -Eq '^1 .*signing' "$dir/out" || bad "key 1 should still sign after stage"
grep -Eq '^2 .*staged' "$dir/out" || bad "key 2 should be listed as staged"
run 0 rotate "$f_st"
has "key 2 (staged) now signs"
run 0 list "$f_st"
grep -Eq '^2 .*signing' "$dir/out" || bad "the staged key should sign after rotate"
[ "$(grep -c -E '^[0-9]+ ' "$dir/out")" -eq 2 ] || bad "rotate after stage should add no key"
run 2 stage
run 1 stage "$dir/missing"

# a rewrite keeps the readers the operator chose: mode bits (never the
# world's), and as root the owner and group
f_grp=$dir/grouped
run 0 new "$f_grp"
chmod 0644 "$f_grp"
if [ "$(id -u)" -eq 0 ]; then
	chown 65534:65533 "$f_grp"
fi
run 0 stage "$f_grp"
run 0 rotate "$f_grp"
run 0 retire "$f_grp" 1
m=$(stat -c %a "$f_grp")
[ "$m" = 640 ] || bad "mode $m after rewrites of a 0644 file, want 640 (group kept, world dropped)"
if [ "$(id -u)" -eq 0 ]; then
	o=$(stat -c %u:%g "$f_grp")
	[ "$o" = 65534:65533 ] || bad "owner $o after rewrites as root, want 65534:65533"
fi

# a rewrite through a symlink replaces the file it points to; the link stays
mkdir "$dir/real"
run 0 new "$dir/real/keys"
chmod 0640 "$dir/real/keys"
ln -s real/keys "$dir/link"
run 0 rotate "$dir/link"
has "key 2 now signs"
[ -L "$dir/link" ] || bad "rotate through a symlink replaced the link"
[ "$(readlink "$dir/link")" = real/keys ] || bad "the link's target changed"
run 0 list "$dir/real/keys"
grep -Eq '^2 .*signing' "$dir/out" || bad "the link's target should hold the rotated key"
m=$(stat -c %a "$dir/real/keys")
[ "$m" = 640 ] || bad "mode $m of the link's target after rotate, want 640"
[ "$(ls -A "$dir/real" | wc -l)" -eq 1 ] || bad "a temporary or lock file was left beside the target"
ln -s real/none "$dir/dangling"
run 1 rotate "$dir/dangling"
has "No such file"
run 1 new "$dir/link"
has "already exists"

# a file with a second hard link is not rewritten (a server reading the
# other name would keep the old keys)
run 0 new "$dir/linked"
ln "$dir/linked" "$dir/linked2"
cp "$dir/linked" "$dir/linked.before"
run 1 rotate "$dir/linked"
has "2 hard links"
cmp -s "$dir/linked" "$dir/linked.before" || bad "a refused rotate changed a hard-linked file"
rm -f "$dir/linked2"
run 0 rotate "$dir/linked"

# as root: no rewrite in a directory others can write (here a sticky,
# world-writable one like /tmp, holding a file another user planted)
if [ "$(id -u)" -eq 0 ]; then
	mkdir "$dir/shared"
	run 0 new "$dir/shared/keys"
	chmod 1777 "$dir/shared"
	# nor a new file there (root would create it where others can swap it)
	run 1 new "$dir/shared/keys2"
	has "writable by its group or others"
	[ -e "$dir/shared/keys2" ] && bad "new made a file in a world-writable directory as root"
	chown 65534:65534 "$dir/shared/keys"
	cp "$dir/shared/keys" "$dir/shared.before"
	run 1 rotate "$dir/shared/keys"
	has "writable by its group or others"
	cmp -s "$dir/shared/keys" "$dir/shared.before" || bad "a refused rotate changed the planted file"
	[ "$(ls -A "$dir/shared" | grep -vxF .csrf-key.lock | wc -l)" -eq 1 ] || bad "a refused rotate left a file in the shared directory"
	chmod 0755 "$dir/shared"
	run 0 rotate "$dir/shared/keys"
	o=$(stat -c %u "$dir/shared/keys")
	[ "$o" = 65534 ] || bad "owner $o after rotate in a safe directory, want 65534"
fi

# as root: a directory of another user's is refused for new as for a
# rewrite; a flock another user holds on the key file's directory (which
# anyone who can open it may take) does not stop a rotation
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && command -v flock >/dev/null; then
	mkdir "$dir/theirs"
	chown 65534 "$dir/theirs"
	run 1 new "$dir/theirs/keys"
	has "belongs to uid 65534"
	[ -e "$dir/theirs/keys" ] && bad "new made a file in another user's directory as root"
	mkdir "$dir/etc"
	chmod 0755 "$dir" "$dir/etc"
	run 0 new "$dir/etc/keys"
	# the holder is one process (sh execs sleep with the locked descriptor),
	# so that killing it ends the lock and nothing is left holding the
	# test's output open (flock(1) with a command forks it: the orphaned
	# sleep kept ctest waiting 20 s)
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'exec 9<"$1" && flock -x 9 && exec sleep 20' sh "$dir/etc" &
	holder=$!
	i=0
	# wait until the other user holds it
	while [ $i -lt 100 ] && flock -n "$dir/etc" true; do
		sleep 0.1
		i=$((i + 1))
	done
	flock -n "$dir/etc" true && bad "the other user never took the directory's lock"
	t0=$(date +%s)
	run 0 rotate "$dir/etc/keys"
	t1=$(date +%s)
	[ $((t1 - t0)) -lt 5 ] || bad "rotate waited $((t1 - t0)) s behind another user's flock on the directory"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
fi

# no key material anywhere in what the tool printed
grep -Eq '[0-9a-fA-F]{64}' "$f" || bad "the key file itself should hold 64-hex keys (check of the check)"
if grep -Eq '[0-9a-fA-F]{64}' "$log"; then
	bad "output contains a 64-hex string"
fi
for hex in $(grep -Eo '[0-9a-fA-F]{64}' "$f" "$dir/before" | cut -d: -f2); do
	grep -qi "$hex" "$log" && bad "output contains a key of the file"
	part=$(echo "$hex" | cut -c1-16)
	grep -qi "$part" "$log" && bad "output contains part of a key"
done

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "csrf-key: all checks passed"
