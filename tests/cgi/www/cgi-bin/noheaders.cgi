#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Output without CGI headers.
printf 'hello world\n\n<form method=post></form>\n'
