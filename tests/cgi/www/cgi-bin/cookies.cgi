#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A redirect with two cookies; Status last, as some programs print it.
printf 'Set-Cookie: one=1; Path=/\nLocation: /cgi-bin/page.cgi\nSet-Cookie: two=2; Path=/; HttpOnly\nContent-Type: text/html\nStatus: 302 Found\n\n<a href="/cgi-bin/page.cgi">moved</a><form method=post></form>\n'
