#!/bin/sh
# Prints a form, then waits (at most 20 s) for CGI_TEST_DIR/go before it
# prints the rest: a test sees whether the first part got through.
printf 'Content-Type: text/html\n\n<html><body><form method=post></form>\n'
i=0
while [ ! -e "${CGI_TEST_DIR:?}/go" ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
printf '<p>rest</p></body></html>\n'
