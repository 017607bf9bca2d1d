//! A hyper-mcp plugin of the v1 interface in Rust with std (exports
//! describe and call, MCP-shaped), built with Debian's rustc and this
//! project's one-file Rust PDK (no crates). Its tool greet says hello.
#[path = "../../../../../pdk/rust/autoagent.rs"]
mod autoagent;
use autoagent::{Call, Output};

const DESCRIBE: &str = r#"{"tools":[{"name":"greet","description":"Says hello.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]}"#;

#[no_mangle]
pub extern "C" fn describe() -> i32 {
    autoagent::describe(DESCRIBE)
}

#[no_mangle]
pub extern "C" fn call() -> i32 {
    autoagent::serve("greet", |c: &Call| {
        let mut name = None;
        for a in c.args()? {
            if a.key == "name" {
                name = Some(a.string()?);
            }
        }
        let name = name.ok_or_else(|| autoagent::missing("name"))?;
        Ok(Output::Text(format!("Hello, {}!", name)))
    })
}
