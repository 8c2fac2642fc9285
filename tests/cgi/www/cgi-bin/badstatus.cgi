#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A Status that is not a code.
printf 'Status: OK\nContent-Type: text/html\n\n<p>x</p>\n'
