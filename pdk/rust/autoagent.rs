//! autoagent PDK for Rust: one file, std only (no crates), so it builds with
//! Debian's `rustc` and `libstd-rust-dev-wasm32` and nothing from a registry.
//!
//! Include it as a module and export `describe` and `call`:
//!
//! ```ignore
//! #[path = "autoagent.rs"]
//! mod autoagent;
//! use autoagent::{Arg, Call};
//!
//! #[no_mangle]
//! pub extern "C" fn describe() -> i32 { autoagent::describe(DESCRIBE) }
//!
//! #[no_mangle]
//! pub extern "C" fn call() -> i32 {
//!     autoagent::serve("shout", |c: &Call| {
//!         let mut text = None;
//!         for a in c.args()? {
//!             match a.key.as_str() {
//!                 "text" => text = Some(a.string()?),
//!                 _ => return Err(a.unknown()),
//!             }
//!         }
//!         let text = text.ok_or_else(|| autoagent::missing("text"))?;
//!         Ok(autoagent::Output::Text(text.to_uppercase()))
//!     })
//! }
//! ```
//!
//! Build: `rustc --target wasm32-wasi --crate-type cdylib -C opt-level=s
//! -C strip=symbols -o tool.wasm tool.rs` (Debian's rustc at /usr/bin/rustc;
//! newer toolchains call the target wasm32-wasip1), or `autoagent tools
//! build tool.rs`. The complete example is pdk/conformance/rust/word_count.rs.
//!
//! Errors a tool returns become results with "isError": true, worded as in
//! every other PDK (pdk/conformance/SPEC.md).
#![allow(dead_code)]

// ---- Extism kernel: blocks of host memory named by u64 offsets ----

#[link(wasm_import_module = "extism:host/env")]
extern "C" {
    fn input_length() -> u64;
    fn input_load_u8(i: u64) -> u32;
    fn input_load_u64(i: u64) -> u64;
    fn length(b: u64) -> u64;
    fn alloc(n: u64) -> u64;
    fn free(b: u64);
    fn output_set(b: u64, n: u64);
    fn load_u8(b: u64) -> u32;
    fn load_u64(b: u64) -> u64;
    fn store_u8(b: u64, v: u32);
    fn store_u64(b: u64, v: u64);
    fn config_get(key: u64) -> u64;
    fn http_request(req: u64, body: u64) -> u64;
    fn http_status_code() -> i32;
    fn log_info(msg: u64);
    fn log_warn(msg: u64);
    fn log_error(msg: u64);
}

#[link(wasm_import_module = "extism:host/user")]
extern "C" {
    fn kv_get(ns: u64, key: u64) -> u64;
    fn kv_set(ns: u64, key: u64, value: u64);
    fn kv_delete(ns: u64, key: u64);
    #[link_name = "kv_keys"]
    fn kv_list(ns: u64, prefix: u64) -> u64;
}

