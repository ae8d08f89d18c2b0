# Varnish in front of an edge: the CDN setup of docs/operations.md
# ("Behind a CDN"), complete. deploy/varnish.sh runs it in front of
# `make run` (make cdn); edge/varnish_test.go runs this very file in front
# of a test edge (its backend's address replaced) to prove revalidation
# with 304s, purges by tag and compression through it.
#
# - Caches by the origin's Cache-Control (the legacy API: public,
#   max-age=60) and keeps objects an hour past their TTL, to revalidate
#   them with If-None-Match (the edge answers 304 when the bytes did not
#   change). v1 answers are private: never kept.
# - Asks the origin for gzip and keeps that one object, gunzipping it for
#   clients without gzip (http_gzip_support, on by default). Knows no
#   brotli: passes the origin's brotli through as an object of its own for
#   clients that accept it.
# - Purges by cache tag: BAN with X-Purge-Tag naming one tag (edge-legacy
#   on every published state), from the addresses of acl purgers only.
# - Says in X-Cache whether it answered from its cache.
vcl 4.1;

backend edge {
  .host = "127.0.0.1";
  .port = "8080";
}

acl purgers {
  "127.0.0.1";
  "::1";
}

sub vcl_recv {
  if (req.method == "BAN") {
    if (client.ip !~ purgers) { return (synth(403, "Purges only from acl purgers")); }
    if (req.http.X-Purge-Tag !~ "^[a-z0-9-]+$") { return (synth(400, "X-Purge-Tag: one tag")); }
    ban("obj.http.Cache-Tag ~ (^|,)" + req.http.X-Purge-Tag + "(,|$)");
    return (synth(200, "Banned"));
  }
  if (req.http.Accept-Encoding ~ "(^|[ ,])br([ ,;]|$)") { set req.http.X-Brotli = "1"; }
}

sub vcl_hash {
  if (req.http.X-Brotli) { hash_data("br"); }
}

sub vcl_backend_fetch {
  if (bereq.http.X-Brotli) { set bereq.http.Accept-Encoding = "br"; }
  unset bereq.http.X-Brotli;
}

sub vcl_backend_response {
  set beresp.keep = 1h;
}

sub vcl_deliver {
  if (obj.hits > 0) { set resp.http.X-Cache = "HIT"; } else { set resp.http.X-Cache = "MISS"; }
}
