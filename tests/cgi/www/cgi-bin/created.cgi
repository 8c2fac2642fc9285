#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An HTML page with a status other than 200, printed after another
# header, two cookies of its own and a Content-Length that injection
# invalidates.
printf 'Content-Type: text/html\nSet-Cookie: a=1\nSet-Cookie: b=2\nContent-Length: 52\nStatus: 201 Created\n\n'
printf '<html><body><form method=post></form></body></html>\n'
