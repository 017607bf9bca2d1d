//! word_count: the conformance tool of the Rust PDK (pdk/conformance/SPEC.md).
//!
//! Build (as `autoagent tools build` does): /usr/bin/rustc --edition 2021 --target wasm32-wasi \
//!            --crate-type cdylib -C opt-level=s -C strip=symbols -C link-arg=-zstack-size=65536 \
//!            -o word_count.wasm word_count.rs

#[path = "../../rust/autoagent.rs"]
mod autoagent;

use autoagent::{Call, Output, ToolError};

const DESCRIBE: &str = concat!(
    r#"{"tools":[{"name":"word_count","#,
    r#""description":"Counts the words, lines and characters (Unicode code points) of a text.","#,
    r#""inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"the text to count"}},"#,
    r#""required":["text"],"additionalProperties":false},"#,
    r#""outputSchema":{"type":"object","properties":{"#,
    r#""words":{"type":"integer","description":"runs of characters between whitespace"},"#,
    r#""lines":{"type":"integer","description":"newline-terminated lines, plus an unterminated last one"},"#,
    r#""chars":{"type":"integer","description":"Unicode code points"}},"#,
    r#""required":["words","lines","chars"],"additionalProperties":false},"#,
    r#""annotations":{"readOnlyHint":true,"idempotentHint":true}}]}"#
);

#[no_mangle]
pub extern "C" fn describe() -> i32 {
    autoagent::describe(DESCRIBE)
}

#[no_mangle]
pub extern "C" fn call() -> i32 {
    autoagent::serve("word_count", word_count)
}

fn word_count(c: &Call) -> Result<Output, ToolError> {
    let mut text = None;
    for a in c.args()? {
        match a.key.as_str() {
            "text" => text = Some(a.string()?), // the last "text" counts
            _ => return Err(a.unknown()),
        }
    }
    let text = text.ok_or_else(|| autoagent::missing("text"))?;
    // Rust's char::is_whitespace is Unicode White_Space, the set SPEC.md names.
    let words = text.split(char::is_whitespace).filter(|w| !w.is_empty()).count();
    let mut lines = text.matches('\n').count();
    if !text.is_empty() && !text.ends_with('\n') {
        lines += 1;
    }
    let chars = text.chars().count();
    Ok(Output::Json(format!("{{\"words\":{},\"lines\":{},\"chars\":{}}}", words, lines, chars)))
}
