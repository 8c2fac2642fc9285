# SPDX-License-Identifier: BSD-2-Clause
# router.sh - what the router's CGI programs share (sourced, not run): the
# settings, kept in $ROUTER_STATE as the firmware of 2007 kept them in
# NVRAM, and a log of every change. Values are checked when they are
# written (digits and dots), so the pages can print them as they are.
state=${ROUTER_STATE:-/tmp}

setting() {
	cat "$state/$1" 2>/dev/null || echo "$2"
}

set_setting() {
	printf '%s\n' "$2" > "$state/$1.tmp" && mv "$state/$1.tmp" "$state/$1"
}

logged() {
	printf '%s\n' "$1" >> "$state/changes"
}

is_address() {
	case "$1" in
	'' | *[!0-9.]*) return 1 ;;
	esac
	[ ${#1} -le 15 ]
}
