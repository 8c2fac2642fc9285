# SPDX-License-Identifier: BSD-2-Clause
"""apache.asan: the hostile traffic of tests/nginx/test_asan.py (fuzz
corpus pages in 1-byte to 64-byte chunks, gzip'd, truncated and broken
answers, odd and oversized headers, truncated, chunked and corpus bodies)
through mod_csrf_protect built with ASan and UBSan in the stock apache2
(event MPM, mod_proxy_http), libasan preloaded (CSRF_ASAN_PRELOAD): any
sanitizer report fails the class when apache2 stops. Apache has no
gunzip of its own in the path: a gzip'd page passes untouched."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../nginx"))
import aptest as A  # noqa: E402
import test_asan as N  # noqa: E402

CONF = """
LimitRequestFieldSize 65536
CSRF On
CSRFBodyMax 16384
ProxyPass / http://127.0.0.1:{upstream}/
<Location /both/>
    CSRFMode both
</Location>
"""


class ApacheAsanTest(N.AsanTest):
    GUNZIP = False
    MODULE = A.MODULE

    @classmethod
    def make_server(cls, upstream_port):
        cls.ap = A.Apache(CONF, modules=("proxy", "proxy_http"), upstream_port=upstream_port)
        # SessionCase reads the server as cls.ngx
        cls.ngx = cls.ap
        return cls.ap

    @classmethod
    def prepare(cls, server):
        pass


del N.AsanTest  # only the Apache class runs here

if __name__ == "__main__":
    unittest.main()
