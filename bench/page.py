# SPDX-License-Identifier: BSD-2-Clause
"""page.py - the HTML page the nginx benchmark serves: text and five POST
forms, repeated four times: about 6 KiB with 20 forms."""
forms = "".join(
    f'<form method="post" action="/submit"><input name="story" value="{i}"><button>vote</button></form>\n'
    for i in range(5))
body = "<p>" + "A story worth voting for. " * 40 + "</p>\n"
print("<!doctype html><html><head><title>Stories</title></head><body>\n"
      + (body + forms) * 4 + "</body></html>")
