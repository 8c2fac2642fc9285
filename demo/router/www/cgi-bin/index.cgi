#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The router's admin page, as firmware of 2007 wrote it: a form that sets
# the DNS servers and a link that restores the factory settings with a
# plain GET. No token, no origin check: everything csrf-cgi adds.
. ./router.sh
dns1=$(setting dns1 192.168.1.1)
dns2=$(setting dns2 192.168.1.1)
echo "Content-Type: text/html"
echo
cat <<PAGE
<!doctype html>
<html><head><meta charset="utf-8"><title>WRT-2007 Router Setup</title>
<style>body{font-family:Verdana,sans-serif;background:#dde;max-width:40rem;margin:1rem auto}
h1{background:#036;color:#fff;padding:.3rem}fieldset{background:#fff}</style></head>
<body><h1>WRT-2007 Router Setup</h1>
<form method="post" action="/cgi-bin/dns.cgi"><fieldset><legend>Internet DNS servers</legend>
<p>Primary DNS: <input id="dns1" name="dns1" value="$dns1"></p>
<p>Secondary DNS: <input id="dns2" name="dns2" value="$dns2"></p>
<p><input id="save" type="submit" value="Save Settings"></p></fieldset></form>
<p><a id="reset" href="/cgi-bin/reset.cgi">Restore factory defaults</a></p>
<h2>Changes</h2><pre id="changes">$(cat "$state/changes" 2>/dev/null)</pre>
</body></html>
PAGE
