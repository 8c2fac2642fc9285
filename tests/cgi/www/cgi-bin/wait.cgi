#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Prints a form, then waits (at most 20 s) for CGI_TEST_DIR/go before it
# prints the rest: a test sees whether the first part got through. The
# Content-Type is $WAIT_CONTENT_TYPE, by default one with a charset.
printf 'Content-Type: %s\n\n<html><body><form method=post></form>\n' "${WAIT_CONTENT_TYPE:-text/html; charset=utf-8}"
i=0
while [ ! -e "${CGI_TEST_DIR:?}/go" ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
printf '<p>rest</p></body></html>\n'
