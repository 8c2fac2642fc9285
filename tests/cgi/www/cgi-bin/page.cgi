#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An HTML page with a POST form and a GET form (the first gets a token).
printf 'Content-Type: text/html; charset=utf-8\n\n'
cat <<'PAGE'
<!doctype html><html><head><title>admin</title></head><body>
<form method="post" action="/cgi-bin/echo.cgi"><input name="a" value="1"></form>
<form method="get" action="/cgi-bin/echo.cgi"><input name="q"></form>
</body></html>
PAGE
