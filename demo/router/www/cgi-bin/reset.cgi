#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# GET: restores the factory settings. A state change on GET, as the
# firmware of 2007 did it: an <img> on any page can reach it.
. ./router.sh
set_setting dns1 192.168.1.1
set_setting dns2 192.168.1.1
logged "reset"
echo "Content-Type: text/html"
echo
echo '<!doctype html><html><head><meta charset="utf-8"><title>Reset</title></head><body>'
echo '<p id="done">Factory defaults restored.</p><p><a href="/cgi-bin/index.cgi">Back to setup</a></p></body></html>'
