#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An HTML page written in many small pieces, tags split between writes,
# each piece flushed and a pause between some.
printf 'Content-Type: text/html\n\n'
for p in '<html><he' 'ad><title>t</ti' 'tle></head><body><p>one</p><fo' 'rm meth' 'od="PO' 'ST" action="/cgi-bin/echo.cgi">' \
	'<input name=x></form><!-- <form method=post> --><script>var s="<form method=post>";</script>' \
	'<FORM METHOD=post ACTION=/x>' '</FORM><form method=get></form></body></html>'; do
	printf '%s' "$p"
	sleep 0.01
done
printf '\n'
