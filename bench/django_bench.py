# SPDX-License-Identifier: BSD-2-Clause
"""django_bench.py - Django 3.2's CsrfViewMiddleware, timed the way micro.c
times libcsrf: issue (mask a new token for the cookie secret, what
get_token does per response), verify (sanitize + unmask + compare, what
process_view does with the token), and check (process_view on a realistic
HTTPS POST built with RequestFactory: Referer check, then the token).
Prints one JSON line per op: the median of ROUNDS interleaved rounds.
Usage: /usr/bin/python3 django_bench.py [ROUNDS ITERS]
"""
import json
import sys
import time

import django
from django.conf import settings

settings.configure(
    SECRET_KEY="bench-" + "x" * 50,
    ALLOWED_HOSTS=["app.example"],
    USE_TZ=True,
    MIDDLEWARE=[],
    ROOT_URLCONF=__name__,
)
django.setup()
urlpatterns = []

from django.middleware import csrf as m  # noqa: E402
from django.test import RequestFactory  # noqa: E402

rounds = int(sys.argv[1]) if len(sys.argv) > 2 else 7
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 2000


def view(request):
    return None


mw = m.CsrfViewMiddleware(lambda r: None)
secret = m._get_new_csrf_string()
cookie = m._mask_cipher_secret(secret)
token = m._mask_cipher_secret(secret)
req = RequestFactory().post(
    "/vote",
    data={"story": "42", "type": "y"},
    secure=True,
    HTTP_HOST="app.example",
    HTTP_REFERER="https://app.example/stories/42",
    HTTP_X_CSRFTOKEN=token,
)
req.COOKIES[settings.CSRF_COOKIE_NAME] = cookie
mw.process_request(req)


def op_issue():
    m._mask_cipher_secret(secret)


def op_verify():
    if not m._compare_masked_tokens(m._sanitize_token(token), req.META["CSRF_COOKIE"]):
        raise SystemExit("verify failed")


def op_check():
    req.__dict__.pop("csrf_processing_done", None)
    if mw.process_view(req, view, (), {}) is not None:
        raise SystemExit("process_view rejected")


rows = [("issue", op_issue), ("verify", op_verify), ("check", op_check)]
samples = {name: [] for name, _ in rows}
for _, fn in rows:
    for _ in range(iters // 10 + 1):
        fn()
for _ in range(rounds):
    for name, fn in rows:
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        samples[name].append((time.perf_counter_ns() - t0) / iters)
for name, _ in rows:
    s = sorted(samples[name])
    print(json.dumps({"impl": "Django " + django.get_version(), "op": name, "ns": round(s[len(s) // 2], 1)}))
