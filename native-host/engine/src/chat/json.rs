//! `tojson` as transformers defines it: Python's `json.dumps(x, ensure_ascii=False, indent=…,
//! sort_keys=…)`. minijinja's own `tojson` escapes `<`, `>`, `&` and `'` for HTML and writes no
//! spaces after separators; templates that embed tool schemas would then produce a different
//! prompt from the one the model was trained on.

use minijinja::value::Kwargs;
use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, Value};

pub(super) fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let mut out = String::new();
    write(&value, indent, sort_keys.unwrap_or(false), 0, &mut out)?;
    if ensure_ascii.unwrap_or(false) {
        out = escape_non_ascii(&out);
    }
    Ok(Value::from(out))
}

/// Walks the value itself (not a serde_json::Value, whose maps sort their keys) so that maps
/// keep their insertion order, as Python dicts do.
fn write(
    v: &Value,
    indent: Option<usize>,
    sort: bool,
    level: usize,
    out: &mut String,
) -> Result<(), Error> {
    let newline = |out: &mut String, level: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', n * level));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match v.kind() {
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = v.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                write(item, indent, sort, level + 1, out)?;
            }
            newline(out, level);
            out.push(']');
        }
        ValueKind::Map => {
            let mut keys: Vec<Value> = v.try_iter()?.collect();
            if keys.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            if sort {
                keys.sort();
            }
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                let name = key.as_str().map_or_else(|| key.to_string(), str::to_string);
                out.push_str(&scalar(&Value::from(name))?);
                out.push_str(": ");
                write(&v.get_item(key)?, indent, sort, level + 1, out)?;
            }
            newline(out, level);
            out.push('}');
        }
        _ => out.push_str(&scalar(v)?),
    }
    Ok(())
}

fn scalar(v: &Value) -> Result<String, Error> {
    serde_json::to_string(v)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))
}

/// `ensure_ascii=True`: non-ASCII as `\uXXXX` (surrogate pairs above the BMP), like Python.
fn escape_non_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}
