#!/bin/sh
# Output without CGI headers.
printf 'hello world\n\n<form method=post></form>\n'
