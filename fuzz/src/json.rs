//! A few lines of JSON writing for the corpus export (no serde in the fuzz crate).
//!
//! Texts are written as the hex of their surrogatepass UTF-8 bytes: JSON's `\ud800\udc00`
//! would come back from Python's `json` as one astral character, not two surrogates.

use std::fmt::Write;

use memprompt::error::RenderError;

use crate::gen::{FInt, Text};

#[derive(Debug, Clone)]
pub enum Json {
    Null,
    Bool(bool),
    Num(i64),
    /// A literal JSON number (a big int's digits).
    Raw(String),
    Str(String),
    List(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    pub fn hex(bytes: &[u8]) -> Json {
        let mut s = String::with_capacity(bytes.len() * 2);
        for b in bytes {
            let _ = write!(s, "{b:02x}");
        }
        Json::Str(s)
    }

    pub fn text(t: &Text) -> Json {
        Json::hex(&t.0)
    }

    pub fn opt_text(t: &Option<Text>) -> Json {
        t.as_ref().map_or(Json::Null, Json::text)
    }

    pub fn int(n: &FInt) -> Json {
        match n {
            FInt::Small(v) => Json::Num(*v),
            FInt::Big(digits) => Json::Raw(String::from_utf8_lossy(digits).into_owned()),
        }
    }

    /// The outcome of a render: `{"ok": fingerprint, "length": bytes}` (the XXH3-128 of the
    /// text, in hex: outputs can be megabytes), `{"error": kind}`, or `null` (not comparable).
    pub fn outcome(result: Option<Result<&[u8], &RenderError>>) -> Json {
        match result {
            None => Json::Null,
            Some(Ok(bytes)) => Json::Obj(vec![
                ("ok", Json::Str(format!("{:032x}", memprompt::fingerprint::fingerprint(bytes)))),
                ("length", Json::Num(bytes.len() as i64)),
            ]),
            Some(Err(e)) => {
                let kind = match e {
                    RenderError::Type(_) => "TypeError",
                    RenderError::Attribute(_) => "AttributeError",
                    RenderError::Value(_) => "ValueError",
                    RenderError::Overflow(_) => "OverflowError",
                    RenderError::NotImplemented(_) => "NotImplementedError",
                };
                Json::Obj(vec![("error", Json::Str(kind.into()))])
            }
        }
    }

    pub fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => {
                let _ = write!(out, "{n}");
            }
            Json::Raw(s) => out.push_str(s),
            Json::Str(s) => {
                // Only hex, names and file names are written here: escape what JSON requires.
                out.push('"');
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        c if (c as u32) < 0x20 => {
                            let _ = write!(out, "\\u{:04x}", c as u32);
                        }
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            Json::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    Json::Str((*key).into()).write(out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}
