#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An HTML page of BIG_PAGE_MB megabytes, a POST form every 4 KiB.
printf 'Content-Type: text/html\n\n<html><head><title>big</title></head><body>\n'
yes '<form method=post action=/x><input name=a></form><p>0123456789012345678901234567890123456789</p>' |
	head -c "$((${BIG_PAGE_MB:-1} * 1048576))"
printf '</body></html>\n'
