//! A hyper-mcp plugin of the v2 interface in Rust with std, written from
//! hyper-mcp's published template (templates/plugins/rust) without its
//! crates: the Extism kernel imported by hand, JSON read and written by
//! hand. Exports list_tools and call_tool (greet, now), list_prompts and
//! get_prompt (review), list_resources, list_resource_templates and
//! read_resource (memo://NAME), complete.
use std::time::{SystemTime, UNIX_EPOCH};

#[link(wasm_import_module = "extism:host/env")]
extern "C" {
    fn input_length() -> u64;
    fn input_load_u8(i: u64) -> u32;
    fn alloc(n: u64) -> u64;
    fn store_u8(b: u64, v: u32);
    fn output_set(b: u64, n: u64);
    fn error_set(b: u64);
}

fn input() -> String {
    unsafe {
        let n = input_length();
        let bytes: Vec<u8> = (0..n).map(|i| input_load_u8(i) as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn block(s: &str) -> u64 {
    unsafe {
        let b = alloc(s.len() as u64);
        for (i, c) in s.bytes().enumerate() {
            store_u8(b + i as u64, c as u32);
        }
        b
    }
}

fn output(s: &str) -> i32 {
    unsafe { output_set(block(s), s.len() as u64) };
    0
}

fn fail(msg: &str) -> i32 {
    unsafe { error_set(block(msg)) };
    1
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The string value of the first member named key (no escapes inside).
fn string_member(doc: &str, key: &str) -> Option<String> {
    let pat = format!("\"{}\"", key);
    let at = doc.find(&pat)? + pat.len();
    let rest = doc[at..].trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

fn text_result(text: &str) -> i32 {
    output(&format!(r#"{{"content":[{{"type":"text","text":{}}}]}}"#, quote(text)))
}

#[no_mangle]
pub extern "C" fn list_tools() -> i32 {
    output(r#"{"tools":[{"name":"greet","description":"Says hello.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},{"name":"now","description":"Reports the current year.","inputSchema":{"type":"object"}}]}"#)
}

#[no_mangle]
pub extern "C" fn call_tool() -> i32 {
    let doc = input();
    match string_member(&doc, "name").as_deref() {
        Some("greet") => {
            let args = doc.find("\"arguments\"").map(|i| &doc[i..]).unwrap_or("");
            match string_member(args, "name") {
                Some(name) => text_result(&format!("Hello, {}!", name)),
                None => output(r#"{"content":[{"type":"text","text":"greet: name is required"}],"isError":true}"#),
            }
        }
        Some("now") => {
            let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            text_result(&year(secs).to_string())
        }
        Some(other) => output(&format!(r#"{{"content":[{{"type":"text","text":{}}}],"isError":true}}"#, quote(&format!("unknown tool {}", other)))),
        None => fail("call_tool: no request name"),
    }
}

/// The Gregorian year of a Unix time.
fn year(secs: u64) -> i64 {
    let days = (secs / 86400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm), year only.
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + if m <= 2 { 1 } else { 0 }
}

#[no_mangle]
pub extern "C" fn list_prompts() -> i32 {
    output(r#"{"prompts":[{"name":"review","description":"Asks for a code review.","arguments":[{"name":"language","description":"The code's language.","required":true}]}]}"#)
}

#[no_mangle]
pub extern "C" fn get_prompt() -> i32 {
    let doc = input();
    if string_member(&doc, "name").as_deref() != Some("review") {
        return fail("no such prompt");
    }
    let lang = string_member(&doc, "language").unwrap_or_default();
    output(&format!(
        r#"{{"description":"A code review.","messages":[{{"role":"user","content":{{"type":"text","text":{}}}}}]}}"#,
        quote(&format!("Review this {} code.", lang))
    ))
}

#[no_mangle]
pub extern "C" fn list_resources() -> i32 {
    output(r#"{"resources":[{"uri":"memo://readme","name":"readme","description":"The plugin's readme.","mimeType":"text/plain"}]}"#)
}

#[no_mangle]
pub extern "C" fn list_resource_templates() -> i32 {
    output(r#"{"resourceTemplates":[{"uriTemplate":"memo://{name}","name":"memo","description":"A memo by name.","mimeType":"text/plain"}]}"#)
}

#[no_mangle]
pub extern "C" fn read_resource() -> i32 {
    let doc = input();
    let uri = match string_member(&doc, "uri") {
        Some(u) => u,
        None => return fail("read_resource: no uri"),
    };
    match uri.strip_prefix("memo://") {
        Some(name) => output(&format!(
            r#"{{"contents":[{{"uri":{},"mimeType":"text/plain","text":{}}}]}}"#,
            quote(&uri),
            quote(&format!("memo {}", name))
        )),
        None => fail(&format!("no resource {}", uri)),
    }
}

#[no_mangle]
pub extern "C" fn complete() -> i32 {
    let doc = input();
    let prefix = string_member(&doc, "value").unwrap_or_default();
    let values: Vec<String> = ["go", "rust", "python"].iter().filter(|l| l.starts_with(&prefix)).map(|l| quote(l)).collect();
    output(&format!(r#"{{"completion":{{"values":[{}],"total":{},"hasMore":false}}}}"#, values.join(","), values.len()))
}
