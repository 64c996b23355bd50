"""Runs clients/python over the fixture cases written by test/clients: argv = cases.json, clients/python."""
import base64
import json
import sys

sys.path.insert(0, sys.argv[2])
from gateway_callback import CallbackVerifier, verify_payment_callback  # noqa: E402

out = []
for case in json.load(open(sys.argv[1], encoding="utf-8")):
    body = base64.b64decode(case["body_b64"])
    order = {"address_in": case["expected"]["address_in"], "coin": case["expected"]["coin"]}
    key = open(case["key_file"], encoding="utf-8").read() if case["key_file"] else None
    if case["gateway"]:
        verifier = CallbackVerifier(gateway_url=case["gateway"], public_key_pem=key)
        r = verifier.verify_payment(case["method"], case["target"], case["headers"], body, **order, now=case["now"])
    else:
        r = verify_payment_callback(case["method"], case["target"], case["headers"], body, key, **order, now=case["now"])
    out.append({"name": case["name"], "ok": r.ok, "reason": r.reason})
print(json.dumps(out))
