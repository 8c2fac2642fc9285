#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Headers longer than csrf-cgi accepts.
printf 'Content-Type: text/html\n'
i=0
while [ $i -lt 400 ]; do
	printf 'X-Filler-%d: %s\n' $i 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
	i=$((i + 1))
done
printf '\n<p>never</p>\n'
