#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Answers, says something on stderr, and ends with status 3.
printf 'Content-Type: text/plain\n\nbye\n'
echo "exit3.cgi: a line for the error log" >&2
exit 3
