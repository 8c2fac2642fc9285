#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A login page that starts a new session: its cookie comes with the page.
printf 'Content-Type: text/html\nSet-Cookie: sid=%s; Path=/; HttpOnly\n\n' "${NEW_SID:-s2}"
printf '<html><body><form method=post action=/cgi-bin/echo.cgi></form></body></html>\n'
