"""The Flask snippet of clients/python/README.md on the standard library's WSGI server (no framework needed):
argv = clients/python, gateway URL. Prints the port, then serves until killed."""
import json
import sys
from urllib.parse import parse_qsl
from wsgiref.simple_server import WSGIRequestHandler, make_server

sys.path.insert(0, sys.argv[1])
from gateway_callback import CallbackVerifier  # noqa: E402

verifier = CallbackVerifier(gateway_url=sys.argv[2])


def app(environ, start_response):
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    result = verifier.verify_wsgi(environ, raw)
    if not result.ok:
        start_response("401 Unauthorized", [("Content-Type", "text/plain")])
        return [result.reason.encode()]
    if environ["REQUEST_METHOD"] == "GET":
        fields = dict(parse_qsl(environ.get("QUERY_STRING", "")))
    elif environ.get("CONTENT_TYPE", "").startswith("application/json"):
        fields = json.loads(raw)
    else:
        fields = dict(parse_qsl(raw.decode()))
    order = dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("order", "-")
    text = " ".join(["ok", fields["uuid"], fields["result"], str(fields["pending"]), fields["coin"], order])
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [text.encode()]


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


server = make_server("127.0.0.1", 0, app, handler_class=QuietHandler)
print(server.server_port, flush=True)
server.serve_forever()
