#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Not HTML: passes untouched, even what looks like a form.
printf 'Content-Type: text/plain\nContent-Length: 30\n\n<form method=post></form>\nend\n'
