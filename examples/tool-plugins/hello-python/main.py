"""hello-python: a sync tool plugin. One JSON-RPC request per stdin line; one response per stdout line."""
import json
import sys


def respond(request):
    if request.get("method") != "tools/call":
        return {"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": -32601, "message": "method not found"}}
    params = request.get("params") or {}
    if params.get("name") != "greet":
        return {"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": -32602, "message": "unknown tool"}}
    who = (params.get("arguments") or {}).get("name", "world")
    return {"jsonrpc": "2.0", "id": request["id"], "result": {"content": "hello, " + who}}


for raw in sys.stdin:
    if raw.strip():
        print(json.dumps(respond(json.loads(raw))), flush=True)
