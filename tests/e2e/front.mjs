// SPDX-License-Identifier: BSD-2-Clause
// front.mjs - nginx terminating TLS with HTTP/2 in front of plain HTTP
// upstreams, for the https mode of the browser tests: one server per site,
// `listen 127.0.0.1:PORT ssl http2`, the certificate of the test CA
// (tls.mjs), proxy_pass to the upstream as it is (the browser's Origin,
// Referer, Sec-Fetch-* and cookies go through unchanged). Its log says,
// per request, the port, the method, the path and the protocol the browser
// spoke ($server_protocol: HTTP/2.0 over h2).
//
//   startTlsFront(tls, sites, extra)  sites: [{ port, upstream }] (ports on
//                                     127.0.0.1); extra: more of the http
//                                     block (e.g. csrf directives);
//                                     answers { requests() (async), stop(), ... }
import { startNginx } from '../nginx/ngx.mjs';

export async function startTlsFront(tls, sites, { extra = '', body = '' } = {}) {
  const servers = sites.map((s) => `
    server {
        listen 127.0.0.1:${s.port} ssl http2;
        ssl_certificate ${tls.cert};
        ssl_certificate_key ${tls.key};
        location / {
            proxy_pass http://127.0.0.1:${s.upstream};
            proxy_set_header Host $host:$server_port;
            ${s.body || body}
        }
    }`).join('\n');
  const n = await startNginx('csrf-tls-front', `
    log_format front '$server_port $request_method $uri $server_protocol';
    access_log {prefix}/front.log front;
    ${extra}
    ${servers}
`, sites.map((s) => s.port));
  return {
    ...n,
    // [{ port, method, path, protocol }] of every request answered so far
    requests: async () => (await n.logged('front.log')).split('\n').filter(Boolean).map((l) => {
      const [port, method, path, protocol] = l.split(' ');
      return { port, method, path, protocol };
    }),
  };
}
