"""The Flask snippet of clients/python/README.md on the standard library's WSGI server (no framework needed):
argv = clients/python, gateway URL, the shop's orders as JSON (reference -> address_in and coin from their
create responses). Prints the port, then serves until killed."""
import json
import sys
from urllib.parse import parse_qsl
from wsgiref.simple_server import WSGIRequestHandler, make_server

sys.path.insert(0, sys.argv[1])
from gateway_callback import CallbackVerifier  # noqa: E402

verifier = CallbackVerifier(gateway_url=sys.argv[2])
ORDERS = json.loads(sys.argv[3])


def app(environ, start_response):
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    reference = dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("order", "")
    order = ORDERS.get(reference)
    if order is None:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"unknown order"]
    result = verifier.verify_payment_wsgi(environ, raw, order["address_in"], order["coin"])
    if not result.ok:
        start_response("401 Unauthorized", [("Content-Type", "text/plain")])
        return [result.reason.encode()]
    fields = result.fields
    text = " ".join(["ok", fields["uuid"], fields["result"], str(fields["pending"]), fields["coin"], reference])
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [text.encode()]


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


server = make_server("127.0.0.1", 0, app, handler_class=QuietHandler)
print(server.server_port, flush=True)
server.serve_forever()