fn block_write(data: &[u8]) -> u64 {
    unsafe {
        let b = alloc(data.len() as u64);
        let mut chunks = data.chunks_exact(8);
        let mut i = 0u64;
        for c in &mut chunks {
            store_u64(b + i, u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
            i += 8;
        }
        for &v in chunks.remainder() {
            store_u8(b + i, v as u32);
            i += 1;
        }
        b
    }
}

fn block_take(b: u64) -> Vec<u8> {
    unsafe {
        let n = length(b) as usize;
        let mut out = Vec::with_capacity(n);
        let mut i = 0;
        while i + 8 <= n {
            out.extend_from_slice(&load_u64(b + i as u64).to_le_bytes());
            i += 8;
        }
        while i < n {
            out.push(load_u8(b + i as u64) as u8);
            i += 1;
        }
        free(b);
        out
    }
}

fn read_input() -> Vec<u8> {
    unsafe {
        let n = input_length() as usize;
        let mut out = Vec::with_capacity(n);
        let mut i = 0;
        while i + 8 <= n {
            out.extend_from_slice(&input_load_u64(i as u64).to_le_bytes());
            i += 8;
        }
        while i < n {
            out.push(input_load_u8(i as u64) as u8);
            i += 1;
        }
        out
    }
}

fn set_output(b: &[u8]) {
    unsafe { output_set(block_write(b), b.len() as u64) }
}

// ---- JSON ----

const MAX_DEPTH: usize = 10000; // as Go's encoding/json

fn ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

fn hexval(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

/// Index after the string starting at i, or None when it is not valid.
fn scan_string(s: &[u8], i: usize) -> Option<usize> {
    let mut i = i + 1;
    while i < s.len() {
        match s[i] {
            b'"' => return Some(i + 1),
            c if c < 0x20 => return None,
            b'\\' => {
                i += 1;
                match s.get(i)? {
                    b'u' => {
                        for k in 1..=4 {
                            hexval(*s.get(i + k)?)?;
                        }
                        i += 4;
                    }
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    _ => return None,
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn digits(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn scan_number(s: &[u8], mut i: usize) -> Option<usize> {
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(s, i),
        _ => return None,
    }
    if s.get(i) == Some(&b'.') {
        let j = digits(s, i + 1);
        if j == i + 1 {
            return None;
        }
        i = j;
    }
    if matches!(s.get(i), Some(b'e') | Some(b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+') | Some(b'-')) {
            i += 1;
        }
        let j = digits(s, i);
        if j == i {
            return None;
        }
        i = j;
    }
    Some(i)
}

/// Reports whether s is exactly one JSON document (RFC 8259) with optional
/// surrounding whitespace. Iterative, so nesting cannot exhaust the stack.
pub fn json_valid(s: &[u8]) -> bool {
    let mut stack: Vec<u8> = Vec::new();
    let mut i = ws(s, 0);
    'value: loop {
        let c = match s.get(i) {
            Some(c) => *c,
            None => return false,
        };
        let mut want_key = false;
        match c {
            b'{' | b'[' => {
                if stack.len() == MAX_DEPTH {
                    return false; // an empty one counts too, as in Go
                }
                i = ws(s, i + 1);
                if s.get(i) == Some(if c == b'{' { &b'}' } else { &b']' }) {
                    i += 1;
                } else {
                    stack.push(c);
                    if c == b'[' {
                        continue 'value;
                    }
                    want_key = true;
                }
            }
            b'"' => match scan_string(s, i) {
                Some(j) => i = j,
                None => return false,
            },
            b't' | b'f' | b'n' => {
                let lit: &[u8] = if c == b't' { b"true" } else if c == b'f' { b"false" } else { b"null" };
                if !s[i..].starts_with(lit) {
                    return false;
                }
                i += lit.len();
            }
            _ => match scan_number(s, i) {
                Some(j) => i = j,
                None => return false,
            },
        }
        loop {
            if want_key {
                i = match (s.get(i), scan_string(s, i)) {
                    (Some(b'"'), Some(j)) => ws(s, j),
                    _ => return false,
                };
                if s.get(i) != Some(&b':') {
                    return false;
                }
                i = ws(s, i + 1);
                continue 'value;
            }
            i = ws(s, i);
            let top = match stack.last() {
                None => return i == s.len(),
                Some(t) => *t,
            };
            match s.get(i) {
                Some(b',') => {
                    i = ws(s, i + 1);
                    if top == b'[' {
                        continue 'value;
                    }
                    want_key = true;
                }
                Some(&c) if c == if top == b'{' { b'}' } else { b']' } => {
                    stack.pop();
                    i += 1;
                }
                _ => return false,
            }
        }
    }
}

/// Index after the value at i of a document already known to be valid.
fn skip(s: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    loop {
        match s[i] {
            b'"' => i = scan_string(s, i).unwrap_or(s.len()),
            b'{' | b'[' => {
                depth += 1;
                i += 1
            }
            b'}' | b']' => {
                depth -= 1;
                i += 1
            }
            b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                while i < s.len() && !matches!(s[i], b',' | b':' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    i += 1;
                }
            }
        }
        if depth == 0 {
            return i;
        }
    }
}

/// The JSON type of the value at i, named as the error messages name it.
fn json_type(s: &[u8], i: usize) -> &'static str {
    match s[i] {
        b'{' => "object",
        b'[' => "array",
        b'"' => "string",
        b't' | b'f' => "boolean",
        b'n' => "null",
        _ => "number",
    }
}

/// Decodes the code point at the start of p as Go's utf8.DecodeRune: the
/// code point and its length, or (U+FFFD, 1) for a byte that does not
/// start a valid sequence.
pub fn utf8_decode(p: &[u8]) -> (u32, usize) {
    let c = p[0];
    if c < 0x80 {
        return (c as u32, 1);
    }
    let (len, lo, hi) = match c {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xE1..=0xEF => (3, 0x80, 0xBF),
        0xF0 => (4, 0x90, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        _ => return (0xFFFD, 1),
    };
    if p.len() < len || p[1] < lo || p[1] > hi || p[2..len].iter().any(|&b| !(0x80..=0xBF).contains(&b)) {
        return (0xFFFD, 1);
    }
    let mut v = (c as u32) & if len == 2 { 0x1F } else if len == 3 { 0x0F } else { 0x07 };
    for &b in &p[1..len] {
        v = v << 6 | (b as u32 & 0x3F);
    }
    (v, len)
}

fn u4(p: &[u8]) -> u32 {
    p[..4].iter().fold(0, |v, &c| v << 4 | hexval(c).unwrap_or(0))
}

fn push_rune(out: &mut Vec<u8>, r: u32) {
    let ch = char::from_u32(r).unwrap_or('\u{FFFD}');
    let mut tmp = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
}

/// Decodes the JSON string at i of a valid document, following SPEC.md
/// rule 4: unpaired surrogates and invalid bytes become U+FFFD, so the
/// result is always valid UTF-8.
fn decode(s: &[u8], i: usize) -> String {
    let end = scan_string(s, i).unwrap_or(s.len()) - 1;
    let mut out = Vec::with_capacity(end - i);
    let mut i = i + 1;
    while i < end {
        let c = s[i];
        if c == b'\\' {
            let e = s[i + 1];
            i += 2;
            let r = match e {
                b'b' => 8,
                b'f' => 12,
                b'n' => 10,
                b'r' => 13,
                b't' => 9,
                b'u' => {
                    let mut r = u4(&s[i..]);
                    i += 4;
                    if (0xD800..=0xDFFF).contains(&r) {
                        let low = if r < 0xDC00 && i + 6 <= end && s[i] == b'\\' && s[i + 1] == b'u' {
                            Some(u4(&s[i + 2..]))
                        } else {
                            None
                        };
                        match low {
                            Some(r2) if (0xDC00..=0xDFFF).contains(&r2) => {
                                r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                                i += 6;
                            }
                            _ => r = 0xFFFD,
                        }
                    }
                    r
                }
                other => other as u32,
            };
            push_rune(&mut out, r);
        } else if c < 0x80 {
            out.push(c);
            i += 1;
        } else {
            let (r, n) = utf8_decode(&s[i..end]);
            if r == 0xFFFD && n == 1 {
                push_rune(&mut out, r);
            } else {
                out.extend_from_slice(&s[i..i + n]);
            }
            i += n;
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Index of the value of the last member named key of the object at i.
fn member(s: &[u8], i: usize, key: &str) -> Option<usize> {
    let mut found = None;
    let mut i = ws(s, i + 1);
    while s[i] != b'}' {
        let k = decode(s, i);
        i = ws(s, scan_string(s, i).unwrap_or(s.len()));
        i = ws(s, i + 1);
        if k == key {
            found = Some(i);
        }
        i = ws(s, skip(s, i));
        if s[i] == b',' {
            i = ws(s, i + 1);
        }
    }
    found
}

/// Writes s as a JSON string, escaped as Go's encoding/json does with HTML
/// escaping off (SPEC.md rule 8).
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---- calls ----

/// A call in progress: the tool it names and its arguments.
pub struct Call {
    input: Vec<u8>,
    /// The tool name, decoded.
    pub name: String,
    args: Option<usize>,
}

/// One member of the arguments object, in document order.
pub struct Arg<'a> {
    call: &'a Call,
    /// The decoded key.
    pub key: String,
    value: usize,
}

/// What a tool returns on success.
pub enum Output {
    /// Plain text for the model.
    Text(String),
    /// A JSON object, sent as text and as structured content.
    Json(String),
}

/// A tool failure: a result with "isError": true that the model reads.
pub struct ToolError(pub String);

impl Call {
    /// The members of the arguments object in document order. Absent or null
    /// arguments are the empty object; anything else that is not an object
    /// is an error.
    pub fn args(&self) -> Result<Vec<Arg<'_>>, ToolError> {
        let mut out = Vec::new();
        let start = match self.args {
            None => return Ok(out),
            Some(i) => i,
        };
        let s = &self.input;
        if s[start] != b'{' {
            return Err(ToolError(format!("invalid arguments: want object, got {}", json_type(s, start))));
        }
        let mut i = ws(s, start + 1);
        while s[i] != b'}' {
            let key = decode(s, i);
            i = ws(s, scan_string(s, i).unwrap_or(s.len()));
            let value = ws(s, i + 1);
            out.push(Arg { call: self, key, value });
            i = ws(s, skip(s, value));
            if s[i] == b',' {
                i = ws(s, i + 1);
            }
        }
        Ok(out)
    }
}

impl<'a> Arg<'a> {
    /// The JSON type of the value: object, array, string, number, boolean, null.
    pub fn json_type(&self) -> &'static str {
        json_type(&self.call.input, self.value)
    }

    /// The value as a string, or the type error.
    pub fn string(&self) -> Result<String, ToolError> {
        if self.json_type() != "string" {
            return Err(self.wrong_type("string"));
        }
        Ok(decode(&self.call.input, self.value))
    }

    /// The raw JSON text of the value.
    pub fn raw(&self) -> &'a [u8] {
        &self.call.input[self.value..skip(&self.call.input, self.value)]
    }

    /// The error for a member the schema does not have.
    pub fn unknown(&self) -> ToolError {
        ToolError(format!("invalid arguments: {}: unknown property (not in the schema)", self.key))
    }

    /// The error for a value of the wrong type.
    pub fn wrong_type(&self, want: &str) -> ToolError {
        ToolError(format!("invalid arguments: {}: want {}, got {}", self.key, want, self.json_type()))
    }
}

/// The error for a required property that is absent.
pub fn missing(property: &str) -> ToolError {
    ToolError(format!("invalid arguments: {}: required property is missing", property))
}

/// Sets the describe document; return its value from the `describe` export.
pub fn describe(doc: &str) -> i32 {
    set_output(doc.as_bytes());
    0
}

fn result(text: &str, structured: Option<&str>, is_error: bool) -> String {
    let mut out = String::from("{\"content\":[{\"type\":\"text\",\"text\":");
    write_json_string(&mut out, text);
    out.push_str("}]");
    if let Some(s) = structured {
        out.push_str(",\"structuredContent\":");
        out.push_str(s);
    }
    if is_error {
        out.push_str(",\"isError\":true");
    }
    out.push('}');
    out
}

/// Reads the call, runs the tool named `tool` with it and sets the result;
/// return its value from the `call` export. For a module of several tools,
/// pass their names separated by ", " and match `Call::name` in the closure.
pub fn serve<F>(tool: &str, f: F) -> i32
where
    F: FnOnce(&Call) -> Result<Output, ToolError>,
{
    let input = read_input();
    let out = match parse_call(input) {
        None => result("invalid call: input must be {\"params\":{\"name\":\"<tool>\",\"arguments\":{...}}}", None, true),
        Some(c) if !tool.split(", ").any(|t| t == c.name) => {
            result(&format!("unknown tool \"{}\" (this module offers: {})", c.name, tool), None, true)
        }
        Some(c) => match f(&c) {
            Ok(Output::Text(t)) => result(&t, None, false),
            Ok(Output::Json(j)) => result(&j, Some(&j), false),
            Err(ToolError(m)) => result(&m, None, true),
        },
    };
    set_output(out.as_bytes());
    0
}

fn parse_call(input: Vec<u8>) -> Option<Call> {
    if !json_valid(&input) {
        return None;
    }
    let s = &input;
    let top = ws(s, 0);
    if s[top] != b'{' {
        return None;
    }
    let params = member(s, top, "params").filter(|&p| s[p] == b'{')?;
    let name = member(s, params, "name").filter(|&n| s[n] == b'"')?;
    let args = member(s, params, "arguments").filter(|&a| s[a] != b'n');
    let name = decode(s, name);
    Some(Call { input, name, args })
}

// ---- capabilities ----

/// The config value for key (granted env:NAME variables arrive here too).
pub fn config(key: &str) -> Option<String> {
    unsafe {
        let k = block_write(key.as_bytes());
        let v = config_get(k);
        free(k);
        if v == 0 {
            None
        } else {
            Some(String::from_utf8_lossy(&block_take(v)).into_owned())
        }
    }
}

/// Logs a message for the operator (never seen by the model).
pub fn log(msg: &str) {
    unsafe { log_info(block_write(msg.as_bytes())) }
}

/// Sends an HTTP request through the host; needs a net: grant for the
/// URL's host (a refused request ends the call with the host's error).
/// Returns the status and the body.
pub fn http(method: &str, url: &str, body: Option<&[u8]>) -> (i32, Vec<u8>) {
    let mut req = String::from("{\"url\":");
    write_json_string(&mut req, url);
    req.push_str(",\"method\":");
    write_json_string(&mut req, method);
    req.push('}');
    unsafe {
        let b = body.map(block_write).unwrap_or(0);
        let r = http_request(block_write(req.as_bytes()), b);
        let status = http_status_code();
        (status, if r == 0 { Vec::new() } else { block_take(r) })
    }
}

// Key-value storage (needs a kv: grant; host/ABI.md 1.4). `ns` names the
// namespace (kv:NAME grants NAME); None or Some("") names the module's only
// one. A namespace that was not granted ends the call with the host's error.

fn ns_block(ns: Option<&str>) -> u64 {
    match ns {
        Some(n) if !n.is_empty() => block_write(n.as_bytes()),
        _ => 0,
    }
}

/// Reads key from the kv: namespace ns (None: the module's only namespace);
/// None when the key is absent.
pub fn kv_read(ns: Option<&str>, key: &str) -> Option<Vec<u8>> {
    unsafe {
        let (n, k) = (ns_block(ns), block_write(key.as_bytes()));
        let v = kv_get(n, k);
        free(n);
        free(k);
        if v == 0 {
            None
        } else {
            Some(block_take(v))
        }
    }
}

/// Stores value under key in the kv: namespace ns, replacing any previous
/// value.
pub fn kv_write(ns: Option<&str>, key: &str, value: &[u8]) {
    unsafe {
        let (n, k, v) = (ns_block(ns), block_write(key.as_bytes()), block_write(value));
        kv_set(n, k, v);
        free(n);
        free(k);
        free(v);
    }
}

/// Removes key from the kv: namespace ns; removing a missing key is not an
/// error.
pub fn kv_remove(ns: Option<&str>, key: &str) {
    unsafe {
        let (n, k) = (ns_block(ns), block_write(key.as_bytes()));
        kv_delete(n, k);
        free(n);
        free(k);
    }
}

/// Lists the keys of the kv: namespace ns that start with prefix ("": every
/// key), in byte order, at most 10000 of them. Keys that are not valid UTF-8
/// arrive with U+FFFD in place of the invalid bytes, as the host encodes the
/// list in JSON. The error (a result the model reads, so `?` passes it on)
/// is only for a list that is not a JSON array of strings, which the
/// autoagent host never sends.
pub fn kv_keys(ns: Option<&str>, prefix: &str) -> Result<Vec<String>, ToolError> {
    let doc = unsafe {
        let n = ns_block(ns);
        let p = if prefix.is_empty() { 0 } else { block_write(prefix.as_bytes()) };
        let b = kv_list(n, p);
        free(n);
        free(p);
        if b == 0 {
            return Ok(Vec::new()); // an empty block: no keys
        }
        block_take(b)
    };
    let malformed = || ToolError(String::from("the host sent a malformed key list"));
    let s = &doc[..];
    if !json_valid(s) {
        return Err(malformed());
    }
    let mut i = ws(s, 0);
    if s[i] != b'[' {
        return Err(malformed());
    }
    let mut keys = Vec::new();
    i = ws(s, i + 1);
    while s[i] != b']' {
        if s[i] != b'"' {
            return Err(malformed());
        }
        keys.push(decode(s, i));
        i = ws(s, scan_string(s, i).unwrap_or(s.len()));
        if s[i] == b',' {
            i = ws(s, i + 1);
        }
    }
    Ok(keys)
}
