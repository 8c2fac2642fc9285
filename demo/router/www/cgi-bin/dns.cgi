#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# POST dns1=A.B.C.D&dns2=A.B.C.D: sets the DNS servers, then back to the
# admin page.
. ./router.sh
if [ "$REQUEST_METHOD" != POST ]; then
	printf 'Status: 405 Method Not Allowed\nContent-Type: text/plain\n\nPOST only\n'
	exit 0
fi
body=$(head -c "${CONTENT_LENGTH:-0}")
field() {
	printf '%s\n' "$body" | tr '&' '\n' | sed -n "s/^$1=//p" | head -n 1
}
dns1=$(field dns1)
dns2=$(field dns2)
if ! is_address "$dns1" || ! is_address "$dns2"; then
	printf 'Status: 400 Bad Request\nContent-Type: text/plain\n\nnot an IPv4 address\n'
	exit 0
fi
set_setting dns1 "$dns1"
set_setting dns2 "$dns2"
logged "dns $dns1 $dns2"
printf 'Status: 303 See Other\nLocation: /cgi-bin/index.cgi\nContent-Type: text/plain\n\nsaved\n'
