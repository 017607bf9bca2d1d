//! kv: the key-value conformance module of the Rust PDK
//! (pdk/conformance/SPEC.md, "The kv module"): one tool per operation of the
//! kv capability.
//!
//! Build: /usr/bin/rustc --edition 2021 --target wasm32-wasi --crate-type cdylib -C opt-level=s \
//!            -C strip=symbols -C link-arg=-zstack-size=65536 -o kv.wasm kv.rs

#[path = "../../../rust/autoagent.rs"]
mod autoagent;

use autoagent::{Call, Output, ToolError};

const DESCRIBE: &str = concat!(
    r#"{"tools":[{"name":"kv_set","description":"Stores a value under a key.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"key":{"type":"string","description":"the key"},"value":{"type":"string","description":"the value to store"}},"required":["key","value"],"additionalProperties":false}}"#,
    r#",{"name":"kv_get","description":"Reads the value stored under a key.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"key":{"type":"string","description":"the key"}},"required":["key"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"found":{"type":"boolean","description":"whether the key holds a value"},"value":{"type":"string","description":"the value, empty when not found"}},"required":["found","value"],"additionalProperties":false}}"#,
    r#",{"name":"kv_delete","description":"Removes a key.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"key":{"type":"string","description":"the key"}},"required":["key"],"additionalProperties":false}}"#,
    r#",{"name":"kv_keys","description":"Lists the keys that start with a prefix.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"prefix":{"type":"string","description":"list only the keys starting with this; empty or absent for all"}},"additionalProperties":false},"outputSchema":{"type":"object","properties":{"keys":{"type":["null","array"],"description":"the keys, in byte order","items":{"type":"string"}}},"required":["keys"],"additionalProperties":false}}],"capabilities":["kv"]}"#,
);

#[no_mangle]
pub extern "C" fn describe() -> i32 {
    autoagent::describe(DESCRIBE)
}

#[no_mangle]
pub extern "C" fn call() -> i32 {
    autoagent::serve("kv_set, kv_get, kv_delete, kv_keys", |c: &Call| match c.name.as_str() {
        "kv_set" => kv_set(c),
        "kv_get" => kv_get(c),
        "kv_delete" => kv_delete(c),
        _ => kv_keys(c),
    })
}

/// The string arguments a tool takes.
#[derive(Default)]
struct Params {
    namespace: Option<String>,
    key: Option<String>,
    value: Option<String>,
    prefix: Option<String>,
}

/// Reads the arguments: each must be one of the properties named in
/// allowed, and a string; the last of a repeated one counts.
fn params(c: &Call, allowed: &[&str]) -> Result<Params, ToolError> {
    let mut p = Params::default();
    for a in c.args()? {
        if !allowed.contains(&a.key.as_str()) {
            return Err(a.unknown());
        }
        let v = Some(a.string()?);
        match a.key.as_str() {
            "namespace" => p.namespace = v,
            "key" => p.key = v,
            "value" => p.value = v,
            _ => p.prefix = v,
        }
    }
    Ok(p)
}

fn kv_set(c: &Call) -> Result<Output, ToolError> {
    let p = params(c, &["namespace", "key", "value"])?;
    let key = p.key.ok_or_else(|| autoagent::missing("key"))?;
    let value = p.value.ok_or_else(|| autoagent::missing("value"))?;
    autoagent::kv_write(p.namespace.as_deref(), &key, value.as_bytes());
    Ok(Output::Text(String::from("stored")))
}

fn kv_get(c: &Call) -> Result<Output, ToolError> {
    let p = params(c, &["namespace", "key"])?;
    let key = p.key.ok_or_else(|| autoagent::missing("key"))?;
    let v = autoagent::kv_read(p.namespace.as_deref(), &key);
    let mut json = format!("{{\"found\":{},\"value\":", v.is_some());
    autoagent::write_json_string(&mut json, &String::from_utf8_lossy(&v.unwrap_or_default()));
    json.push('}');
    Ok(Output::Json(json))
}

fn kv_delete(c: &Call) -> Result<Output, ToolError> {
    let p = params(c, &["namespace", "key"])?;
    let key = p.key.ok_or_else(|| autoagent::missing("key"))?;
    autoagent::kv_remove(p.namespace.as_deref(), &key);
    Ok(Output::Text(String::from("deleted")))
}

fn kv_keys(c: &Call) -> Result<Output, ToolError> {
    let p = params(c, &["namespace", "prefix"])?;
    let keys = autoagent::kv_keys(p.namespace.as_deref(), p.prefix.as_deref().unwrap_or(""))?;
    let mut json = String::from("{\"keys\":[");
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        autoagent::write_json_string(&mut json, k);
    }
    json.push_str("]}");
    Ok(Output::Json(json))
}
