//! hello-rust: a sync tool plugin. One JSON-RPC request per stdin line; one response per stdout line.
use serde_json::{json, Value};
use std::io::{self, BufRead, Write};

fn respond(request: &Value) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    if request["method"] != "tools/call" {
        return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}});
    }
    if request["params"]["name"] != "greet" {
        return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "unknown tool"}});
    }
    let who = request["params"]["arguments"]["name"].as_str().unwrap_or("world");
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": format!("hello, {who}")}})
}

fn main() -> io::Result<()> {
    let mut out = io::stdout().lock();
    for line in io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        writeln!(out, "{}", respond(&request))?;
        out.flush()?;
    }
    Ok(())
}
